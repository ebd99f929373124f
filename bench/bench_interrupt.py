"""Ctrl+C to the end of the process, with the openai SDK loaded and a reply
streaming from the wire-protocol server: how long after SIGINT ``hermes run``
is gone (output flushed, the session stored and closed).

Paired, alternating, with a plain interpreter that has imported the same SDK
and ends on the same signal through Python's normal teardown (what hermes
skips). The start-up issue's limit is 100 ms.

    python bench/bench_interrupt.py [--runs 11]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plugins_providers.testserver import WireServer, reply  # noqa: E402

PLAIN = "import openai, sys, time; sys.stdout.write('ready\\n'); sys.stdout.flush(); time.sleep(60)"


def until_exit(proc: subprocess.Popen) -> float:
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    return time.perf_counter() - sent


def hermes_once(server: WireServer, env: dict, hermes: str) -> float:
    server.reset()
    server.script([reply("one two three four five six", frame_delay=5.0)])
    proc = subprocess.Popen([hermes, "run", "--api-mode", "chat_completions", "--base-url", server.openai_url,
                             "-m", "gpt-bench", "go"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # the first frames are in: mid-stream
    return until_exit(proc)


def plain_once(env: dict) -> float:
    proc = subprocess.Popen([sys.executable, "-c", PLAIN], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdout.readline()
    time.sleep(0.3)
    return until_exit(proc)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="hermes-bench-home-")
    env = dict(os.environ, HERMES_HOME=home, OPENAI_API_KEY="sk-bench")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    bindir = Path(sys.executable).parent
    hermes = str(bindir / "hermes") if (bindir / "hermes").exists() else shutil.which("hermes")
    server = WireServer().start()
    try:
        hermes_once(server, env, hermes), plain_once(env)  # warm-up
        ours, plain = [], []
        for _ in range(args.runs):
            ours.append(hermes_once(server, env, hermes))
            plain.append(plain_once(env))
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    print(f"{'from SIGINT to exit':44} {'median':>8} {'max':>8}")
    print(f"{'hermes run, mid-stream (openai SDK)':44} {statistics.median(ours) * 1000:6.1f}ms {max(ours) * 1000:6.1f}ms"
          f"  {'<= 100 ms ok' if statistics.median(ours) <= 0.1 else '> 100 ms OVER'}")
    print(f"{'python with openai imported, normal teardown':44} {statistics.median(plain) * 1000:6.1f}ms "
          f"{max(plain) * 1000:6.1f}ms")


if __name__ == "__main__":
    main()
