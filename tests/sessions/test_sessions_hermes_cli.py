"""The session store through the real ``hermes`` command line, as subprocesses."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)


def _script(tmp_path, name, steps):
    path = tmp_path / name
    path.write_text(json.dumps(steps), encoding="utf-8")
    return str(path)


def _run_json(hermes_sessions, tmp_path, steps, *args, prompt="hello"):
    script = _script(tmp_path, f"script{random.random()}.json", steps)
    res = hermes_sessions("run", "--api-mode", "scripted", "--base-url", script, "--json", *args, prompt)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _one_line_error(res, *fragments):
    assert res.returncode == 1, (res.stdout, res.stderr)
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err


def test_run_store_list_show_search_resume_delete(hermes_sessions, tmp_path, home):
    assert hermes_sessions("sessions", "list").stdout.strip() == "No sessions yet."
    first = _run_json(hermes_sessions, tmp_path, ["Use a trellis for the beans."], prompt="How do I grow climbing beans?")
    sid = first["session_id"]

    listed = json.loads(hermes_sessions("sessions", "list", "--json").stdout)
    assert [r["id"] for r in listed] == [sid]
    assert listed[0]["end_reason"] == "completed" and listed[0]["platform"] == "run"
    shown = json.loads(hermes_sessions("sessions", "show", sid, "--json").stdout)
    assert shown["messages"] == first["messages"]
    text = hermes_sessions("sessions", "show", sid).stdout
    assert "[0] user: How do I grow climbing beans?" in text and "[1] assistant: Use a trellis" in text
    hits = json.loads(hermes_sessions("sessions", "search", "trellis", "--json").stdout)
    assert [(h["session_id"], h["role"]) for h in hits] == [(sid, "assistant")]
    assert hermes_sessions("sessions", "search", '"beans AND (').returncode == 0

    second = _run_json(hermes_sessions, tmp_path, ["Every two days."], "--resume", sid, prompt="How often to water?")
    assert second["session_id"] == sid
    assert [m["content"] for m in second["messages"]] == [
        "How do I grow climbing beans?", "Use a trellis for the beans.", "How often to water?", "Every two days."]
    assert json.loads(hermes_sessions("sessions", "show", sid, "--json").stdout)["messages"] == second["messages"]

    # a unique prefix of the id resumes the same session (as `sessions show` accepts)
    third = _run_json(hermes_sessions, tmp_path, ["In the morning."], "--resume", sid[:-2], prompt="When?")
    assert third["session_id"] == sid and len(third["messages"]) == 6

    deleted = hermes_sessions("sessions", "delete", sid, "--yes")
    assert deleted.returncode == 0 and sid in deleted.stdout
    assert hermes_sessions("sessions", "list").stdout.strip() == "No sessions yet."


def test_unknown_ids_are_one_clear_line(hermes_sessions, tmp_path):
    for args in (("sessions", "show", "nope"), ("sessions", "delete", "nope", "--yes"),
                 ("sessions", "title", "nope", "T")):
        _one_line_error(hermes_sessions(*args), "no session", "nope")
    script = _script(tmp_path, "s.json", ["hi"])
    _one_line_error(hermes_sessions("run", "--api-mode", "scripted", "--base-url", script, "--resume", "nope", "x"),
                    "no session 'nope'")
    _run_json(hermes_sessions, tmp_path, ["a"])
    _run_json(hermes_sessions, tmp_path, ["b"])
    for command in (["run", "--api-mode", "scripted", "--base-url", script, "--resume", "2", "x"],
                    ["chat", "--api-mode", "scripted", "--base-url", script, "--resume", "2"],
                    ["sessions", "show", "2"], ["sessions", "delete", "2", "--yes"]):  # a prefix of both sessions' ids
        _one_line_error(hermes_sessions(*command, input=""), "session id '2' is ambiguous (matches 2")
    _one_line_error(hermes_sessions("sessions", "search", '""'), "empty")


def test_a_session_resumed_by_its_title_goes_on_where_it_went_on(hermes_sessions, tmp_path):
    """hermes-agent resumes a session by its ID or its title: a title names the most recently active session so
    titled (case and spacing aside), followed to its continuation (an undo's here)."""
    garden = _run_json(hermes_sessions, tmp_path, ["Beans need a trellis."], prompt="garden?")["session_id"]
    _run_json(hermes_sessions, tmp_path, ["Other."], prompt="other?")
    assert hermes_sessions("sessions", "title", garden, "Garden plans").returncode == 0
    again = _run_json(hermes_sessions, tmp_path, ["Water them."], "--resume", "garden  PLANS", prompt="and then?")
    assert again["session_id"] == garden
    script = _script(tmp_path, "undo.json", ["taken back"])
    assert hermes_sessions("chat", "--api-mode", "scripted", "--base-url", script, "-r", "Garden plans",
                           input="oops\n/undo\n/exit\n").returncode == 0
    shown = json.loads(hermes_sessions("sessions", "show", "Garden plans", "--json").stdout)["session"]
    assert shown["parent_session_id"] == garden and shown["start_reason"] == "undo"
    _one_line_error(hermes_sessions("run", "--api-mode", "scripted", "--base-url", script, "-r", "Garden", "x"),
                    "no session 'Garden' (`hermes sessions list`: an id, a unique start of one, or a title)")


def test_chat_continue_resumes_the_latest_session(hermes_sessions, tmp_path):
    noted = _script(tmp_path, "noted.json", ["Noted: the password hint is 'blue'."])
    res = hermes_sessions("chat", "--api-mode", "scripted", "--base-url", noted, input="Remember: hint blue\n")
    first = {"session_id": res.stderr.split("resume it with: hermes chat --resume ", 1)[1].split()[0]}
    other = _script(tmp_path, "chat.json", ["You said the hint is blue."])
    res = hermes_sessions("chat", "--continue", "--api-mode", "scripted", "--base-url", other, input="What was the hint?\n")
    assert res.returncode == 0, res.stderr
    assert first["session_id"] in res.stderr
    assert "You said the hint is blue." in res.stdout
    shown = json.loads(hermes_sessions("sessions", "show", first["session_id"], "--json").stdout)
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant", "user", "assistant"]


def test_run_continue_follows_up_the_latest_run_not_a_chat(hermes_sessions, tmp_path):
    """``hermes run -c`` asks a follow-up of the last ``hermes run`` (llm's and hermes-agent's ``-c``)
    with the model it was started with; a chat in between is not it. Before: "no such option"."""
    none = hermes_sessions("run", "-c", "anything")
    _one_line_error(none, "no earlier run to continue (start one with `hermes run`)")
    first = _run_json(hermes_sessions, tmp_path, ["Beans."], "-m", "garden-1", prompt="What grows up a trellis?")
    hermes_sessions("chat", "--api-mode", "scripted", "--base-url", _script(tmp_path, "c.json", ["hi"]), input="hi\n")
    res = hermes_sessions("run", "-c", "--json", "And in shade?")
    assert res.returncode == 0, res.stderr
    second = json.loads(res.stdout)
    assert second["session_id"] == first["session_id"] and second["final_response"] == "Beans."  # its script, again
    assert [m["content"] for m in second["messages"]] == ["What grows up a trellis?", "Beans.", "And in shade?", "Beans."]
    both = hermes_sessions("run", "-c", "--resume", first["session_id"], "x")
    assert both.returncode == 2 and "use either --resume or --continue" in both.stderr
    unsaved = hermes_sessions("run", "--continue", "--no-save", "x")
    assert unsaved.returncode == 2 and "cannot --resume or --continue" in unsaved.stderr


def test_a_resumed_session_goes_on_with_the_model_and_provider_it_was_started_with(hermes_sessions, tmp_path):
    """Started with --api-mode scripted --base-url FILE -m M, resumed with no provider flags at all
    (``run --resume``, the printed ``chat --resume ID``, ``chat --continue``): before, "no model"."""
    script = _script(tmp_path, "garden.json", ["Beans like sun."])
    started = hermes_sessions("chat", "--api-mode", "scripted", "--base-url", script, "-m", "garden-1",
                              input="Where do beans go?\n")
    assert started.returncode == 0, started.stderr
    sid = started.stderr.split("resume it with: hermes chat --resume ", 1)[1].split()[0]
    resumed = hermes_sessions("run", "--resume", sid, "--json", "And peas?")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["final_response"] == "Beans like sun."
    for how in (["--resume", sid], ["--continue"]):
        res = hermes_sessions("chat", *how, input="And carrots?\n")
        assert res.returncode == 0 and "Beans like sun." in res.stdout, res.stderr
    assert len(json.loads(hermes_sessions("sessions", "show", sid, "--json").stdout)["messages"]) == 8
    # a connection flag starts over from the config: the stored provider is not mixed with it
    other = hermes_sessions("run", "--resume", sid, "--api-mode", "chat_completions", "x")
    _one_line_error(other, "model")


def test_a_resumed_session_is_offered_the_toolsets_it_was_started_with(hermes_sessions, tmp_path):
    """Started with ``-t todo``, resumed with no ``-t``: before, every tool (the terminal too); ``-t`` still
    chooses others, and ``-t ""`` (none) is kept as none."""
    script = _script(tmp_path, "touch.json", [{"tool_calls": [["terminal", {"command": "touch ran.txt"}]]}, "done"])
    started = _run_json(hermes_sessions, tmp_path, [{"tool_calls": [["todo", {}]]}, "ok"], "-t", "todo")
    ran = tmp_path / "cwd" / "ran.txt"

    def terminal_answer(*args):
        res = hermes_sessions("run", "--resume", started["session_id"], "--json", *args, "touch it")
        assert res.returncode == 0, res.stderr
        return [json.loads(m["content"]) for m in json.loads(res.stdout)["messages"] if m["role"] == "tool"][-1]

    resumed = terminal_answer("--api-mode", "scripted", "--base-url", script)
    assert "unknown tool 'terminal'" in resumed["error"] and not ran.exists()
    assert "error" not in terminal_answer("--api-mode", "scripted", "--base-url", script, "-t", "terminal")
    assert ran.exists()
    empty = _run_json(hermes_sessions, tmp_path, ["ok"], "-t", "")
    res = hermes_sessions("run", "--resume", empty["session_id"], "--json", "--api-mode", "scripted",
                          "--base-url", script, "touch it")
    [answer] = [json.loads(m["content"]) for m in json.loads(res.stdout)["messages"] if m["role"] == "tool"]
    assert "unknown tool 'terminal'" in answer["error"]


def test_the_stored_start_holds_no_user_or_password_of_a_base_url(home):
    from types import SimpleNamespace

    from plugins.sessions import started_with

    agent = SimpleNamespace(provider_config=SimpleNamespace(
        model="m", provider="openai", api_mode="", base_url="https://ann:s3cret@llm.example/v1", api_key_env="MY_KEY"))
    assert started_with(agent) == {"model": "m", "provider": "openai", "base_url": "https://llm.example/v1",
                                   "api_key_env": "MY_KEY", "cwd": os.getcwd()}
    agent.toolsets = []  # none, kept as none
    assert started_with(agent)["toolsets"] == []


def test_what_a_resume_reads_of_a_stored_start_is_checked():
    from plugins.sessions.base import stored_start

    assert stored_start('{"model": "m", "toolsets": ["safe"], "api_mode": ""}') == {"model": "m", "toolsets": ["safe"]}
    assert stored_start('{"model": 3, "toolsets": "safe"}') == stored_start('{"toolsets": [1]}') == {}
    assert stored_start("[1, 2]") == stored_start("{not json") == stored_start(None) == {}


def test_corrupt_database_through_the_cli(hermes_sessions, tmp_path, home):
    db = home / "state.db"
    db.write_bytes(b"\x00garbage, definitely not SQLite\n" * 64)
    before = db.read_bytes()
    _one_line_error(hermes_sessions("sessions", "list"), str(db), "hermes sessions repair")
    _one_line_error(hermes_sessions("sessions", "search", "x"), str(db))
    assert db.read_bytes() == before
    fixed = hermes_sessions("sessions", "repair", "--yes")
    assert fixed.returncode == 0, fixed.stderr
    (aside,) = home.glob("state.db.corrupt-*")
    assert aside.read_bytes() == before
    assert hermes_sessions("sessions", "list").stdout.strip() == "No sessions yet."
    _run_json(hermes_sessions, tmp_path, ["fresh start"])
    assert len(json.loads(hermes_sessions("sessions", "list", "--json").stdout)) == 1


def _count(db) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0  # not created yet


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_hermes_run_killed_while_a_tool_runs_resumes_knowing_the_call(hermes_sessions, tmp_path, home):
    """kill -9 while the fifth step's tool runs: the four steps before it are
    whole on disk, the fifth call is recorded (it was stored before its handler
    started), and the resumed model reads that no result was recorded."""
    from kernel.messages import MISSING_RESULT

    steps = [{"content": f"step {i}", "tool_calls": [["slow", {"step": i, "seconds": 0.03 if i < 4 else 30}]]}
             for i in range(6)]
    script = _script(tmp_path, "long.json", steps + ["finished"])
    proc = subprocess.Popen([*hermes_sessions.argv, "run", "--api-mode", "scripted", "--base-url", script, "--json",
                             "-t", "slow", "do a long job"], env=hermes_sessions.env, cwd=hermes_sessions.cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while _count(home / "state.db") < 1 + 2 * 4 + 1:  # the user message, four steps and the fifth call
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    (session,) = json.loads(hermes_sessions("sessions", "list", "--json").stdout)
    history = json.loads(hermes_sessions("sessions", "show", session["id"], "--json").stdout)["messages"]
    assert history[0] == {"role": "user", "content": "do a long job"}
    body, dangling = history[1:9], history[9:]
    for i in range(4):
        call, result = body[2 * i], body[2 * i + 1]
        assert call["content"] == f"step {i}" and call["tool_calls"][0]["function"]["name"] == "slow"
        assert result["tool_call_id"] == call["tool_calls"][0]["id"]
        assert json.loads(result["content"])["step"] == i
    (call,) = dangling
    assert call["content"] == "step 4" and json.loads(call["tool_calls"][0]["function"]["arguments"])["step"] == 4

    resumed = _run_json(hermes_sessions, tmp_path, ["Picking up where we left off."], "--resume", session["id"],
                        prompt="continue")
    assert resumed["messages"][: len(history)] == history
    told = resumed["messages"][len(history)]
    assert told["role"] == "tool" and told["tool_call_id"] == call["tool_calls"][0]["id"]
    assert json.loads(told["content"]) == {"error": MISSING_RESULT}
    assert [m["content"] for m in resumed["messages"][len(history) + 1:]] == [
        "continue", "Picking up where we left off."]


def test_chat_slash_title_and_search(hermes_sessions, tmp_path):
    _run_json(hermes_sessions, tmp_path, ["Basil likes sun."], prompt="Where should basil go?")
    script = _script(tmp_path, "chat.json", ["Tomatoes too."])
    res = hermes_sessions("chat", "--api-mode", "scripted", "--base-url", script,
                          input="And tomatoes?\n/title  Herb   garden \n/search basil\n/search \"\n/sessions\n"
                                "/insights 2w\n/quit\n")
    assert res.returncode == 0, res.stderr
    assert "is now titled: Herb garden" in res.stdout
    listed = res.stdout.split("/resume ID (or a unique start of it, or a title) goes on in one")[0].splitlines()[-2:]
    assert listed[0].endswith("msgs  Herb garden  (this one)") and listed[1].endswith("msgs  Where should basil go?")
    assert ": 2 sessions, 2 model calls\ntokens: " in res.stdout and "by platform: cli 1, run 1" in res.stdout
    assert "[basil]" in res.stdout.lower()
    assert "cannot search: the search query is empty" in res.stdout
    rows = json.loads(hermes_sessions("sessions", "list", "--json").stdout)
    assert [r["title"] for r in rows] == ["Herb garden", None]



def test_chat_slash_export_writes_the_chat_as_markdown(hermes_sessions, tmp_path):
    script = _script(tmp_path, "chat.json", ["Basil likes sun."])
    res = hermes_sessions("chat", "--api-mode", "scripted", "--base-url", script,
                          input="/export\nWhere should basil go?\n/export basil.md\n/export basil.md\n/quit\n")
    assert res.returncode == 0, res.stderr
    out = hermes_sessions.cwd / "basil.md"
    assert "nothing to export yet: say something first" in res.stdout
    assert f"exported 2 messages to {out}" in res.stdout
    assert f"cannot export: File exists: {out.name}" in res.stdout
    assert out.read_text().startswith("# Where should basil go?") and "### hermes\n\nBasil likes sun." in out.read_text()

def test_chat_resume_id_continues_that_session(hermes_sessions, tmp_path):
    older = _run_json(hermes_sessions, tmp_path, ["Carrots like sandy soil."], prompt="Where do carrots grow best?")
    newer = _run_json(hermes_sessions, tmp_path, ["Noted."], prompt="Something else")
    script = _script(tmp_path, "chat.json", ["Thin them to 5 cm."])
    res = hermes_sessions("chat", "--resume", older["session_id"], "--api-mode", "scripted", "--base-url", script,
                          input="And thinning?\n")
    assert res.returncode == 0, res.stderr
    assert older["session_id"] in res.stderr and "Thin them to 5 cm." in res.stdout
    shown = json.loads(hermes_sessions("sessions", "show", older["session_id"], "--json").stdout)
    assert [m["content"] for m in shown["messages"]] == [
        "Where do carrots grow best?", "Carrots like sandy soil.", "And thinning?", "Thin them to 5 cm."]
    untouched = json.loads(hermes_sessions("sessions", "show", newer["session_id"], "--json").stdout)
    assert len(untouched["messages"]) == 2

    _one_line_error(hermes_sessions("chat", "--resume", "nope", "--api-mode", "scripted", "--base-url", script,
                                    input="x\n"), "no session 'nope'")
    both = hermes_sessions("chat", "--resume", older["session_id"], "--continue", "--api-mode", "scripted",
                           "--base-url", script, input="x\n")
    assert both.returncode != 0 and "either --resume or --continue" in both.stderr


def test_two_hermes_run_processes_write_one_database_at_once(hermes_sessions, tmp_path, home):
    steps = [{"content": f"step {i}", "tool_calls": [["slow", {"step": i, "seconds": 0.01}]]} for i in range(40)]
    procs = []
    for name in ("left", "right"):
        script = _script(tmp_path, f"{name}.json", steps + [f"{name} finished"])
        procs.append(subprocess.Popen(
            [*hermes_sessions.argv, "run", "--api-mode", "scripted", "--base-url", script, "--json", "-t", "slow",
             f"job {name}"], env=hermes_sessions.env, cwd=hermes_sessions.cwd,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    results = []
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "WARNING" not in err, err  # no append was lost to a lock
        results.append(json.loads(out))
    assert results[0]["session_id"] != results[1]["session_id"]
    for name, result in zip(("left", "right"), results):
        stored = json.loads(hermes_sessions("sessions", "show", result["session_id"], "--json").stdout)["messages"]
        assert stored == result["messages"] and len(stored) == 1 + 2 * 40 + 1
        assert stored[0]["content"] == f"job {name}" and stored[-1]["content"] == f"{name} finished"


def test_a_damaged_store_stops_run_before_the_model_call(hermes_sessions, home, wire_server):
    from plugins_providers.testserver import reply

    db = home / "state.db"
    db.write_bytes(b"\x00garbage, definitely not SQLite\n" * 64)
    before = db.read_bytes()
    model = ("--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "gpt-test")
    res = hermes_sessions("run", *model, "hi")
    _one_line_error(res, str(db), "hermes sessions repair", "--no-save")
    chat = hermes_sessions("chat", *model, input="hi\n")
    _one_line_error(chat, str(db), "--no-save")
    assert wire_server.requests == [] and res.stdout == ""  # no model call was made
    # the explicit opt-out runs, says so, and touches nothing
    wire_server.push(reply("an answer that is not stored"))
    res = hermes_sessions("run", "--no-save", *model, "hi")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "an answer that is not stored" and len(wire_server.requests) == 1
    assert "--no-save: this conversation will not be stored" in res.stderr
    assert db.read_bytes() == before
    usage = hermes_sessions("run", "--no-save", "--resume", "abc", *model, "hi")
    assert usage.returncode == 2 and "cannot --resume" in usage.stderr


def test_broken_tool_calls_in_the_store_are_repaired_on_load(hermes_sessions, tmp_path, home):
    from kernel.messages import CORRUPT_ARGUMENTS_MARKER

    first = _run_json(hermes_sessions, tmp_path, [{"tool_calls": [["slow", {"step": 0, "seconds": 0}, "call_keep"]]},
                                                  "done"], "-t", "slow")
    conn = sqlite3.connect(home / "state.db")
    with conn:
        changed = conn.execute("UPDATE messages SET tool_calls = ? WHERE tool_calls IS NOT NULL",
                               ('[{"id": "call_keep", "type": "function", "function": {"name": "slow", "argum',)).rowcount
    conn.close()
    assert changed == 1
    resumed = _run_json(hermes_sessions, tmp_path, ["still here"], "--resume", first["session_id"], prompt="next")
    call = next(m for m in resumed["messages"] if m.get("tool_calls"))
    assert call["tool_calls"][0]["id"] == "call_keep" and call["tool_calls"][0]["function"]["name"] == "slow"
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"_invalid_arguments": CORRUPT_ARGUMENTS_MARKER}
    result = next(m for m in resumed["messages"] if m["role"] == "tool")
    assert result["tool_call_id"] == "call_keep" and json.loads(result["content"])["step"] == 0  # its result is kept
    assert resumed["final_response"] == "still here"


def test_one_writer_per_session(hermes_sessions, tmp_path, wire_server):
    """Four `hermes run --resume SID` at once: one writes, the others are
    refused with one line before any model call; the history never interleaves.
    New sessions in parallel all go through."""
    from plugins_providers.testserver import reply

    first = _run_json(hermes_sessions, tmp_path, ["first answer"], prompt="first question")
    sid = first["session_id"]
    for _ in range(4):
        wire_server.push(reply("slow answer", delay=3))
    model = ["--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "gpt-test"]
    procs = [subprocess.Popen([*hermes_sessions.argv, "run", *model, "--resume", sid,
                               f"question {i}"], env=hermes_sessions.env, cwd=hermes_sessions.cwd,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    outcomes = [(p.wait(timeout=60), p.stdout.read(), p.stderr.read()) for p in procs]
    winners = [o for o in outcomes if o[0] == 0]
    refused = [o for o in outcomes if o[0] != 0]
    assert len(winners) >= 1 and len(refused) >= 1, outcomes
    for code, out, err in refused:
        assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, err
        assert f"session {sid} is being written by another hermes process (pid " in err
    history = json.loads(hermes_sessions("sessions", "show", sid, "--json").stdout)["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"] * (1 + len(winners))  # never user x4
    assert [m["content"] for m in history[3::2]] == ["slow answer"] * len(winners)
    assert len(wire_server.requests) == len(winners)  # the refused ones never called the model
    # different sessions, written at once, as before
    news = [subprocess.Popen([*hermes_sessions.argv, "run", "--api-mode", "scripted", "--base-url",
                              _script(tmp_path, f"n{i}.json", [{"content": f"new {i}", "delay": 0.5}]), f"new {i}"],
                             env=hermes_sessions.env, cwd=hermes_sessions.cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for i in range(3)]
    assert [p.wait(timeout=60) for p in news] == [0, 0, 0]
    assert len(json.loads(hermes_sessions("sessions", "list", "--json").stdout)) == 4


def test_killed_during_a_real_sdk_tool_call_the_resumed_request_says_so(hermes, hermes_home, tmp_path, wire_server,
                                                                        cli_env):  # noqa: F811
    """The same crash with the openai SDK over the wire: the assistant message
    with the call reached the store before `sleep` started, and the request
    after the resume carries the call and a tool result saying it never
    finished."""
    import os

    from kernel.messages import MISSING_RESULT
    from plugins_providers.testserver import reply
    from tests.conftest import hermes_command

    wire_server.push(reply("", tool_calls=[("terminal", {"command": "sleep 30"})]))
    model = ["--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "gpt-test"]
    env = {**os.environ, "HERMES_HOME": str(hermes_home), **cli_env}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [cli_env.get("PYTHONPATH"), os.environ.get("PYTHONPATH")]))
    proc = subprocess.Popen([*hermes_command(), "run", "--json", *model, "-t", "terminal", "wait a while"], env=env,
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while _count(hermes_home / "state.db") < 2:  # the user message and the call
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)  # the process group: `sleep` too
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    (session,) = json.loads(hermes("sessions", "list", "--json", env=cli_env).stdout)
    wire_server.push(reply("I will check whether it finished."))
    out = hermes("run", "--json", *model, "-t", "terminal", "--resume", session["id"], "continue", env=cli_env)
    assert out.returncode == 0, out.stderr
    sent = wire_server.requests_to("/v1/chat/completions")[-1].body["messages"]
    call = next(m for m in sent if m.get("tool_calls"))
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"command": "sleep 30"}
    told = sent[sent.index(call) + 1]
    assert told["role"] == "tool" and told["tool_call_id"] == call["tool_calls"][0]["id"]
    assert json.loads(told["content"]) == {"error": MISSING_RESULT}
    assert sent[-1] == {"role": "user", "content": "continue"}


def test_prune_deletes_old_sessions_asks_first_and_keeps_one_being_written(hermes_sessions, tmp_path, home):
    """`hermes sessions prune --older-than AGE`: the data folder of a user who runs hermes every day (or a
    batch of thousands) grew without end; sessions delete took one id at a time."""
    from plugins.sessions.locks import claim_in, release_in

    ids = [_run_json(hermes_sessions, tmp_path, [f"answer {i}"], prompt=f"question {i}")["session_id"] for i in range(4)]
    month_ago = time.time() - 30 * 86400
    with sqlite3.connect(home / "state.db") as db:  # three of them were last used a month ago
        db.executemany("UPDATE sessions SET updated_at = ? WHERE id = ?", [(month_ago, sid) for sid in ids[:3]])
    assert (home / "locks" / f"{ids[0]}.lock").exists()

    bad = hermes_sessions("sessions", "prune", "--older-than", "soon")
    assert bad.returncode == 2 and "expected a duration (30d, 12h, 2w, 30m) or a date" in bad.stderr
    dry = json.loads(hermes_sessions("sessions", "prune", "--older-than", "7d", "--dry-run", "--json").stdout)
    assert sorted(dry["to_delete"]) == sorted(ids[:3]) and dry["deleted"] == []
    unasked = hermes_sessions("sessions", "prune", "--older-than", "1w", input="")
    _one_line_error(unasked, "nothing was deleted: no answer came (end of input); pass --yes")
    assert "Delete 3 sessions (6 messages) last active before" in unasked.stdout

    assert claim_in(home / "locks", ids[2]) is None  # another process still writes this one
    try:
        res = hermes_sessions("sessions", "prune", "--older-than", "7", "--yes")
    finally:
        release_in(home / "locks", ids[2])
    assert res.returncode == 0, res.stderr
    said, compacted = res.stdout.splitlines()
    assert said.startswith("Deleted 2 of 3 sessions (6 messages) last active before ") and said.endswith("; 1 in use, kept.")
    assert re.fullmatch(rf"{re.escape(str(home / 'state.db'))}: \d+\.\d MB -> \d+\.\d MB", compacted)  # VACUUM
    assert not (home / "state.db-wal").exists() or (home / "state.db-wal").stat().st_size == 0
    listed = [r["id"] for r in json.loads(hermes_sessions("sessions", "list", "--json").stdout)]
    assert sorted(listed) == sorted(ids[2:])
    assert not (home / "locks" / f"{ids[0]}.lock").exists()  # a deleted session's lock file goes with it
    nothing = hermes_sessions("sessions", "prune", "--older-than", "2026-01-01")
    assert nothing.returncode == 0 and nothing.stdout.startswith("No sessions last active before 2026-01-01 00:00")


def test_auto_prune_deletes_sessions_past_retention_once_a_day(hermes_sessions, tmp_path, home):
    """hermes-agent's `sessions: {auto_prune: true, retention_days: N}`: were unknown keys here, and the
    sessions stayed. Now, as a session ends, at most once a day, the older ones go."""
    old, other = (_run_json(hermes_sessions, tmp_path, ["a"], prompt=f"q{i}")["session_id"] for i in range(2))
    ages = lambda *ids: [(time.time() - 40 * 86400, sid) for sid in ids]  # noqa: E731
    with sqlite3.connect(home / "state.db") as db:
        db.executemany("UPDATE sessions SET updated_at = ? WHERE id = ?", ages(old))
    (home / "config.yaml").write_text("sessions:\n  auto_prune: true\n  retention_days: 30\n")
    assert hermes_sessions("config", "check").stdout.startswith("ok")
    new = _run_json(hermes_sessions, tmp_path, ["b"], prompt="today")["session_id"]
    assert sorted(r["id"] for r in json.loads(hermes_sessions("sessions", "list", "--json").stdout)) == \
        sorted([other, new])
    assert (home / "sessions-pruned").exists()
    with sqlite3.connect(home / "state.db") as db:  # the same day: no second prune
        db.executemany("UPDATE sessions SET updated_at = ? WHERE id = ?", ages(other))
    _run_json(hermes_sessions, tmp_path, ["c"], prompt="later today")
    assert other in [r["id"] for r in json.loads(hermes_sessions("sessions", "list", "--json").stdout)]
    # hermes-agent's min_interval_hours and vacuum_after_prune (on by default): the space goes back to the disk
    with sqlite3.connect(home / "state.db") as db:
        db.executemany("INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, 'user', ?, 0)",
                       [(other, 100 + i, "x" * 4000) for i in range(500)])
    size = lambda: sum(p.stat().st_size for p in home.glob("state.db*"))  # noqa: E731 - the file and its WAL
    before = size()
    (home / "config.yaml").write_text("sessions:\n  auto_prune: true\n  retention_days: 30\n  min_interval_hours: 0\n")
    _run_json(hermes_sessions, tmp_path, ["d"], prompt="an hour on")
    assert other not in [r["id"] for r in json.loads(hermes_sessions("sessions", "list", "--json").stdout)]
    assert before > 2_000_000 > size()


def test_export_writes_a_session_as_markdown_and_never_over_a_file(hermes_sessions, tmp_path):
    """`hermes sessions export ID [-o FILE]`: a conversation to read or share (hermes-agent exports Markdown too);
    `show` printed a debugging view and `--json` the records."""
    steps = [{"reasoning": "look first", "content": "Let me look.",
              "tool_calls": [["todo", {"todos": [{"id": "1", "content": "```fenced```", "status": "pending"}]}]]},
             "There is **one** task."]
    sid = _run_json(hermes_sessions, tmp_path, steps, prompt="Plan it")["session_id"]
    text = hermes_sessions("sessions", "export", sid[:-2]).stdout
    assert text.startswith(f"# Plan it\n\nsession `{sid}` · model - · started ")
    assert "### You\n\nPlan it\n\n### hermes\n\n<details><summary>reasoning</summary>\n\nlook first\n\n</details>" in text
    assert "**todo**\n\n````json\n" in text  # a fence longer than the ``` inside
    assert "<details><summary>todo result</summary>" in text and text.rstrip().endswith("There is **one** task.")
    out = tmp_path / "plan.md"
    assert hermes_sessions("sessions", "export", sid, "-o", out).stdout.strip() == f"Wrote {sid} to {out}."
    assert out.read_text() == text
    again = hermes_sessions("sessions", "export", sid, "-o", out)
    _one_line_error(again, f"{out}: File exists; choose another name")
    assert out.read_text() == text


def test_a_data_folder_shared_with_hermes_agent_keeps_its_state_db_as_it_is(hermes, hermes_home, tmp_path):
    """`HERMES_HOME=~/.hermes` (hermes-agent's folder, config and keys as they are): its state.db, schema 22, stopped
    every run ("schema version 22 is newer than this hermes understands"). Ours goes beside it; its own is not
    changed."""
    agents = hermes_home / "state.db"
    conn = sqlite3.connect(agents)
    conn.execute("PRAGMA journal_mode = WAL")  # as hermes-agent keeps it
    for sql in ("CREATE TABLE schema_version (version INTEGER NOT NULL)", "INSERT INTO schema_version VALUES (22)",
                "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT)",
                "INSERT INTO sessions VALUES ('20261101_x', 'cli', 'an agent session')",
                "CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT)"):
        conn.execute(sql)
    conn.commit()
    before = conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
    conn.close()
    out = hermes("run", "--api-mode", "scripted", "--base-url", _script(tmp_path, "s.json", ["stored"]), "hi")
    assert out.returncode == 0 and out.stdout == "stored\n", out.stderr
    [ours] = json.loads(hermes("sessions", "list", "--json").stdout)
    assert ours["id"] != "20261101_x"  # hermes-agent's sessions are its own (another schema)
    assert (hermes_home / "hermes-state.db").is_file()
    conn = sqlite3.connect(agents)
    assert conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall() == before
    assert conn.execute("SELECT * FROM sessions").fetchall() == [("20261101_x", "cli", "an agent session")]
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(22,)]


def test_hermes_agents_sessions_imported_then_listed_searched_and_resumed_over_the_wire(
        hermes, hermes_home, tmp_path, wire_server, cli_env):  # noqa: F811
    """`hermes sessions import`: in a folder shared with hermes-agent (HERMES_HOME=~/.hermes), its state.db's
    conversations, which were not listed, searched or resumed here."""
    from plugins_providers.testserver import reply
    from tests.sessions import agents_db

    agents_db.make(hermes_home / "state.db")
    before = (hermes_home / "state.db").read_bytes()
    assert hermes("sessions", "list").stdout == f"No sessions yet. hermes-agent's are in {hermes_home / 'state.db'}: " \
        "`hermes sessions import` copies them here.\n"
    out = hermes("sessions", "import")
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"Imported 2 sessions (6 messages) from {hermes_home / 'state.db'}.\n"
    listed = json.loads(hermes("sessions", "list", "--json").stdout)
    assert [(s["id"], s["platform"], s["title"]) for s in listed] == [
        (agents_db.SECOND, "telegram", None), (agents_db.FIRST, "cli", "tmp listing")]
    assert agents_db.FIRST in hermes("sessions", "search", "files").stdout
    # resumed by its id's start, as in hermes-agent: the model gets the conversation, its tool call and result too
    wire_server.push(reply("Still two."))
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "test",
                 "-r", agents_db.FIRST[:15], "how many now?", env=cli_env)
    assert out.returncode == 0 and out.stdout == "Still two.\n", out.stderr
    (request,) = wire_server.requests
    sent = [m for m in request.body["messages"] if m["role"] != "system"]
    assert [(m["role"], m.get("content")) for m in sent] == [
        ("user", "What files are in /tmp?"), ("assistant", ""), ("tool", "a.txt\nb.txt"),
        ("assistant", "Two files: a.txt and b.txt."), ("user", "how many now?")]
    assert sent[1]["tool_calls"][0]["function"] == agents_db.CALLS[0]["function"]
    # again: nothing twice; the file was only read
    out = hermes("sessions", "import", "--json")
    assert json.loads(out.stdout) == {"source": str(hermes_home / "state.db"), "imported": 0, "messages": 0,
                                      "went_on": 0, "already_here": 2}, out.stderr
    assert (hermes_home / "state.db").read_bytes() == before
    # the second session went on in hermes-agent (the first went on here, by the resume above): its new messages come
    conn = sqlite3.connect(hermes_home / "state.db")
    conn.executemany("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                     [(agents_db.SECOND, "user", "and a dog?", 1.0), (agents_db.FIRST, "user", "lost", 2.0)])
    conn.commit()
    conn.close()
    out = hermes("sessions", "import")
    assert out.stdout == f"Imported 0 sessions (1 messages) from {hermes_home / 'state.db'}; 1 imported before went " \
        "on in hermes-agent (its new messages added); 1 were here already.\n", out.stderr
    assert said_in(hermes, agents_db.SECOND)[-1] == "and a dog?" and "lost" not in said_in(hermes, agents_db.FIRST)


def said_in(hermes, session_id: str) -> list:
    shown = json.loads(hermes("sessions", "show", session_id, "--json").stdout)
    return [m["content"] for m in shown["messages"] if m["role"] == "user"]


def test_hermes_agents_state_db_that_is_not_there_or_not_its(hermes, hermes_home, tmp_path):
    from tests.sessions import agents_db

    out = hermes("sessions", "import", env={"HOME": str(tmp_path)})  # no ~/.hermes, a data folder of our own
    _one_line_error(out, "no state.db of hermes-agent in", "give its path: hermes sessions import PATH/state.db")
    _one_line_error(hermes("sessions", "import", tmp_path / "gone.db"), "gone.db: no such file")
    (tmp_path / "notes.db").write_text("not a database at all, but long enough to have a header " * 4)
    _one_line_error(hermes("sessions", "import", tmp_path / "notes.db"),
                    "notes.db: cannot read it as a SQLite database")
    _run_json(hermes, tmp_path, ["stored here"])  # our own database is no hermes-agent's
    _one_line_error(hermes("sessions", "import", hermes_home / "state.db"),
                    "not hermes-agent's state.db (no state_meta table)")
    # ~/.hermes's, found when the data folder is not shared
    (tmp_path / ".hermes").mkdir()
    agents_db.make(tmp_path / ".hermes" / "state.db")
    out = hermes("sessions", "import", env={"HOME": str(tmp_path)})
    assert out.returncode == 0 and out.stdout.startswith("Imported 2 sessions (6 messages) from "), out.stderr
