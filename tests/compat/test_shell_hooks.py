"""hermes-agent's shell hooks (config.yaml's ``hooks:``): real commands, run by ``hermes run`` as a subprocess or by an
agent in this process, with hermes-agent's payload on stdin, its answers, its approval file."""

from __future__ import annotations

import json
import time

import pytest

from hermes.host.config import Config
from plugins.hermes_compat import shell_hooks
from tests.tools.test_background import gone

GUARD = """#!/bin/sh
cat > "$(dirname "$0")/payload.json"
echo '{"decision": "block", "reason": "no shell here"}'
"""


def write(path, text, mode=0o755):
    path.write_text(text)
    path.chmod(mode)
    return path


def tool_results(out) -> list:
    """The tool results of a ``hermes run --json``: JSON ones read, text as it is."""
    assert out.returncode == 0, out.stderr
    contents = [m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
    return [json.loads(c) if c.startswith("{") else c for c in contents]


@pytest.fixture
def run_script(hermes, tmp_path):
    """``run_script(env=...)``: ``hermes run`` of a scripted model calling ``terminal`` then ``read_file``."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["terminal", {"command": "echo hi"}],
                                                  ["read_file", {"path": str(script)}]]}, "done"]))

    def run(env=None):
        return hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "go", env=env, cwd=tmp_path)

    return run


def test_a_guard_blocks_the_tool_calls_its_matcher_fits_and_reads_hermes_agents_payload(run_script, hermes_home,
                                                                                       tmp_path):
    write(tmp_path / "guard.sh", GUARD)
    (hermes_home / "config.yaml").write_text("hooks:\n  pre_tool_call:\n    - command: sh ~/guard.sh\n"
                                             "      matcher: terminal|patch\n")
    terminal, read = tool_results(run_script(env={"HERMES_ACCEPT_HOOKS": "1", "HOME": str(tmp_path)}))
    assert terminal == {"error": "no shell here"}
    assert "tool_calls" in read  # read_file's matcher does not fit: it ran
    payload = json.loads((tmp_path / "payload.json").read_text())
    assert {k: payload[k] for k in ("hook_event_name", "tool_name", "tool_input", "cwd")} == {
        "hook_event_name": "pre_tool_call", "tool_name": "terminal", "tool_input": {"command": "echo hi"},
        "cwd": str(tmp_path)}
    assert payload["session_id"] and payload["extra"]["tool_call_id"] and "turn_id" in payload["extra"]
    # the acceptance was recorded in hermes-agent's file, in its format
    [entry] = json.loads((hermes_home / "shell-hooks-allowlist.json").read_text())["approvals"]
    assert (entry["event"], entry["command"]) == ("pre_tool_call", "sh ~/guard.sh")
    assert entry["approved_at"].endswith("Z")
    assert entry["script_mtime_at_approval"]  # of ~/guard.sh, a word after the program


def test_a_hook_runs_only_once_approved(run_script, hermes, hermes_home, tmp_path):
    guard = write(tmp_path / "guard.sh", GUARD)
    (hermes_home / "config.yaml").write_text(f"hooks:\n  pre_tool_call:\n    - command: {guard}\n")
    out = run_script()
    assert tool_results(out)[0]["output"] == "hi\n"  # not approved: it did not run
    assert out.stderr.count("not approved, so not run") == 1 and "hermes hooks approve" in out.stderr
    assert not (tmp_path / "payload.json").exists()
    [row] = json.loads(hermes("hooks", "list", "--json").stdout)["hooks"]
    assert row["approved_at"] is None and row["problem"] is None
    asked = hermes("hooks", "approve")  # nobody at a terminal to ask
    assert asked.returncode == 2 and "--yes" in asked.stderr
    assert hermes("hooks", "approve", "--yes").returncode == 0
    assert tool_results(run_script())[0] == {"error": "no shell here"}
    assert json.loads(hermes("hooks", "list", "--json").stdout)["hooks"][0]["approved_at"]
    revoked = hermes("hooks", "revoke", str(guard))
    assert revoked.returncode == 0 and "revoked 1" in revoked.stdout
    assert tool_results(run_script())[0]["output"] == "hi\n"
    again = hermes("hooks", "revoke", str(guard))
    assert again.returncode == 1 and "no approval recorded" in again.stderr
    # an approved script edited since says so
    hermes("hooks", "approve", "--yes")
    time.sleep(0.01)
    write(guard, GUARD + "# edited\n")
    assert json.loads(hermes("hooks", "list", "--json").stdout)["hooks"][0]["changed_since_approval"] is True
    # safe mode runs no user code: neither plugins nor hooks
    assert tool_results(run_script(env={"HERMES_SAFE_MODE": "1"}))[0]["output"] == "hi\n"


def test_a_guard_that_cannot_answer_blocks_the_call_and_is_killed_whole(run_script, hermes, hermes_home, tmp_path):
    pids = tmp_path / "pids"
    (hermes_home / "config.yaml").write_text(
        "hooks_auto_accept: true\nhooks:\n  pre_tool_call:\n"
        f"    - command: sh -c 'sleep 60 & echo $! > {pids}; sleep 60'\n      matcher: terminal\n      timeout: 1\n"
        f"    - command: {tmp_path}/missing.sh\n      matcher: read_file\n"
        f"  post_tool_call:\n    - command: {tmp_path}/missing-too.sh\n")
    started = time.monotonic()
    out = run_script()
    terminal, read = tool_results(out)
    assert time.monotonic() - started < 20
    assert "timed out after 1s" in terminal["error"] and "shell-hooks" in terminal["error"]
    assert "missing.sh" in read["error"] and "blocked" in read["error"]
    assert "missing-too.sh" in out.stderr  # an observer that cannot run is a warning, nothing more
    assert gone(int(pids.read_text()))  # what the hook started went with it
    problems = [r["problem"] for r in json.loads(hermes("hooks", "list", "--json").stdout)["hooks"]]
    assert problems[0] is None and "missing.sh: not found" in problems[1] and "missing-too.sh" in problems[2]


def test_a_hook_printing_without_end_is_stopped_and_an_unquoted_yes_is_explained(run_script, hermes_home):
    """Its output was held in memory until its timeout (`yes` prints gigabytes a minute)."""
    (hermes_home / "config.yaml").write_text(
        "hooks_auto_accept: true\nhooks:\n  pre_tool_call:\n"
        "    - command: \"yes\"\n      matcher: terminal\n      timeout: 60\n"
        "    - command: echo '{}'\n      matcher: read_file\n    - command: yes\n      matcher: none\n")
    started = time.monotonic()
    out = run_script()
    terminal, read = tool_results(out)
    assert time.monotonic() - started < 30
    assert "printed over 1 MB; stopped" in terminal["error"] and "blocked" in terminal["error"]
    assert "error" not in read  # it ran: its answer, {}, lets the call go
    assert "hooks.pre_tool_call[2]: needs a command (a mapping with `command: ...`); YAML reads an unquoted yes, no, " \
           "on or off as True: quote the command" in out.stderr


def test_bad_entries_are_said_once_and_the_others_run(run_script, hermes, hermes_home, tmp_path):
    guard = write(tmp_path / "guard.sh", GUARD)
    (hermes_home / "config.yaml").write_text(
        "hooks_auto_accept: true\nhooks:\n"
        "  pre_tool_cal:\n    - command: x\n"
        "  post_tool_call: {command: x}\n"
        "  on_session_start:\n    - matcher: terminal\n      command: 'true'\n    - nothing\n"
        f"  pre_tool_call:\n    - command: {guard}\n      matcher: terminal\n      timeout: 999\n"
        "    - command: 'true'\n      matcher: '(['\n      timeout: soon\n")
    out = run_script()
    assert tool_results(out)[0] == {"error": "no shell here"}
    for said in ("hooks.pre_tool_cal: no such event (did you mean 'pre_tool_call'?)",
                 "hooks.post_tool_call: must be a list", "hooks.on_session_start[0].matcher: only pre_tool_call",
                 "hooks.on_session_start[1]: needs a command", "hooks.pre_tool_call[0].timeout: 999 is over the most",
                 "hooks.pre_tool_call[1].matcher: not a regular expression",
                 "hooks.pre_tool_call[1].timeout: 'soon' is not a number"):
        assert out.stderr.count(said) == 1, (said, out.stderr)
    assert hermes("config", "check").returncode == 0  # the keys are known
    doctor = hermes("doctor", "--offline")
    assert "shell hooks" in doctor.stdout and "no such event" in doctor.stdout
    assert "shell-hooks" in {r["name"] for r in json.loads(hermes("plugins", "list", "--json").stdout)}


def test_hooks_test_fires_a_made_up_event(hermes, hermes_home, tmp_path):
    guard = write(tmp_path / "guard.sh", GUARD)
    (hermes_home / "config.yaml").write_text(f"hooks:\n  pre_tool_call:\n    - command: {guard}\n"
                                             "      matcher: terminal\n")
    out = hermes("hooks", "test", "pre_tool_call", "--for-tool", "terminal", "--json")
    assert out.returncode == 0, out.stderr
    [result] = json.loads(out.stdout)["results"]
    assert result["exit"] == 0 and result["answer"] == {"action": "block", "message": "no shell here"}
    assert json.loads((tmp_path / "payload.json").read_text())["tool_name"] == "terminal"
    shown = hermes("hooks", "test", "pre_tool_call", "--for-tool", "terminal")
    assert 'answer: {"action": "block", "message": "no shell here"}' in shown.stdout
    assert hermes("hooks", "test", "pre_tool_call", "--for-tool", "read_file").returncode == 2  # matcher: none
    (tmp_path / "bad.json").write_text("{nope")
    bad = hermes("hooks", "test", "pre_tool_call", "--payload", tmp_path / "bad.json")
    assert bad.returncode == 2 and "not JSON" in bad.stderr and "Traceback" not in bad.stderr
    listed = hermes("hooks")
    assert "NOT APPROVED" in listed.stdout and str(guard) in listed.stdout


def test_context_exit_status_2_and_a_python_plugins_block_first(make_agent, tmp_path, monkeypatch):
    """In one agent: ``{"context": ...}`` reaches the model; exit 2 blocks with stderr as the reason; a hermes Python
    plugin loaded before the hooks answers first when both block."""
    from plugins.hermes_compat.bridge import build_adapter
    from plugins.hermes_compat.state import PluginRecord

    monkeypatch.chdir(tmp_path)
    context = write(tmp_path / "context.py", "import json, sys\njson.load(sys.stdin)\n"
                                             "print(json.dumps({'context': 'Today is Friday'}))\n", 0o644)
    stop = write(tmp_path / "stop.sh", "#!/bin/sh\necho 'not on Fridays' >&2\nexit 2\n")
    config = Config({"hooks_auto_accept": True, "hooks": {
        "pre_llm_call": [{"command": f"python3 {context}"}],
        "pre_tool_call": [{"command": str(stop), "matcher": "terminal|write_file"}]}})
    python = PluginRecord(name="py-guard")
    python.hooks["pre_tool_call"] = [lambda tool_name, **kw: {"action": "block", "message": "python says no"}
                                     if tool_name == "write_file" else None]
    from plugins import core_tools

    agent = make_agent(core_tools, build_adapter(python), shell_hooks.load(config), config=config, script=[
        {"tool_calls": [["terminal", {"command": "echo hi"}], ["write_file", {"path": "x", "content": "y"}]]},
        "done"])
    agent.run_conversation("go")
    first = agent.scripted.requests[0].messages
    assert "Today is Friday" in json.dumps(first)
    results = [m["content"] for m in agent.scripted.requests[-1].messages if m["role"] == "tool"]
    assert "not on Fridays" in results[0] and "python says no" in results[1]
    assert not (tmp_path / "x").exists()


def test_a_hermes_python_plugins_block_wins_over_a_shell_hooks(run_script, hermes_home, tmp_path):
    """As in hermes-agent, the shell hooks load after the Python plugins, so a Python plugin's block is the one
    the model reads when both block."""
    folder = hermes_home / "plugins" / "py-guard"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(
        "def register(ctx):\n    ctx.register_hook('pre_tool_call', lambda tool_name, **kw: "
        "{'action': 'block', 'message': 'python says no'} if tool_name == 'terminal' else None)\n")
    guard = write(tmp_path / "guard.sh", GUARD)
    (hermes_home / "config.yaml").write_text(f"plugins:\n  enabled: [py-guard]\nhooks_auto_accept: true\n"
                                             f"hooks:\n  pre_tool_call:\n    - command: {guard}\n")
    terminal, read = tool_results(run_script())
    assert terminal == {"error": "python says no"}
    assert read == {"error": "no shell here"}


def test_approve_at_a_terminal_asks_about_each_hook(hermes, hermes_home, tmp_path):
    import os

    import pexpect

    from tests.conftest import ROOT, hermes_command

    (hermes_home / "config.yaml").write_text("hooks:\n  pre_tool_call:\n    - command: /bin/true\n"
                                             "  post_tool_call:\n    - command: /bin/false\n")
    env = {**os.environ, "HERMES_HOME": str(hermes_home), "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn(hermes_command()[0], [*hermes_command()[1:], "hooks", "approve"], env=env,
                          encoding="utf-8", timeout=30)
    try:
        child.expect_exact("pre_tool_call: /bin/true")
        child.expect_exact("Approve it? [y/N]")
        child.send("y\r")
        child.expect_exact("approved: pre_tool_call: /bin/true")
        child.expect_exact("post_tool_call: /bin/false")
        child.expect_exact("Approve it? [y/N]")
        child.send("\r")  # the default: no
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    rows = json.loads(hermes("hooks", "list", "--json").stdout)["hooks"]
    assert [(r["event"], bool(r["approved_at"])) for r in rows] == [("pre_tool_call", True), ("post_tool_call", False)]
