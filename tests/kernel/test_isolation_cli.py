"""Plugin isolation through the CLI, with real plugin packages: wheels built
here and pip-installed (offline) into a folder on PYTHONPATH, then driven the
way a user drives hermes. Each test enables the plugins it is about and
disables the others in config.yaml."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, hermes_command
from tests.wheels import build_wheel, pip_install_target

PLUGINS = {
    "exit-at-import": "import sys\nsys.exit(3)\n",
    "broken-import": "import definitely_missing_module_xyz\n",
    "typo": "from kernel import hookimpl\n\n@hookimpl\ndef pre_tool_cal(tool_name):\n    return None\n",
    "exit-in-hook": "import sys\nfrom kernel import hookimpl\n\n@hookimpl\ndef pre_llm_call():\n    sys.exit(4)\n",
    "kbi-in-hook": "from kernel import hookimpl\n\n@hookimpl\ndef on_session_start():\n    raise KeyboardInterrupt\n",
    "printer": '''
import os, subprocess, sys
from kernel import hookimpl
print("import noise")

@hookimpl
def pre_llm_call():
    print("hook noise")
    sys.stdout.flush()
    os.write(1, b"fd noise\\n")
    subprocess.run(["echo", "child noise"])
''',
    "hang": '''
import os, time
from pathlib import Path
from kernel import hookimpl

@hookimpl
def pre_llm_call():
    Path(os.environ["HERMES_HOME"], "hang-entered").write_text("yes")
    time.sleep(120)
''',
    "styles": '''
import json, os
from pathlib import Path
from kernel import hookimpl

@hookimpl
def on_session_start(session_id, platform="(default)", *, reason="(default)", **rest):
    Path(os.environ["HERMES_HOME"], "styles.json").write_text(json.dumps(
        {"session_id": bool(session_id), "platform": platform, "reason": reason, "rest": sorted(rest)}))
''',
    "slow-import": "import time\ntime.sleep(120)\n",
    "thread-left": '''
import threading, time
from kernel import hookimpl

@hookimpl
def on_session_start():
    threading.Thread(target=time.sleep, args=(300,), name="left-behind").start()  # not a daemon
    threading.Thread(target=time.sleep, args=(0.3,), name="ends-soon").start()
''',
    "front-end-raises": '''
from kernel import hookimpl

class Display:
    def end_answer(self, text):
        raise RuntimeError("display broke")

@hookimpl  # loaded after the built-in terminal, so asked before it
def terminal_front_end():
    return Display()
''',
    "front-end-wrong": "from kernel import hookimpl\n\n@hookimpl\ndef terminal_front_end():\n"
                       "    return 'a string'\n",
    "command-raises": '''
import click
from kernel import hookimpl

@click.group("weather")
def weather():
    """Weather commands."""

@weather.command("today")
def today():
    """Today's weather."""
    raise RuntimeError("no forecast")

@click.command("quit-three")
def quit_three():
    """Exit with 3."""
    raise SystemExit(3)

@hookimpl
def register_commands(cli):
    cli.add_command(weather)
    cli.add_command(quit_three)
''',
    "closes-stdout": "import sys\nfrom kernel import hookimpl\n\n@hookimpl\ndef on_session_start():\n"
                     "    sys.stdout.close()\n",
    "atexit-hang": "import atexit, time\nfrom kernel import hookimpl\n\n@hookimpl\ndef on_session_start():\n"
                   "    atexit.register(time.sleep, 300)\n",
    "ssl-threads": '''
import atexit, os, ssl, threading
from pathlib import Path
from kernel import hookimpl

def busy():  # inside OpenSSL most of the time, as a thread asking a server for updates over https
    while True:
        ssl.create_default_context()

@hookimpl
def on_session_start():
    for _ in range(4):
        threading.Thread(target=busy, daemon=True).start()
    atexit.register(lambda: Path(os.environ["HERMES_HOME"], "atexit-ran").write_text("yes"))
''',
    "helper-child": '''
import os, subprocess, sys
from pathlib import Path
from kernel import hookimpl

@hookimpl
def on_session_start():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # inherits 0, 1 and 2
    Path(os.environ["HERMES_HOME"], "helper.pid").write_text(str(child.pid))
''',
    "clash-a": None,
    "clash-b": None,
    "stuck-tool": '''
import os, time
from pathlib import Path
from kernel import hookimpl
from kernel.types import Tool

def stuck(args, ctx):
    Path(os.environ["HERMES_HOME"], "tool-entered").write_text("yes")
    for _ in range(1200):  # stuck in Python, never answering
        time.sleep(0.1)
    return "finished"

@hookimpl
def register_tools(register):
    register(Tool("stuck", "never ends", {"type": "object", "properties": {}}, stuck))
    register(Tool("stuck_beside", "never ends, beside others", {"type": "object", "properties": {}}, stuck,
                  parallel_safe=True))
''',
}
CLASH = '''
from kernel import hookimpl
from kernel.types import Tool

@hookimpl
def register_tools(register):
    register(Tool("shared_tool", "clash", {"type": "object", "properties": {}}, lambda a, c: "NAME"))
'''


def _module(name: str) -> str:
    return "hx_" + name.replace("-", "_")


def _wheel(out: Path, name: str, source: str, version: str = "1.0") -> Path:
    return build_wheel(out, f"hermes-{name}", version, {f"{_module(name)}.py": source},
                       {"hermes.plugins": {name: _module(name)}})


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The plugin packages, pip-installed into one folder."""
    root = tmp_path_factory.mktemp("isolation-site")
    wheels = [_wheel(root, name, source or CLASH.replace("NAME", name)) for name, source in PLUGINS.items()]
    target = root / "site"
    pip_install_target(target, wheels)
    return target


@pytest.fixture
def run(site, hermes_home):
    """``run(*args, enable=[...], config={...})``: hermes with only the named
    test plugins enabled (built-ins stay on)."""

    def call(*args, enable=(), config=None, timeout=60, input=None):
        late = ["late-broken"] if any(site.glob("hermes_late_broken-*")) else []  # one test installs it
        data = {"plugins": {"disabled": [n for n in [*PLUGINS, *late] if n not in enable]}}  # a name not installed warns
        for key, value in (config or {}).items():
            data.setdefault(key, {}).update(value) if isinstance(value, dict) else data.__setitem__(key, value)
        (hermes_home / "config.yaml").write_text(yaml.safe_dump(data))
        return subprocess.run(hermes_command() + [str(a) for a in args], capture_output=True, text=True,
                              env=_env(site, hermes_home), timeout=timeout, input=input)

    return call


def _env(site: Path, home: Path) -> dict:
    env = dict(os.environ, HERMES_HOME=str(home))
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    return env


@pytest.fixture
def script(tmp_path):
    def write(*steps):
        path = tmp_path / "script.json"
        path.write_text(json.dumps(list(steps)))
        return path

    return write


def rows(out) -> dict:
    assert out.returncode == 0, out.stderr
    return {r["name"]: r for r in json.loads(out.stdout)}


def test_broken_plugins_are_errors_right_after_install(run, site, tmp_path):
    everything = [n for n in PLUGINS if n != "slow-import"]
    out = run("plugins", "list", "--json", enable=everything)
    listed = rows(out)
    assert listed["exit-at-import"]["status"] == "error"
    assert "SystemExit(3)" in listed["exit-at-import"]["error"]
    assert listed["broken-import"]["status"] == "error" and "definitely_missing_module_xyz" in listed["broken-import"]["error"]
    assert listed["typo"]["error"] == "unknown hook 'pre_tool_cal' (did you mean 'pre_tool_call'?)"
    assert listed["printer"]["status"] == "enabled" and "import noise" in out.stderr  # printed, not in the JSON
    # steady state: the cached answer, nothing third-party imported
    again = run("plugins", "list", "--json", enable=everything)
    assert rows(again)["exit-at-import"]["status"] == "error" and "import noise" not in again.stderr
    # a new package, installed by pip: listed as broken at once
    pip_install_target(site, [_wheel(tmp_path, "late-broken", "raise RuntimeError('broken at import')\n")])
    fresh = rows(run("plugins", "list", "--json", enable=[*everything, "late-broken"]))
    assert fresh["late-broken"]["status"] == "error" and "broken at import" in fresh["late-broken"]["error"]
    text = run("plugins", "list", enable=[*everything, "late-broken"])
    assert text.returncode == 0 and "late-broken" in text.stdout and "Traceback" not in text.stderr
    # and nothing locks the user out
    assert run("--help", enable=everything).returncode == 0
    assert run("plugins", "disable", "exit-at-import", enable=everything).returncode == 0


def test_an_import_that_hangs_is_abandoned(run):
    started = time.monotonic()
    listed = rows(run("plugins", "list", "--json", enable=["slow-import"], config={"plugins": {"hook_timeout": 1}}))
    assert time.monotonic() - started < 15
    assert listed["slow-import"]["status"] == "error"
    assert listed["slow-import"]["error"] == "import failed: HookTimeout: timed out after 1s"


def test_exit_and_keyboard_interrupt_in_hooks_do_not_end_the_command(run, script):
    out = run("run", "--api-mode", "scripted", "--base-url", script("fine"), "hi", enable=["exit-in-hook", "kbi-in-hook"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "fine"
    assert "plugin exit-in-hook: hook pre_llm_call raised SystemExit(4): the plugin tried to end the process" in out.stderr
    assert "plugin kbi-in-hook: hook on_session_start raised KeyboardInterrupt" in out.stderr
    listed = run("plugins", "list", enable=["exit-in-hook", "kbi-in-hook"])
    line = next(line for line in listed.stdout.splitlines() if line.startswith("exit-in-hook"))
    assert "[failed in an earlier run: pre_llm_call; see `hermes plugins info exit-in-hook`]" in line
    info = json.loads(run("plugins", "info", "exit-in-hook", "--json", enable=["exit-in-hook"]).stdout)
    assert "SystemExit(4)" in info["failures"]["pre_llm_call"]


def test_a_hanging_hook_is_abandoned_at_its_deadline(run, script):
    started = time.monotonic()
    out = run("run", "--api-mode", "scripted", "--base-url", script("answered"), "hi", enable=["hang"],
              config={"plugins": {"hook_timeout": 1}})
    assert time.monotonic() - started < 20
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "answered"
    assert "plugin hang: hook pre_llm_call raised HookTimeout: timed out after 1s" in out.stderr
    info = json.loads(run("plugins", "info", "hang", "--json", enable=["hang"]).stdout)
    assert "timed out" in info["failures"]["pre_llm_call"]


@pytest.mark.parametrize("plugin, warning", [
    ("thread-left", "exiting without waiting for 1 thread(s) that plugin code left running: left-behind"),
    ("atexit-hang", "exiting without waiting for plugin code still running at exit (an atexit handler)"),
])
def test_what_plugin_code_leaves_running_does_not_keep_the_command_alive(run, script, plugin, warning):
    """Python's exit waits for every non-daemon thread and atexit handler: one
    that never ends kept `hermes run` alive for ever after its answer. The
    teardown gets EXIT_GRACE (2 s); then what still runs is named (a thread
    that ended within the grace is not) and the exit code stays."""
    for args in ((), ("--json",)):
        started = time.monotonic()
        out = run("run", *args, "--api-mode", "scripted", "--base-url", script("answered"), "hi",
                  enable=[plugin], timeout=30)
        took = time.monotonic() - started
        assert out.returncode == 0, out.stderr
        assert (json.loads(out.stdout)["final_response"] if args else out.stdout.strip()) == "answered"
        assert 2 <= took < 20, took
        assert f"hermes: warning: {warning}\n" in out.stderr, out.stderr


def test_a_plugins_daemon_threads_inside_openssl_at_exit_do_not_crash_the_command(run, script, hermes_home):
    """Four daemon threads making SSL contexts when the command ends: OpenSSL's exit cleanup freed what they used and
    the process died of SIGSEGV after its answer (exit 139, 10 runs in 10 here). The last exit handler now ends the
    process while such a thread is alive, after the other exit handlers (the plugin's own ran) and with the code."""
    for args in ((), ("--json",)) * 3:
        (hermes_home / "atexit-ran").unlink(missing_ok=True)
        out = run("run", *args, "--api-mode", "scripted", "--base-url", script("answered"), "hi", enable=["ssl-threads"])
        assert out.returncode == 0, (out.returncode, out.stderr)
        assert (json.loads(out.stdout)["final_response"] if args else out.stdout.strip()) == "answered"
        assert (hermes_home / "atexit-ran").read_text() == "yes"


def test_a_command_whose_plugin_code_left_nothing_behind_exits_without_a_word(run, script):
    out = run("run", "--api-mode", "scripted", "--base-url", script("answered"), "hi", enable=["styles"])
    assert out.returncode == 0 and out.stdout.strip() == "answered" and "warning" not in out.stderr  # never fired


@pytest.mark.parametrize("plugin", ["front-end-raises", "front-end-wrong"])
def test_a_front_end_that_fails_to_show_the_answer_does_not_lose_it(run, script, plugin):
    """`hermes run` hands the answer to the display terminal_front_end gave; a
    display that raises (or is not one) used to end the command in a traceback
    with the answer unshown."""
    out = run("run", "--api-mode", "scripted", "--base-url", script("the answer"), "hi", enable=[plugin])
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert out.stdout.strip() == "the answer"
    if plugin == "front-end-raises":
        assert "hook end_answer raised RuntimeError: display broke" in out.stderr


def test_a_plugin_command_that_fails_is_one_line_naming_the_plugin(run):
    out = run("weather", "today", enable=["command-raises"])
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip() == ("hermes: error: `hermes weather` (plugin command-raises) failed: "
                                  "RuntimeError: no forecast (at hx_command_raises.py:12)")
    assert run("quit-three", enable=["command-raises"]).returncode == 3  # a command may choose its exit code
    assert "Today's weather." in run("weather", "today", "--help", enable=["command-raises"]).stdout


def test_a_plugin_command_whose_reader_left_stops_quietly(site, hermes_home):
    """`hermes prompt show | head -1`: the pipe closes under the command. That
    is click's to end quietly (exit 1), not a plugin command's failure."""
    late = ["late-broken"] if any(site.glob("hermes_late_broken-*")) else []  # a name not installed warns
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"disabled": [*PLUGINS, *late]}}))
    proc = subprocess.Popen(hermes_command() + ["prompt", "show"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(site, hermes_home))
    proc.stdout.close()  # the reader is gone before the first line
    assert proc.wait(timeout=60) == 1
    assert proc.stderr.read() == ""


def test_a_plugin_closing_sys_stdout_does_not_break_the_json_document(run, script):
    """The document goes to the real stdout, kept aside; putting stdout back
    at the end flushed the closed sys.stdout and ended in a traceback."""
    out = run("run", "--json", "--api-mode", "scripted", "--base-url", script("fine"), "hi", enable=["closes-stdout"])
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert json.loads(out.stdout)["final_response"] == "fine"


def test_a_printing_plugin_cannot_corrupt_json(run, script):
    out = run("run", "--json", "--api-mode", "scripted", "--base-url", script("fine"), "hi", enable=["printer"])
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["final_response"] == "fine"  # stdout is the document alone
    for noise in ("import noise", "hook noise", "fd noise", "child noise"):
        assert noise in out.stderr
    assert json.loads(run("plugins", "list", "--json", enable=["printer"]).stdout)
    sessions = run("sessions", "list", "--json", enable=["printer"])
    assert json.loads(sessions.stdout)[0]["message_count"] == 2 and "import noise" in sessions.stderr


def _interrupted_once_inside(site, home, steps, marker) -> tuple:
    """``hermes run`` with a plugin that writes ``marker`` once inside its code, then one Ctrl+C:
    it must end with 130 within 3 s. Its (stdout, stderr)."""
    proc = subprocess.Popen(hermes_command() + ["run", "--api-mode", "scripted", "--base-url", str(steps), "go"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(site, home))
    deadline = time.monotonic() + 20
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the plugin code never ran"
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=10)
    assert time.monotonic() - sent < 3
    assert proc.returncode == 130, err
    return out, err


def test_ctrl_c_inside_a_hook_is_the_users_interrupt(site, hermes_home, script):
    (hermes_home / "config.yaml").write_text(yaml.safe_dump(
        {"plugins": {"disabled": [n for n in PLUGINS if n != "hang"], "hook_timeout": 60}}))
    out, err = _interrupted_once_inside(site, hermes_home, script("never"), hermes_home / "hang-entered")
    assert "interrupted" in err and "Traceback" not in err and "Aborted!" not in err
    assert out.strip() == ""


def test_a_plugin_tool_that_never_ends_is_stopped_at_tools_timeout(run, script):
    started = time.monotonic()
    out = run("run", "--json", "--api-mode", "scripted", "--base-url", script({"tool_calls": [["stuck", {}]]}, "done"),
              "go", enable=["stuck-tool"], config={"tools": {"timeout": 1}})
    assert time.monotonic() - started < 20
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["final_response"] == "done"
    tool = [m for m in result["messages"] if m["role"] == "tool"][0]
    assert json.loads(tool["content"]) == {"error": "stuck did not finish within tools.timeout (1 s) and was stopped"}
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("calls", [[["stuck", {}]], [["stuck_beside", {}]] * 2], ids=["alone", "in-parallel"])
def test_the_first_ctrl_c_stops_a_stuck_plugin_tool(site, hermes_home, script, calls):
    (hermes_home / "config.yaml").write_text(yaml.safe_dump(
        {"plugins": {"disabled": [n for n in PLUGINS if n != "stuck-tool"]}, "tools": {"timeout": 0}}))
    steps = script({"tool_calls": calls}, "never")
    out, err = _interrupted_once_inside(site, hermes_home, steps, hermes_home / "tool-entered")
    assert "interrupted" in err and "Traceback" not in err
    listed = subprocess.run(hermes_command() + ["sessions", "list", "--json"], capture_output=True, text=True,
                            env=_env(site, hermes_home), timeout=60)
    assert json.loads(listed.stdout)[0]["message_count"] >= 2  # the prompt and the tool call were stored


@pytest.mark.parametrize("as_json", [False, True])
def test_a_helper_child_left_running_does_not_keep_the_reader_of_stdout_waiting(site, hermes_home, script, tmp_path,
                                                                                 as_json):
    """``$(hermes run ...)`` reads stdout to its end (stderr is the terminal's): a plugin's child holding
    descriptor 1 kept it waiting until the child ended. The child gets stderr there; stdout is a
    descriptor no child inherits."""
    (hermes_home / "config.yaml").write_text(yaml.safe_dump(
        {"plugins": {"disabled": [n for n in PLUGINS if n != "helper-child"]}}))
    started = time.monotonic()
    with open(tmp_path / "stderr", "w") as stderr:
        out = subprocess.run(hermes_command() + ["run", *["--json"] * as_json, "--api-mode", "scripted",
                                                 "--base-url", str(script("fine")), "hi"],
                             stdout=subprocess.PIPE, stderr=stderr, text=True, env=_env(site, hermes_home), timeout=90)
    try:
        assert time.monotonic() - started < 30, "the reader waited for the helper"
        assert out.returncode == 0, (tmp_path / "stderr").read_text()
        assert (json.loads(out.stdout)["final_response"] if as_json else out.stdout) == ("fine" if as_json else "fine\n")
    finally:
        os.kill(int((hermes_home / "helper.pid").read_text()), signal.SIGKILL)


def test_every_parameter_style_through_the_cli(run, script, hermes_home):
    import pluggy

    out = run("run", "--api-mode", "scripted", "--base-url", script("ok"), "hi", enable=["styles"])
    assert out.returncode == 0, out.stderr
    got = json.loads((hermes_home / "styles.json").read_text())
    passes_defaults = tuple(int(p) for p in pluggy.__version__.split(".")[:2]) >= (1, 7)
    assert got == {"session_id": True, "platform": "run" if passes_defaults else "(default)",
                   "reason": "(default)", "rest": []}


def test_a_tool_clash_is_announced_and_choosable(run, script):
    steps = script({"tool_calls": [["shared_tool", {}]]}, "done")
    out = run("run", "--json", "--api-mode", "scripted", "--base-url", steps, "go", enable=["clash-a", "clash-b"])
    assert out.returncode == 0, out.stderr
    assert ("tool 'shared_tool' is registered by plugins 'clash-b', 'clash-a'; using 'clash-a' "
            "(choose with tools.prefer: {shared_tool: PLUGIN} in config.yaml)") in out.stderr
    assert [m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"] == ["clash-a"]
    info = json.loads(run("plugins", "info", "clash-b", "--json", enable=["clash-a", "clash-b"]).stdout)
    assert info["shadowed_tools"] == ["shared_tool (shadowed by 'clash-a')"] and info["tools"] == []
    chosen = run("run", "--json", "--api-mode", "scripted", "--base-url", steps, "go", enable=["clash-a", "clash-b"],
                 config={"tools": {"prefer": {"shared_tool": "clash-b"}}})
    assert "shared_tool" not in chosen.stderr
    assert [m["content"] for m in json.loads(chosen.stdout)["messages"] if m["role"] == "tool"] == ["clash-b"]


def test_doctor_names_the_plugins_that_failed_to_load_and_still_checks_the_rest(run):
    out = run("doctor", "--offline", "--json", enable=["broken-import", "typo"], config={"model": "m"},
              timeout=60)
    checks = {c["name"]: c for c in json.loads(out.stdout)}
    assert checks["plugin broken-import"]["status"] == "warn"
    assert "definitely_missing_module_xyz" in checks["plugin broken-import"]["detail"]
    assert checks["plugin typo"]["detail"] == "not loaded: unknown hook 'pre_tool_cal' (did you mean 'pre_tool_call'?)"
    assert checks["sessions"]["status"] == "ok" and "Traceback" not in out.stderr
