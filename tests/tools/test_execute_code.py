"""execute_code: a Python script the model writes calls hermes' tools as functions; each call runs as the model's
own do (guards, approval, after-hooks), only what the script prints comes back, and the script is held to its
deadline, its call limit and an interrupt as a terminal command is."""

import json
import os
import textwrap
import threading
import time

import pytest

from kernel import hookimpl
from kernel.types import Block
from plugins import approval, core_tools
from tests.conftest import Approver, sandboxed
from tests.tools.test_background import gone

OFF = {"sandbox": {"mode": "off"}}  # the approval plugin is not loaded unless a test adds it


@pytest.fixture(autouse=True)
def in_workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the script runs in the working folder, as a terminal command does


def run_script(make_agent, code: str, *plugins, config=OFF, **kwargs) -> dict:
    agent = make_agent(core_tools, *plugins, script=[{"tool_calls": [["execute_code", {"code": textwrap.dedent(code)}]]},
                                                     "done"], config=config, **kwargs)
    result = agent.run_conversation("go")
    [message] = [m for m in result["messages"] if m["role"] == "tool"]
    return json.loads(message["content"]) if message["content"].startswith("{") else message["content"]


class Watch:
    """A guard that blocks one command, and the after-hook's record of every call."""

    def __init__(self):
        self.seen = []

    @hookimpl
    def pre_tool_call(self, call, agent):
        if call.args.get("command") == "echo forbidden":
            return Block("that command is not for scripts")

    @hookimpl
    def post_tool_call(self, call, outcome, agent):
        self.seen.append((call.name, call.id, outcome.status))


SCRIPT = """
    import os
    from hermes_tools import terminal, write_file, read_file, ToolRefused
    write_file("notes.txt", "one\\ntwo\\nthree\\n")
    lines = read_file("notes.txt").splitlines()
    count = terminal("wc -l < notes.txt")
    blocked = terminal("echo forbidden")
    print(len(lines), count["output"].strip(), count["exit_code"], blocked)
    print("key:", os.environ.get("SECRET_API_KEY"))
"""


@pytest.mark.parametrize("box", ["off", pytest.param("workspace-write", marks=pytest.mark.skipif(
    not sandboxed(), reason="no sandbox can start here"))])
def test_a_script_calls_tools_through_the_hooks_and_only_its_output_comes_back(make_agent, tmp_path, monkeypatch, box,
                                                                              recorder):
    monkeypatch.setenv("SECRET_API_KEY", "sk-a-value-no-script-may-read")
    watch, events = Watch(), recorder("on_tool_start")
    config = {"sandbox": {"mode": box}}
    result = run_script(make_agent, SCRIPT, watch, config=config, callbacks=[events])
    assert result["exit_code"] == 0 and result["tool_calls"] == 4, result
    out = result["output"].splitlines()
    assert out[0] == "4 3 0 {'error': 'that command is not for scripts'}"  # read_file's 3 lines and its footer
    assert out[1] == "key: None"
    assert (tmp_path / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert result.get("sandbox") == (None if box == "off" else box)
    # each inner call went through the kernel's after-hooks with an id of its own; the script's own call last
    assert [name for name, _, _ in watch.seen] == ["write_file", "read_file", "terminal", "terminal", "execute_code"]
    assert [status for *_, status in watch.seen] == ["ok", "ok", "ok", "blocked", "ok"]
    assert len({call_id for _, call_id, _ in watch.seen}) == 5
    # the front ends see them start (the blocked one never did)
    assert [e["tool_name"] for e in events.of("on_tool_start")] == ["execute_code", "write_file", "read_file",
                                                                    "terminal"]


def test_the_model_reads_the_printout_not_the_tool_results(make_agent):
    code = """
        from hermes_tools import terminal
        total = sum(len(terminal(f"seq 1 {n}")["output"]) for n in (1000, 2000, 3000))
        print("characters:", total)
    """
    agent = make_agent(core_tools, script=[{"tool_calls": [["execute_code", {"code": textwrap.dedent(code)}]]}, "done"],
                       config=OFF)
    agent.run_conversation("count")
    [result] = [m["content"] for m in agent.scripted.requests[-1].messages if m["role"] == "tool"]
    assert json.loads(result) == {"exit_code": 0, "output": "characters: 26679\n", "tool_calls": 3}


def test_a_traceback_names_the_scripts_line_and_other_failures_are_said(make_agent):
    result = run_script(make_agent, """
        x = 1
        print("before")
        y = x / 0
    """)
    assert result["exit_code"] == 1 and result["output"] == "before\n"
    assert 'File "<script>", line 4' in result["errors"] and "y = x / 0" in result["errors"]
    assert "ZeroDivisionError" in result["errors"]
    assert run_script(make_agent, "   ") == {"error": "execute_code: 'code' is empty"}
    config = {**OFF, "code_execution": {"python": "/nonexistent/python3"}}
    assert run_script(make_agent, "print(1)", config=config)["error"].startswith(
        "execute_code: cannot start /nonexistent/python3:")


@pytest.mark.skipif(not sandboxed(), reason="no sandbox can start here")
def test_a_python_below_tmp_outside_the_workspace_runs_in_the_sandbox(make_agent, tmp_path, monkeypatch):
    """The sandbox's /tmp is its own: a virtual environment below the real one (hermes installed in one there, as
    CI's is) was hidden, and every script failed with 'execvp ... No such file'."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    config = {"sandbox": {"mode": "workspace-write"}, "code_execution": {"python": str(tmp_path / "venv/bin/python")}}
    result = run_script(make_agent, "import sys\nprint(sys.prefix)", config=config)
    assert (result["exit_code"], result["output"], result["sandbox"]) == (0, f"{tmp_path / 'venv'}\n", "workspace-write")


def test_strict_mode_runs_hermes_python_in_a_folder_of_its_own(make_agent, tmp_path, monkeypatch):
    """code_execution.mode (hermes-agent's): project runs the active virtual environment's Python in the working
    folder; strict, hermes' own in a temporary folder that is gone afterwards."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "venv"))
    code = "import os, sys\nprint(sys.prefix)\nprint(os.getcwd())"
    project = run_script(make_agent, code)["output"].splitlines()
    assert project == [str(tmp_path / "venv"), str(tmp_path)]
    strict = run_script(make_agent, code, config={**OFF, "code_execution": {"mode": "Strict"}})["output"].splitlines()
    assert strict[0] == sys.prefix and os.path.basename(strict[1]).startswith("hermes-code-")
    assert not os.path.exists(strict[1])


def test_what_a_script_may_call_is_limited_and_refusals_raise(make_agent):
    code = """
        import hermes_tools
        from hermes_tools import terminal, ToolRefused
        print(sorted(n for n in dir(hermes_tools) if not n.startswith("_") and n != "ToolRefused"))
        for n in range(3):
            try:
                print(terminal(f"echo {n}")["output"].strip())
            except ToolRefused as exc:
                print("refused:", exc)
        try:
            terminal("sleep 30", background=True)
        except TypeError as exc:
            print("no background")
        hermes_tools._channel.write(b"not json\\n"); hermes_tools._channel.flush()
        print(hermes_tools._channel.readline().decode().strip())
    """
    config = {**OFF, "code_execution": {"max_tool_calls": 2}}
    result = run_script(make_agent, code, config=config, toolsets=["code_execution", "terminal", "safe"])
    assert result["output"].splitlines() == [
        "['read_file', 'search_files', 'terminal']",  # what this agent offers of the tools scripts may call
        "0", "1", "refused: this script made 2 tool calls, the most one may (code_execution.max_tool_calls)",
        "no background", '{"refused": "not a call hermes_tools sends"}']
    result = run_script(make_agent, "from hermes_tools import write_file", toolsets=["code_execution", "safe"])
    assert "ImportError: cannot import name 'write_file'" in result["errors"]
    # code_execution.tools names others: a plugin's tool too (never execute_code itself)
    config = {**OFF, "code_execution": {"tools": ["process", "execute_code", "nonesuch"]}}
    result = run_script(make_agent, "import hermes_tools\nfrom hermes_tools import process\nprint(process(action='list'),"
                                    " hasattr(hermes_tools, 'execute_code'), hasattr(hermes_tools, 'terminal'))",
                        config=config)
    assert result["output"] == "{'processes': []} False False\n"


def test_the_deadline_and_an_interrupt_kill_the_script_and_what_it_started(make_agent, tmp_path):
    code = """
        import subprocess, time
        child = subprocess.Popen(["sleep", "60"])
        open("child.pid", "w").write(str(child.pid))
        print("started", flush=True)
        time.sleep(60)
    """
    started = time.monotonic()
    result = run_script(make_agent, code, config={**OFF, "code_execution": {"timeout": 1}})
    assert time.monotonic() - started < 15
    assert result["timed_out"] is True and "code_execution.timeout" in result["note"]
    assert result["output"] == "started\n"
    assert gone(int((tmp_path / "child.pid").read_text()))

    agent = make_agent(core_tools, script=[{"tool_calls": [["execute_code", {"code": textwrap.dedent(code)}]]}, "done"],
                       config=OFF)
    (tmp_path / "child.pid").unlink()

    def interrupt_when_started():
        while not (tmp_path / "child.pid").exists():
            time.sleep(0.05)
        agent.interrupt()

    threading.Thread(target=interrupt_when_started, daemon=True).start()
    started = time.monotonic()
    [said] = [m["content"] for m in agent.run_conversation("go")["messages"] if m["role"] == "tool"]
    assert time.monotonic() - started < 15
    assert json.loads(said)["interrupted"] is True and "the script was killed" in json.loads(said)["note"]
    assert gone(int((tmp_path / "child.pid").read_text()))


class ScriptsOnly(Approver):
    @hookimpl
    def approve_tool_call(self, tool_name, args, message, rule_key):
        self.asked.append((tool_name, message, rule_key))
        return "once" if tool_name == "execute_code" else "deny"


def test_the_approval_plugin_asks_about_a_script_outside_the_sandbox_whole(make_agent):
    code = "from hermes_tools import terminal\nprint(terminal('echo hi')['output'])"
    config = {"sandbox": {"mode": "off"}}
    # nobody to ask: it does not run
    result = run_script(make_agent, code, approval, config=config)
    assert result["error"].startswith("not run: A Python script (execute_code)") and "nobody" in result["error"]
    # asked once with the script in the question; 'session' lets the next script run unasked
    approver = Approver("session")
    agent = make_agent(core_tools, approval, script=[{"tool_calls": [["execute_code", {"code": code}]]},
                                                     {"tool_calls": [["execute_code", {"code": code}]]}, "done"],
                       config=config, callbacks=[approver])
    outputs = [json.loads(m["content"])["output"] for m in agent.run_conversation("go")["messages"]
               if m["role"] == "tool"]
    assert outputs == ["hi\n\n", "hi\n\n"]
    [(tool, message, key)] = approver.asked
    assert (tool, key) == ("execute_code", "execute_code") and "print(terminal('echo hi')['output'])" in message
    # a flagged command inside an approved script is still asked about (and denied here)
    approver = ScriptsOnly("once")
    result = run_script(make_agent, "from hermes_tools import terminal\nprint(terminal('git reset --hard'))",
                        approval, config=config, callbacks=[approver])
    assert [key for *_, key in approver.asked] == ["execute_code", "git_reset_hard"]
    assert result["tool_calls"] == 1 and result["exit_code"] == 0
    assert "(denied by the user)" in result["output"]
    # allowed in config.yaml, approvals off, or in the sandbox: nobody is asked
    in_sandbox = [{"sandbox": {"mode": "workspace-write"}}] if sandboxed() else []
    for allowed in ({"command_allowlist": ["execute_code"]}, {"approvals": {"mode": "off"}}, *in_sandbox):
        approver = Approver("deny")
        assert run_script(make_agent, code, approval, config={**config, **allowed}, callbacks=[approver])["output"] == "hi\n\n"
        assert approver.asked == []


def test_hermes_run_runs_a_script(hermes, hermes_home, tmp_path):
    script = tmp_path / "script.json"
    code = "from hermes_tools import terminal, search_files\nprint(terminal('echo from the script')['output'])"
    script.write_text(json.dumps([{"tool_calls": [["execute_code", {"code": code}]]}, "done"]))

    def run(*flags):
        out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", *flags, "go", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        [result] = [json.loads(m["content"]) for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
        return result

    if sandboxed():  # in the sandbox it runs unasked, as a command no rule flags does
        assert run() == {"exit_code": 0, "output": "from the script\n\n", "tool_calls": 1, "sandbox": "workspace-write"}
    (hermes_home / "config.yaml").write_text("sandbox:\n  mode: off\n")
    # outside it nobody can approve it in a pipe: the model reads why, and how to allow it
    refused = run()["error"]
    assert "nobody was available to approve it" in refused and "'always' stops this question" in refused
    assert run("--yolo")["output"] == "from the script\n\n"
    (hermes_home / "config.yaml").write_text("code_execution:\n  timeout: 0\n")
    check = hermes("config", "check")
    assert check.returncode != 0 and "code_execution.timeout" in check.stdout + check.stderr
