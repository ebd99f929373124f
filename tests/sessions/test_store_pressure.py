"""The store under pressure (issue 22, item 5), through the CLI: a disk that
fills mid-run (``ulimit -f``) and a session deleted while a run writes it.
Either is said, and the run stops or the delete is refused: nothing is lost
silently."""

from __future__ import annotations

import json
import os
import subprocess
import time

from plugins_providers.testserver import reply
from tests.conftest import ROOT, hermes_command
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)


def _env(cli_env, hermes_home) -> dict:  # noqa: F811
    return {**os.environ, **cli_env, "HERMES_HOME": str(hermes_home), "OPENAI_API_KEY": "sk-test",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}


def test_a_full_disk_stops_the_run_and_says_what_was_not_stored(wire_server, cli_env, hermes_home, tmp_path):  # noqa: F811
    (hermes_home / "config.yaml").write_text("terminal:\n  max_output_chars: 600000\n")
    wire_server.script([reply(tool_calls=[("terminal", {"command": "head -c 540000 /dev/zero | tr '\\\\0' x"})]),
                        reply("all done")])
    command = " ".join([*hermes_command(), "run", "--json", "--base-url", wire_server.openai_url, "--api-mode",
                        "chat_completions", "-m", "m", "-t", "terminal", "go"])
    done = subprocess.run(["bash", "-c", f"ulimit -f 200; exec {command}"], env=_env(cli_env, hermes_home),
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "append_messages raised StoreError" in done.stderr and "Traceback" not in done.stderr, done.stderr
    result = json.loads(done.stdout)  # under --json the reason is the document's; on a terminal, stderr's
    assert result["exit_reason"] == "error" and "could not store the session" in result["error"]
    # the big result is written with the next answer: that write failed, and the run stopped there
    assert len(wire_server.requests) == 2


def test_a_session_a_run_writes_cannot_be_deleted_until_it_ends(hermes, wire_server, cli_env, hermes_home,  # noqa: F811
                                                                 tmp_path):
    wire_server.script([reply("slow answer", delay=6)])
    run = subprocess.Popen([*hermes_command(), "run", "--json", "--base-url", wire_server.openai_url, "--api-mode",
                            "chat_completions", "-m", "m", "go"], env=_env(cli_env, hermes_home), cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        session = None
        for _ in range(100):  # until the run has started its session
            listed = hermes("sessions", "list", "--json")
            found = json.loads(listed.stdout or "[]") if listed.returncode == 0 else []
            if found:
                session = found[0]["id"]
                break
            time.sleep(0.1)
        assert session, "the run never stored its session"
        refused = hermes("sessions", "delete", session, "--yes")
        assert refused.returncode == 1 and "is being written by another hermes process" in refused.stderr
        assert "Deleted" not in refused.stdout
    finally:
        out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    shown = hermes("sessions", "show", session, "--json")
    assert shown.returncode == 0 and "slow answer" in shown.stdout  # whole, nothing lost to the delete
    assert hermes("sessions", "delete", session, "--yes").returncode == 0
