"""The tool plugins loaded the way users get them: through entry points, by
the `hermes` command line in a subprocess. The entry points are declared in a
throw-away dist-info placed first on PYTHONPATH, so the test does not depend
on how (or whether) the project is installed."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINTS = """[hermes.plugins]
commands = plugins.commands.plugin
scripted-provider = plugins_providers.scripted
core-tools = plugins.core_tools
agent-tools = plugins.agent_tools
approval = plugins.approval
"""


@pytest.fixture
def hermes(tmp_path, hermes_home):
    meta = tmp_path / "meta" / "hermes_kernel-0.1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-kernel\nVersion: 0.1.0\n\n")
    (meta / "entry_points.txt").write_text(ENTRY_POINTS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(meta.parent), str(ROOT)]), HERMES_HOME=str(hermes_home),
               HERMES_PLUGINS="scripted-provider,core-tools,agent-tools,approval")
    # the dangerous command below targets ~: point HOME at a scratch folder in case the guard ever fails
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "keep").write_text("x")
    env["HOME"] = str(tmp_path / "home")
    work = tmp_path / "work"
    work.mkdir()

    def run(*args, script=None):
        if script is not None:
            (tmp_path / "script.json").write_text(json.dumps(script))
            args = ("run", "--api-mode", "scripted", "--base-url", str(tmp_path / "script.json"), "--json", *args)
        proc = subprocess.run([sys.executable, "-c", "from hermes.cli.app import main; main()", *args], cwd=work, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        return proc

    run.work, run.home = work, tmp_path / "home"
    return run


def test_plugins_are_listed_from_entry_points(hermes):
    proc = hermes("plugins", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = {p["name"]: p["status"] for p in json.loads(proc.stdout)}
    assert {k: listed.get(k) for k in ("core-tools", "agent-tools", "approval")} == dict.fromkeys(
        ("core-tools", "agent-tools", "approval"), "enabled")


def test_run_uses_the_tools_and_refuses_a_dangerous_command_without_a_terminal(hermes):
    proc = hermes("go", script=[
        {"tool_calls": [["write_file", {"path": "notes/a.txt", "content": "hello\n"}],
                        ["terminal", {"command": "cat notes/a.txt"}]]},
        {"tool_calls": [["terminal", {"command": "rm -rf ~ && touch ran.txt"}]]},
        "all done",
    ])
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    tools = [m["content"] for m in result["messages"] if m["role"] == "tool"]
    assert {k: v for k, v in json.loads(tools[1]).items() if k != "sandbox"} == {"exit_code": 0, "output": "hello\n"}
    assert "nobody was available to approve it" in json.loads(tools[2])["error"]
    assert not (hermes.work / "ran.txt").exists() and (hermes.home / "keep").exists()
    assert result["final_response"] == "all done"


def test_toolset_option_limits_the_tools(hermes):
    proc = hermes("-t", "safe", "go", script=[{"tool_calls": [["terminal", {"command": "touch ran.txt"}]]}, "ok"])
    assert proc.returncode == 0, proc.stderr
    [tool] = [m["content"] for m in json.loads(proc.stdout)["messages"] if m["role"] == "tool"]
    assert "unknown tool 'terminal'" in json.loads(tool)["error"] and not (hermes.work / "ran.txt").exists()


def test_an_empty_toolset_option_offers_no_tools(hermes):
    """`-t ""` (a script's empty variable) is no toolsets, not every one."""
    proc = hermes("-t", "", "go", script=[{"tool_calls": [["read_file", {"path": "x"}]]}, "ok"])
    assert proc.returncode == 0, proc.stderr
    [tool] = [m["content"] for m in json.loads(proc.stdout)["messages"] if m["role"] == "tool"]
    assert "unknown tool 'read_file'" in json.loads(tool)["error"]


def test_toolsets_from_config_and_the_option_wins(hermes, hermes_home):
    (hermes_home / "config.yaml").write_text("toolsets: [safe, todo]\n")
    script = [{"tool_calls": [["terminal", {"command": "touch ran.txt"}], ["todo", {}]]}, "ok"]
    proc = hermes("go", script=script)
    assert proc.returncode == 0, proc.stderr
    terminal, todo = [json.loads(m["content"]) for m in json.loads(proc.stdout)["messages"] if m["role"] == "tool"]
    assert "unknown tool 'terminal'" in terminal["error"] and todo["summary"]["total"] == 0
    assert not (hermes.work / "ran.txt").exists()

    proc = hermes("-t", "terminal", "go", script=[{"tool_calls": [["terminal", {"command": "touch ran.txt"}]]}, "ok"])
    assert proc.returncode == 0, proc.stderr
    assert (hermes.work / "ran.txt").exists()

    (hermes_home / "config.yaml").write_text("toolsets: [safe, nonsense]\n")
    proc = hermes("go", script=["ok"])
    assert proc.returncode == 1 and "unknown toolset 'nonsense'" in proc.stderr and "Traceback" not in proc.stderr
