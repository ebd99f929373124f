"""The terminal tool's sandbox (bubblewrap): what a command may write, see and
reach, with a victim outside the working folder and outside the temporary
folder. Each destructive command is first run without the sandbox on a copy
of the victim, so the test proves it would destroy it."""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from hermes.host.config import Config
from kernel.types import ToolContext, ToolError
from plugins import core_tools
from plugins.core_tools import sandbox
from tests.conftest import ROOT, hermes_command, sandboxed

needs_sandbox = pytest.mark.skipif(not sandboxed(), reason="no sandbox can start here (bubblewrap missing)")
KEY = "sk-key-in-hermes-environment-0123456789"


class Agent:
    interrupted = False

    def emit(self, *args, **kwargs):
        pass


def terminal(config: dict | None = None):
    tool = core_tools.make_terminal(Config(config or {}))
    ctx = ToolContext(agent=Agent(), tool_name="terminal", tool_call_id="c", task_id="t", session_id="s", turn_id="u")
    return lambda command, **kw: tool.handler({"command": command, **kw}, ctx)


@pytest.fixture
def victim_dir():
    """A folder outside the working folder and outside /tmp (/var/tmp is on the read-only root)."""
    folder = tempfile.mkdtemp(prefix="hermes-victim-", dir="/var/tmp")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


DESTROYERS = [  # {v}: the victim file
    "rm -f {v}",
    "unlink {v}",
    "echo gone > {v}",
    "truncate -s 0 {v}",
    "sed -i 's/precious/gone/' {v}",
    "python3 -Ic 'import os, sys; os.remove(sys.argv[1])' {v}",
    "find $(dirname {v}) -name victim.txt -delete",
    "nice -n 10 rm -f {v}",
    "echo {v} | xargs -n 1 rm -f",
    "ln -s {v} link && echo gone > link",
    "bash <<< 'rm -f {v}'",
    "cp /dev/null {v}",
]


def _intact(path: str) -> bool:
    try:
        with open(path) as f:
            return f.read() == "precious"
    except OSError:
        return False


@needs_sandbox
@pytest.mark.parametrize("command", DESTROYERS)
def test_a_victim_outside_the_workspace_survives_what_destroys_it_without_the_sandbox(command, workspace,
                                                                                      victim_dir):
    victim = os.path.join(victim_dir, "victim.txt")
    with open(victim, "w") as f:
        f.write("precious")
    plain = terminal({"sandbox": {"mode": "off"}})(command.format(v=victim))
    assert not _intact(victim), f"not destructive without the sandbox: {plain}"  # proven on the copy first
    with open(victim, "w") as f:
        f.write("precious")
    for name in ("link",):
        (workspace / name).unlink(missing_ok=True)
    result = terminal()(command.format(v=victim))
    assert _intact(victim), result
    assert result["sandbox"] == "workspace-write"


@needs_sandbox
def test_the_workspace_and_a_private_tmp_are_writable(workspace):
    run = terminal()
    result = run("mkdir -p build && echo made > build/out.txt && echo temp > /tmp/scratch && cat /tmp/scratch && "
                 "git init -q repo && git -C repo status --short && echo git-ok")
    assert result["exit_code"] == 0, result["output"]
    assert (workspace / "build" / "out.txt").read_text() == "made\n" and "temp" in result["output"]
    assert "git-ok" in result["output"]
    assert not os.path.exists("/tmp/scratch")  # its /tmp was its own
    readonly = terminal({"sandbox": {"mode": "read-only"}})("echo x > here.txt; echo y > /tmp/y && cat /tmp/y")
    assert not (workspace / "here.txt").exists() and "y" in readonly["output"]
    extra = workspace.parent / "extra"
    extra.mkdir()
    assert terminal({"sandbox": {"mode": "read-only", "writable": [str(extra)]}})(
        f"echo ok > {extra}/f")["exit_code"] == 0 and (extra / "f").read_text() == "ok\n"


@needs_sandbox
def test_a_writable_folder_that_is_not_there_is_said_once_not_ignored(workspace, hermes, hermes_home, caplog):
    """A typo in sandbox.writable was skipped unsaid: the command's writes failed "Read-only file system"."""
    missing = str(workspace.parent / "extar")
    run = terminal({"sandbox": {"writable": [missing]}})
    with caplog.at_level("WARNING"):
        assert run("true")["exit_code"] == 0 and run("true")["exit_code"] == 0
    said = [r.getMessage() for r in caplog.records if "sandbox.writable" in r.getMessage()]
    assert said == [f"sandbox.writable: {missing} is not a folder here; commands cannot write it"]
    (hermes_home / "config.yaml").write_text(f"sandbox:\n  writable: ['{missing}']\n")
    shown = hermes("sandbox")
    assert f"not a folder (sandbox.writable): {missing}: commands cannot write it" in shown.stdout, shown.stdout
    assert json.loads(hermes("sandbox", "--json").stdout)["not_folders"] == [missing]


@needs_sandbox
def test_no_key_is_readable_through_proc_or_the_data_folder(workspace, hermes_home, monkeypatch):
    monkeypatch.setenv("MY_PROVIDER_API_KEY", KEY)  # a secret by its name: scrubbed from every tool
    (hermes_home / "state.db").write_text(f"the store holds {KEY}")
    (hermes_home / "config.yaml").write_text("model: x\n")
    result = terminal()(f"cat /proc/$PPID/environ /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; "
                        f"ls -a {hermes_home}; cat {hermes_home}/state.db {hermes_home}/config.yaml 2>&1; "
                        "ps -eo pid,comm")
    out = result["output"]
    for encoded in (KEY, KEY[::-1], base64.b64encode(KEY.encode()).decode(), KEY.encode().hex()):
        assert encoded not in out, out
    assert "No such file" in out  # hermes' folder is an empty one in there
    assert "python" not in out.split("PID")[-1]  # hermes' process is not in its PID namespace


@needs_sandbox
def test_network_off_means_no_connection(workspace):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    threading.Thread(target=lambda: server.accept(), daemon=True).start()
    probe = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\""
    try:
        assert "connected" in terminal()(probe)["output"]  # network on (the default): the same host answers
        offline = terminal({"sandbox": {"network": False}})(probe)
        assert "connected" not in offline["output"] and offline["exit_code"] != 0
    finally:
        server.close()


def test_without_a_sandbox_it_says_so_once_or_refuses_when_required(workspace, monkeypatch, caplog):
    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "bwrap" else which(name, *a, **k))
    monkeypatch.setattr(sandbox, "_said", set())
    with caplog.at_level(logging.WARNING, logger="hermes.sandbox"):
        first, second = terminal()("echo hi"), terminal()("echo again")
    assert first["exit_code"] == 0 and "sandbox" not in first and second["output"] == "again\n"
    said = [r.getMessage() for r in caplog.records if r.name == "hermes.sandbox"]
    assert len(said) == 1 and "bubblewrap (bwrap) is not installed" in said[0]
    with pytest.raises(ToolError, match="sandbox.required is set and no sandbox can start: bubblewrap"):
        terminal({"sandbox": {"required": True}})("echo hi")
    with pytest.raises(ToolError, match="sandbox.mode is 'strict'; use one of workspace-write, read-only, off"):
        terminal({"sandbox": {"mode": "strict"}})("echo hi")


@needs_sandbox
def test_a_sandboxed_command_dies_with_hermes_even_on_kill_9(tmp_path, hermes_home):
    started, victim = tmp_path / "started", tmp_path / "victim"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [["terminal", {"command": f"touch {started}; sleep 3; touch {victim}"}]]}, "never"]))
    env = {**os.environ, "HERMES_HOME": str(hermes_home),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
    proc = subprocess.Popen([*hermes_command(), "run", "--yolo", "--api-mode", "scripted", "--base-url", str(script),
                             "go"], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    time.sleep(3.5)  # past the moment the command would have touched the victim
    assert not victim.exists()


def test_hermes_sandbox_says_whether_one_can_start_and_why_not(hermes, hermes_home, tmp_path):
    shown = hermes("sandbox", "--json")
    info = json.loads(shown.stdout)
    assert info["mode"] == "workspace-write" and info["sandboxed"] is sandboxed() and shown.returncode == (not sandboxed())
    assert str(hermes_home) in info["hidden"] and info["workspace"] == os.path.realpath(os.getcwd())
    (hermes_home / "config.yaml").write_text(f"terminal:\n  cwd: {tmp_path}\n")  # where the tools start
    assert json.loads(hermes("sandbox", "--json").stdout)["workspace"] == str(tmp_path.resolve())
    plain = hermes("sandbox", env={"PATH": str(tmp_path)})  # no bwrap on this PATH
    assert plain.returncode == 1 and "Tool commands run without a sandbox: bubblewrap (bwrap) is not installed" \
        in plain.stdout
    (hermes_home / "config.yaml").write_text("sandbox:\n  mode: 'off'\n")
    off = hermes("sandbox", "--json")
    assert off.returncode == 0 and json.loads(off.stdout)["sandboxed"] is False
    (hermes_home / "config.yaml").write_text("sandbox:\n  mode: strict\n")
    wrong = hermes("sandbox")
    assert wrong.returncode == 2 and "sandbox.mode: expected one of workspace-write, read-only, off, got 'strict'" \
        in wrong.stderr  # the config's own check, before any command runs
