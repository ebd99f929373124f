"""hermes told to stop (SIGTERM from `timeout` or a service manager, SIGHUP
from a closed terminal) while a tool runs: the tool's process group is killed
before hermes exits, so its side effect never lands after hermes is gone, and
the stored turn says the call was interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from tests.conftest import ROOT, hermes_command


def _start(tmp_path, hermes_home, *wrapper: str):
    started, victim = tmp_path / "started", tmp_path / "victim"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [["terminal", {"command": f"touch {started}; sleep 4; touch {victim}"}]]},
        "never reached",
    ]))
    env = {**os.environ, "HERMES_HOME": str(hermes_home),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
    proc = subprocess.Popen([*wrapper, *hermes_command(), "run", "--yolo", "--api-mode", "scripted", "--base-url",
                             str(script), "do it"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=tmp_path)  # the working folder: a sandboxed command writes there
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert started.exists(), proc.communicate(timeout=10)
    return proc, victim


def _stored_tool_result(hermes) -> dict:
    listed = json.loads(hermes("sessions", "list", "--json").stdout)
    shown = json.loads(hermes("sessions", "show", listed[0]["id"], "--json").stdout)
    return json.loads(next(m["content"] for m in shown["messages"] if m["role"] == "tool"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_kills_the_tool_before_hermes_exits(tmp_path, hermes_home, hermes, signum):
    proc, victim = _start(tmp_path, hermes_home)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 128 + signum, err
    assert f"stopped by {signal.Signals(signum).name}" in err and "Traceback" not in err
    time.sleep(4.5)  # past the moment the command would have touched the victim
    assert not victim.exists()
    result = _stored_tool_result(hermes)
    assert result["interrupted"] is True and "process group was killed" in result["note"]


@pytest.mark.skipif(not os.path.exists("/usr/bin/timeout"), reason="coreutils' timeout is not installed")
def test_a_wrappers_timeout_leaves_no_side_effect(tmp_path, hermes_home, hermes):
    proc, victim = _start(tmp_path, hermes_home, "/usr/bin/timeout", "2")
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 124, err  # timeout's own code for "I stopped it"
    time.sleep(4.5)
    assert not victim.exists()
    stored = _stored_tool_result(hermes)
    assert stored.get("interrupted") is True, (stored, err)


def test_ctrl_c_still_exits_130(tmp_path, hermes_home):
    proc, _ = _start(tmp_path, hermes_home)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130 and "interrupted" in err and "stopped by" not in err, err


def test_a_repeated_stop_signal_does_not_cut_the_store_short(tmp_path, hermes_home, hermes):
    proc, victim = _start(tmp_path, hermes_home)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)  # as `timeout` does: to hermes, then to its process group
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert _stored_tool_result(hermes).get("interrupted") is True
