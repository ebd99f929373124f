"""Durable turns (``durable.engine: dbos``) through the real command line, with the model on a loopback wire
server: kill -9 in the middle of a tool batch, then ``hermes runs resume`` finishes the turn with each tool's side
effect exactly once and without asking the model again; on SQLite (the data folder) and on a real PostgreSQL."""

from __future__ import annotations

import json

import pytest

from plugins_providers.testserver import reply
from tests.conftest import kill_9, wait_until


@pytest.fixture(params=["sqlite", "postgres"])
def durable(request, home, hermes_sessions, wire_server):  # noqa: F811
    """The configured command (``durable(*args)``), the engine's database on SQLite or PostgreSQL."""
    config = "durable:\n  engine: dbos\n"
    if request.param == "postgres":  # the sessions too: nothing of the turn is on this host's disk
        url = request.getfixturevalue("postgres_url")
        config += f"  database_url: {url}\nsessions:\n  store: postgres\n  database_url: {url}\n"
    (home / "config.yaml").write_text(config)
    hermes_sessions.env["OPENAI_API_KEY"] = "k"
    model = ("--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "test-model")

    def run(*args, **kwargs):
        return hermes_sessions(*args, **kwargs)

    run.model = model
    run.start = hermes_sessions.start
    run.url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    run.home = home
    return run


def _tool_steps_done(durable) -> int:
    """How many tool steps the engine has checkpointed (read from its system database)."""
    query = "select count(*) from {}operation_outputs where function_name = 'hermes.tool'"
    if durable.url is None:
        import sqlite3

        with sqlite3.connect(durable.home / "durable.sqlite") as db:
            return db.execute(query.format("")).fetchone()[0]
    import psycopg

    with psycopg.connect(durable.url) as db:
        return db.execute(query.format("dbos.")).fetchone()[0]


def _appends(tmp_path, *texts, hold=(), tool="append") -> list:
    effects, started = tmp_path / "effects.txt", tmp_path / "started.txt"
    return [(tool, {"path": str(effects), "started": str(started), "text": text,
                    **({"hold": str(tmp_path / "hold")} if text in hold else {})}) for text in texts]


def _json(done):
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("tool", ["append", "append_parallel"])
def test_killed_in_a_tool_batch_the_resumed_turn_runs_each_tool_once(durable, wire_server, tmp_path, tool):
    from tests.mcp.conftest import entry

    with open(durable.home / "config.yaml", "a") as config:  # a server `-t effects` does not choose
        config.write("mcp_servers:\n  t: " + json.dumps(entry()) + "\n")
    (tmp_path / "hold").touch()  # the second tool waits on it: the process is killed there
    calls = _appends(tmp_path, "a", "b", "c", hold=("b",), tool=tool)
    wire_server.push(reply(tool_calls=calls), reply("all three appended"))
    proc = durable.start("run", *durable.model, "-t", "effects", "append three lines")
    started, effects = tmp_path / "started.txt", tmp_path / "effects.txt"
    done_before = "a\n" if tool == "append" else "a\nc\n"  # in parallel, c finishes while b waits
    try:
        wait_until(lambda: started.exists() and "b" in started.read_text() and effects.exists()
                   and sorted(effects.read_text().splitlines()) == done_before.split(), proc)
        wait_until(lambda: _tool_steps_done(durable) == len(done_before.split()), proc)  # checkpointed as they end
    finally:
        kill_9(proc)
    (tmp_path / "hold").unlink()
    assert sorted(effects.read_text().splitlines()) == done_before.split()

    (stopped,) = _json(durable("runs", "list", "--json"))
    assert stopped["state"] == "stopped" and stopped["prompt"] == "append three lines"
    resumed = _json(durable("runs", "resume", stopped["id"][:10], "--json"))
    assert resumed["final_response"] == "all three appended" and resumed["exit_reason"] == "completed"
    assert sorted(effects.read_text().splitlines()) == ["a", "b", "c"]  # each side effect once
    assert len(wire_server.requests) == 2  # the answered call was not asked again
    offered = [sorted(t["function"]["name"] for t in r.body["tools"]) for r in wire_server.requests]
    assert offered[0] == offered[1] and not any(name.startswith("mcp__") for name in offered[1])  # as it was
    # the store holds the turn once: the user message, the calls, three results, the answer
    history = _json(durable("sessions", "show", stopped["session_id"], "--json"))["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "tool", "tool", "assistant"]
    assert [m["content"] for m in history[2:5]] == ["appended a", "appended b", "appended c"]
    assert _json(durable("runs", "list", "--json")) == []
    assert [r["state"] for r in _json(durable("runs", "list", "--all", "--json"))] == ["success"]
    again = durable("runs", "resume", stopped["id"])
    assert again.returncode == 1 and "finished already" in again.stderr


def test_a_running_turn_is_not_resumed_or_cancelled_and_a_stopped_one_is_cancelled(durable, wire_server, tmp_path):
    (tmp_path / "hold").touch()
    wire_server.push(reply(tool_calls=_appends(tmp_path, "a", hold=("a",))), reply("never read"))
    proc = durable.start("run", *durable.model, "-t", "effects", "hold on")
    started = tmp_path / "started.txt"
    try:
        wait_until(started.exists, proc)
        (running,) = _json(durable("runs", "list", "--json"))
        assert running["state"] == "running" and running["pid"] == proc.pid
        for command in ("resume", "cancel"):
            refused = durable("runs", command, running["id"])
            assert refused.returncode == 1 and f"still running (pid {proc.pid}" in refused.stderr
            assert refused.stderr.count("\n") == 1
    finally:
        kill_9(proc)
    done = durable("runs", "cancel", running["id"])
    assert done.returncode == 0 and "Cancelled" in done.stdout
    assert _json(durable("runs", "list", "--json")) == []
    assert durable("runs", "resume", running["id"]).stderr.strip().endswith("was cancelled")


def test_runs_say_in_one_line_what_is_wrong(hermes_sessions, home, tmp_path):  # noqa: F811
    off = hermes_sessions("runs", "list")
    assert off.returncode == 2 and "durable turns are off: set durable.engine: dbos" in off.stderr
    (home / "config.yaml").write_text("durable:\n  engine: dbos\n  database_url: mysql://x\n")
    bad = hermes_sessions("runs", "list")
    assert bad.returncode == 1 and "durable.database_url must be postgresql://" in bad.stderr
    script = tmp_path / "script.json"
    script.write_text('["never asked"]')
    turn = hermes_sessions("run", "--api-mode", "scripted", "--base-url", str(script), "hi")
    assert turn.returncode == 1 and turn.stdout == "" and "durable.database_url must be" in turn.stderr
    # a database nobody serves: DBOS's own "DBOS failed to launch:" and a traceback came first
    (home / "config.yaml").write_text("durable:\n  engine: dbos\n  database_url: postgresql://u@127.0.0.1:1/db\n")
    unreachable = hermes_sessions("run", "--api-mode", "scripted", "--base-url", str(script), "hi")
    assert unreachable.returncode == 1 and unreachable.stderr.startswith(
        "hermes: error: the durable engine cannot use postgresql://u@127.0.0.1:1/db: "), unreachable.stderr
    (home / "config.yaml").write_text("durable:\n  engine: dbos\n")
    unknown = hermes_sessions("runs", "resume", "nope")
    assert unknown.returncode == 1 and "no durable turn 'nope'" in unknown.stderr
    assert all(len(r.stderr.strip().splitlines()) == 1 for r in (off, bad, turn, unreachable, unknown))



def test_doctor_launches_the_engine_on_its_database_or_says_why_not(hermes_sessions, home):  # noqa: F811
    (home / "config.yaml").write_text("model: m\ndurable:\n  engine: dbos\n")
    checks = {c["name"]: c for c in json.loads(hermes_sessions("doctor", "--offline", "--json").stdout)}
    assert checks["durable"]["status"] == "ok" and checks["durable"]["detail"] == \
        f"DBOS on sqlite:///{home / 'durable.sqlite'}"
    (home / "config.yaml").write_text("model: m\ndurable:\n  engine: dbos\n  database_url: postgresql://u@127.0.0.1:1/db\n")
    out = hermes_sessions("doctor", "--offline", "--json")
    checks = {c["name"]: c for c in json.loads(out.stdout)}
    assert out.returncode == 1 and checks["durable"]["status"] == "fail"
    assert checks["durable"]["detail"].startswith("the durable engine cannot use postgresql://u@127.0.0.1:1/db: ")

def test_sigterm_leaves_the_turn_resumable_as_a_deploy_needs(durable, wire_server, tmp_path):
    import signal

    (tmp_path / "hold").touch()
    wire_server.push(reply(tool_calls=_appends(tmp_path, "a", "b", hold=("b",))), reply("both appended"))
    proc = durable.start("run", *durable.model, "-t", "effects", "append two lines")
    started, effects = tmp_path / "started.txt", tmp_path / "effects.txt"
    try:
        wait_until(lambda: started.exists() and "b" in started.read_text().split(), proc)
        wait_until(lambda: _tool_steps_done(durable) == 1, proc)
        proc.send_signal(signal.SIGTERM)  # as a deploy stops a service
        _, err = proc.communicate(timeout=30)
    finally:
        kill_9(proc)
    assert proc.returncode == 128 + signal.SIGTERM and "stopped by SIGTERM" in err
    (tmp_path / "hold").unlink()
    (stopped,) = _json(durable("runs", "list", "--json"))
    assert stopped["state"] == "stopped"
    # what was stored is what kill -9 would have left: nothing of the cut-short tool's "interrupted" result
    history = _json(durable("sessions", "show", stopped["session_id"], "--json"))["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    resumed = _json(durable("runs", "resume", stopped["id"], "--json"))
    assert resumed["final_response"] == "both appended"
    assert effects.read_text().splitlines() == ["a", "b"]
    history = _json(durable("sessions", "show", stopped["session_id"], "--json"))["messages"]
    assert [m["content"] for m in history[2:4]] == ["appended a", "appended b"] and len(history) == 5


def test_without_dbos_installed_a_durable_turn_is_one_line(hermes_sessions, home, tmp_path):  # noqa: F811
    shadow = tmp_path / "no-dbos" / "dbos"
    shadow.mkdir(parents=True)  # a dbos that cannot be imported, first on the path, as if it were not installed
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'dbos'\", name='dbos')\n")
    env = dict(hermes_sessions.env, PYTHONPATH=str(shadow.parent) + ":" + hermes_sessions.env["PYTHONPATH"])
    (home / "config.yaml").write_text("durable:\n  engine: dbos\n")
    script = tmp_path / "script.json"
    script.write_text('["never asked"]')
    import subprocess

    for args in (["run", "--api-mode", "scripted", "--base-url", str(script), "hi"], ["runs", "list"]):
        done = subprocess.run([*hermes_sessions.argv, *args], env=env, cwd=hermes_sessions.cwd, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.strip().endswith("dbos is not installed: pip install 'hermes-kernel[durable]'")
        assert len(done.stderr.strip().splitlines()) == 1


def test_each_chat_turn_is_a_durable_turn_of_one_session(hermes_sessions, home, tmp_path):  # noqa: F811
    """``hermes chat`` in a pseudo-terminal, as a person types: two turns, two finished workflows, one session."""
    import pexpect

    script = tmp_path / "chat.json"
    script.write_text('["first answer", "second answer"]')
    (home / "config.yaml").write_text(f"durable:\n  engine: dbos\napi_mode: scripted\nbase_url: {script}\nmodel: m\n")
    chat = pexpect.spawn(hermes_sessions.argv[0], [*hermes_sessions.argv[1:], "chat"], env=hermes_sessions.env,
                         cwd=str(hermes_sessions.cwd), encoding="utf-8", timeout=30, dimensions=(40, 140))
    try:
        for said, answer in (("hello", "first answer"), ("again", "second answer")):
            chat.sendline(said)
            chat.expect_exact(answer)
        chat.sendline("/exit")
        chat.expect(pexpect.EOF)
    finally:
        chat.close(force=True)
    turns = _json(hermes_sessions("runs", "list", "--all", "--json"))
    assert sorted(t["prompt"] for t in turns) == ["again", "hello"] and {t["state"] for t in turns} == {"success"}
    assert len({t["session_id"] for t in turns}) == 1


def test_a_key_a_tool_printed_is_masked_before_the_engine_keeps_it(hermes_sessions, home, wire_server,
                                                                   tmp_path):  # noqa: F811
    """DBOS keeps each step's result in its database (pickled, base64): a key a tool read or the model repeated is
    masked there as it is everywhere else, and the turn goes on with the same masked text."""
    import base64
    import sqlite3

    key = "sk-live-durable-0123456789"
    (home / "config.yaml").write_text("durable:\n  engine: dbos\n")
    hermes_sessions.env["OPENAI_API_KEY"] = key
    secret = tmp_path / "settings.txt"
    secret.write_text(f"token={key}\n")
    wire_server.push(reply(tool_calls=[("read_file", {"path": str(secret)})]), reply(f"It is {key}."))
    done = hermes_sessions("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "m",
                           "-t", "file", "what is the token?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is [hermes: the value of $OPENAI_API_KEY was masked].\n"
    assert key not in json.dumps(wire_server.requests[1].body["messages"][-1])  # the model read it masked
    with sqlite3.connect(home / "durable.sqlite") as db:
        kept = [(name, base64.b64decode(value)) for name, value in db.execute(
            "select function_name, output from operation_outputs union all "
            "select 'turn', output from workflow_status") if value is not None]
    assert sorted(name for name, _ in kept)[:3] == ["hermes.model", "hermes.model", "hermes.tool"]
    assert all(key.encode() not in output for _, output in kept)
    kept = dict(kept)
    assert b"token=[hermes: the value of $OPENAI_API_KEY was masked]" in kept["hermes.tool"]
