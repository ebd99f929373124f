"""``sessions.store: postgres`` through the real ``hermes`` command line, on a real PostgreSQL server."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import kill_9, wait_until
from tests.sessions.test_sessions_hermes_cli import _one_line_error, _run_json, _script


@pytest.fixture
def on_postgres(home, postgres_url):
    (home / "config.yaml").write_text(f"sessions:\n  store: postgres\n  database_url: {postgres_url}\n")
    return postgres_url


def _messages(url: str, session_id: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM hermes_messages WHERE session_id = %s", (session_id,)).fetchone()[0]


def test_run_list_show_search_resume_title_delete(hermes_sessions, tmp_path, home, on_postgres):
    assert hermes_sessions("sessions", "list").stdout.strip() == "No sessions yet."
    first = _run_json(hermes_sessions, tmp_path, ["Use a trellis for the beans."], prompt="How do I grow beans?")
    sid = first["session_id"]
    assert not (home / "state.db").exists()  # nothing went to SQLite
    assert _messages(on_postgres, sid) == 2

    (row,) = json.loads(hermes_sessions("sessions", "list", "--json").stdout)
    assert (row["id"], row["end_reason"], row["platform"]) == (sid, "completed", "run")
    assert row["preview"] == "How do I grow beans?"
    assert json.loads(hermes_sessions("sessions", "show", sid[:-3], "--json").stdout)["messages"] == first["messages"]
    hits = json.loads(hermes_sessions("sessions", "search", "trellis", "--json").stdout)
    assert [(h["session_id"], h["role"]) for h in hits] == [(sid, "assistant")]

    again = _run_json(hermes_sessions, tmp_path, ["Every two days."], "--resume", sid[:-2], prompt="How often?")
    assert again["session_id"] == sid and len(again["messages"]) == 4
    assert hermes_sessions("sessions", "title", sid, "Beans").returncode == 0
    assert "Beans" in hermes_sessions("sessions", "list").stdout
    assert hermes_sessions("sessions", "repair").stdout.strip().endswith("ok (integrity check passed); nothing to do.")
    assert hermes_sessions("sessions", "delete", sid, "--yes").returncode == 0
    assert hermes_sessions("sessions", "list").stdout.strip() == "No sessions yet."
    assert _messages(on_postgres, sid) == 0
    # resumed, a session is offered the toolsets it was started with
    touch = [{"tool_calls": [["terminal", {"command": "touch ran.txt"}]]}, "ok"]
    started = _run_json(hermes_sessions, tmp_path, touch, "-t", "todo", prompt="go")
    resumed = _run_json(hermes_sessions, tmp_path, touch, "--resume", started["session_id"], prompt="again")
    assert "unknown tool 'terminal'" in json.loads(resumed["messages"][-2]["content"])["error"]


def test_killed_mid_tool_the_call_is_stored_and_a_second_writer_is_refused(hermes_sessions, tmp_path, on_postgres):
    steps = [{"content": f"step {i}", "tool_calls": [["slow", {"step": i, "seconds": 0.03 if i < 2 else 30}]]}
             for i in range(4)]
    script = _script(tmp_path, "long.json", steps + ["finished"])
    proc = hermes_sessions.start("run", "--api-mode", "scripted", "--base-url", script, "--json", "-t", "slow",
                                 "do a long job")
    found: list = []

    def third_call_stored() -> bool:  # the user message, two steps, the third call
        listed = json.loads(hermes_sessions("sessions", "list", "--json").stdout or "[]")
        found[:] = [listed[0]["id"]] if listed else []
        return bool(found) and _messages(on_postgres, found[0]) >= 1 + 2 * 2 + 1

    try:
        wait_until(third_call_stored, proc, every=0.05)
        (sid,) = found
        # it writes the session: another process may not
        refused = hermes_sessions("run", "--api-mode", "scripted", "--base-url", script, "--resume", sid, "x")
        _one_line_error(refused, f"session {sid} is being written by another hermes process", f"pid {proc.pid}")
    finally:
        kill_9(proc)
    history = json.loads(hermes_sessions("sessions", "show", sid, "--json").stdout)["messages"]
    assert history[0] == {"role": "user", "content": "do a long job"} and len(history) == 6
    # the third call was stored before it ran
    assert [m["content"] for m in history[1::2]] == ["step 0", "step 1", "step 2"]
    assert [json.loads(m["content"])["step"] for m in history[2::2]] == [0, 1]
    # the killed process's lock went with its connection: the session resumes, the model told of the lost result
    resumed = _run_json(hermes_sessions, tmp_path, ["Picking up."], "--resume", sid, prompt="continue")
    assert resumed["messages"][: len(history)] == history
    assert resumed["messages"][len(history)]["tool_call_id"] == history[-1]["tool_calls"][0]["id"]


def test_processes_write_different_sessions_at_once(hermes_sessions, tmp_path, on_postgres):
    steps = [{"tool_calls": [["slow", {"step": i, "seconds": 0.01}]]} for i in range(15)] + ["done"]
    procs = [subprocess.Popen([*hermes_sessions.argv, "run", "--api-mode", "scripted", "--base-url",
                               _script(tmp_path, f"s{n}.json", steps), "--json", "-t", "slow", f"job {n}"],
                              env=hermes_sessions.env, cwd=hermes_sessions.cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(4)]
    results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    for result in results:
        stored = json.loads(hermes_sessions("sessions", "show", result["session_id"], "--json").stdout)["messages"]
        assert stored == result["messages"] and len(stored) == 1 + 2 * 15 + 1


@pytest.mark.parametrize("sessions, said", [
    ("{store: postgress}",
     "sessions.store is 'postgress', which no enabled plugin registers (did you mean 'postgres'?)"),
    ("{store: postgres}", "sessions.store is postgres: set sessions.database_url to postgresql://"),
    ("{store: postgres, database_url: 'postgresql://u:hunter2@127.0.0.1:1/x'}",
     "cannot reach the session database postgresql://u@127.0.0.1:1/x: connection failed"),
    ("{store: postgres, database_url: 'postgresql://u:${HERMES_TEST_UNSET}@h/x'}",
     "sessions.database_url names ${HERMES_TEST_UNSET}, which is not set"),
])
def test_a_store_that_cannot_be_used_is_one_line(hermes_sessions, tmp_path, home, sessions, said):
    (home / "config.yaml").write_text(f"sessions: {sessions}\n")
    script = _script(tmp_path, "s.json", ["hi"])
    run = hermes_sessions("run", "--api-mode", "scripted", "--base-url", script, "hello")
    _one_line_error(run, f"hermes: error: the session store failed: {said}", "or pass --no-save")  # not "StoreError:"
    assert "hunter2" not in run.stderr and run.stdout == ""  # no model call was made, no secret shown
    _one_line_error(hermes_sessions("sessions", "list"), said)
    assert hermes_sessions("run", "--api-mode", "scripted", "--base-url", script, "--no-save", "hello").returncode == 0


def test_prune_on_postgres_deletes_old_sessions_and_their_messages(hermes_sessions, tmp_path, on_postgres):
    import time

    import psycopg

    ids = [_run_json(hermes_sessions, tmp_path, ["ok"], prompt=f"q{i}")["session_id"] for i in range(3)]
    with psycopg.connect(on_postgres) as conn:
        conn.execute("UPDATE hermes_sessions SET updated_at = %s WHERE id = ANY(%s)", (time.time() - 90 * 86400, ids[:2]))
    for since, count in (("30d", 1), ("120d", 3)):  # sessions stats pages through the server's sessions too
        used = json.loads(hermes_sessions("sessions", "stats", "--since", since, "--json").stdout)
        assert used["sessions"] == count and used["api_calls"] == count
    res = hermes_sessions("sessions", "prune", "--older-than", "30d", "-y", "--json")
    assert res.returncode == 0, res.stderr
    assert sorted(json.loads(res.stdout)["deleted"]) == sorted(ids[:2])  # the same updated_at: any order
    assert [r["id"] for r in json.loads(hermes_sessions("sessions", "list", "--json").stdout)] == ids[2:]
    assert _messages(on_postgres, ids[0]) == 0 and _messages(on_postgres, ids[2]) == 2
