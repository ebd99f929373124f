"""Ctrl+C during a streamed answer, with the openai SDK loaded and the wire
server mid-stream: the process ends soon after the signal (output flushed,
the store closed, no slow interpreter teardown) and nothing is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from plugins_providers.testserver import reply
from tests.conftest import ROOT, hermes_command
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)


def test_ctrl_c_mid_stream_exits_promptly_and_keeps_the_turn(wire_server, cli_env, hermes_home, hermes):  # noqa: F811
    wire_server.script([reply("one two three four five six seven eight", frame_delay=2.0)])
    env = {**os.environ, "HERMES_HOME": str(hermes_home), "OPENAI_API_KEY": "sk-test",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), cli_env.get("PYTHONPATH", "")]))}
    proc = subprocess.Popen(
        hermes_command() + ["run", "--api-mode", "chat_completions", "--base-url", wire_server.openai_url,
                            "-m", "gpt-test", "tell me"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 30
    while not wire_server.requests and time.monotonic() < deadline:  # the SDK is loaded and streaming
        time.sleep(0.05)
    assert wire_server.requests, "no request reached the server"
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    took = time.monotonic() - sent
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert took < 1.0, f"{took:.2f} s from the signal to the end"  # bench/bench_interrupt.py measures the median
    listed = json.loads(hermes("sessions", "list", "--json").stdout)
    assert len(listed) == 1 and listed[0]["end_reason"] == "interrupted_by_user"
    shown = json.loads(hermes("sessions", "show", listed[0]["id"], "--json").stdout)
    assert [m["content"] for m in shown["messages"] if m["role"] == "user"] == ["tell me"]
