"""Fixtures for the session store tests (HERMES_HOME is isolated by the
top-level conftest's autouse ``hermes_home`` fixture)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(hermes_home):
    """The test's HERMES_HOME; stores opened through the plugin are closed afterwards."""
    yield hermes_home
    from plugins.sessions import close_stores

    close_stores()


@pytest.fixture
def store(home):
    from plugins.sessions.store import SessionStore

    s = SessionStore.for_data_dir(home)
    yield s
    s.close()


@pytest.fixture
def child_env(home):
    """Environment for a child Python that imports this worktree."""
    env = dict(os.environ)
    env["HERMES_HOME"] = str(home)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


SLOW_TOOL_PLUGIN = '''
"""Test-only tools for the session CLI tests."""
import time

from kernel import hookimpl
from kernel.types import Tool


def _slow(args, ctx):
    time.sleep(float(args.get("seconds", 0.05)))
    return {"step": args.get("step"), "pad": "p" * 5000}


def _maybe_crash(args, ctx):
    import os

    if "CRASH" in ctx.agent.messages[0]["content"]:  # the process ends mid-turn, as a segfault would end it
        os._exit(3)
    return "fine"


def _append(args, ctx):
    """Append a line to a file: the side effect a durable turn must not repeat. While ``hold`` exists it
    waits first (a test kills the process meanwhile); ``started`` is appended to as it begins."""
    import os

    if args.get("started"):
        with open(args["started"], "a") as f:
            f.write(args["text"] + "\\n")
    while args.get("hold") and os.path.exists(args["hold"]):
        if ctx.agent.interrupted:  # as a built-in tool does: an interrupt ends the wait, nothing appended
            return "interrupted before appending " + args["text"]
        time.sleep(0.01)
    with open(args["path"], "a") as f:
        f.write(args["text"] + "\\n")
    return "appended " + args["text"]


@hookimpl
def register_tools(register):
    register(Tool("append", "Append a line to a file", {"type": "object", "properties": {}}, _append, toolset="effects"))
    register(Tool("append_parallel", "Append a line to a file, beside others", {"type": "object", "properties": {}},
                  _append, toolset="effects", parallel_safe=True))
    register(Tool("slow", "Wait a moment", {"type": "object", "properties": {}}, _slow, toolset="slow"))
    register(Tool("maybe_crash", "End the process if the prompt says CRASH", {"type": "object", "properties": {}},
                  _maybe_crash, toolset="crash"))
'''


def _entry_points() -> dict:
    """The worktree's declared ``hermes.plugins`` entry points, plus this plugin."""
    import tomllib

    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    eps = dict(data["project"].get("entry-points", {}).get("hermes.plugins", {}))
    if "plugins.sessions" not in eps.values():
        eps["sessions-sqlite"] = "plugins.sessions"
    eps["sessions-test-tools"] = "sessions_test_tools"
    return eps


@pytest.fixture
def hermes_sessions(home, tmp_path, child_env):
    """``hermes_sessions(*args, input=None)``: the real ``hermes`` command in a
    subprocess, with this plugin installed.

    A throwaway ``hermes-kernel`` dist-info first on the path declares this
    worktree's entry points (the shared venv's editable install describes
    main's), so the CLI discovers plugins exactly as an installed hermes does.
    """
    import subprocess

    site = tmp_path / "site"
    meta = site / "hermes_kernel-0.1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-kernel\nVersion: 0.1.0\n")
    lines = ["[hermes.plugins]"] + [f"{k} = {v}" for k, v in _entry_points().items()]
    (meta / "entry_points.txt").write_text("\n".join(lines) + "\n")
    (site / "sessions_test_tools.py").write_text(SLOW_TOOL_PLUGIN)
    env = dict(child_env)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    work = tmp_path / "cwd"
    work.mkdir()

    from tests.conftest import hermes_command

    argv = hermes_command()

    def run(*args, input=None, timeout=60):
        return subprocess.run([*argv, *args], env=env, cwd=work, input=input,
                              capture_output=True, text=True, timeout=timeout)

    def start(*args):
        """The command in the background (stdout discarded), for a test that stops it."""
        return subprocess.Popen([*argv, *args], env=env, cwd=work, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)

    run.env = env
    run.argv = argv
    run.cwd = work
    run.start = start
    return run
