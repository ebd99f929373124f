"""What the sandbox costs per terminal call: the terminal tool running
``true`` with ``sandbox.mode: workspace-write`` and with ``off``, alternating
A B A B in one process, medians and the difference (the goal: <= 15 ms).

    python bench/bench_sandbox.py [--rounds 41]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from hermes.host.config import Config  # noqa: E402
from kernel.types import ToolContext  # noqa: E402
from plugins.core_tools import make_terminal  # noqa: E402
from plugins.core_tools.sandbox import unavailable  # noqa: E402


class _Agent:
    interrupted = False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=41)
    rounds = parser.parse_args().rounds
    import shutil

    why = unavailable(shutil.which("bwrap"))
    if why:
        print(f"no sandbox here: {why}")
        return 1
    os.chdir(tempfile.mkdtemp())
    ctx = ToolContext(agent=_Agent(), tool_name="terminal", tool_call_id="c", task_id="t", session_id="s", turn_id="u")
    tools = {mode: make_terminal(Config({"sandbox": {"mode": mode}})) for mode in ("workspace-write", "off")}
    times: dict = {mode: [] for mode in tools}
    for i in range(rounds + 1):
        for mode, tool in tools.items():
            started = time.perf_counter()
            result = tool.handler({"command": "true"}, ctx)
            if i:  # the first round warms up
                times[mode].append(time.perf_counter() - started)
            assert result["exit_code"] == 0, result
    box, plain = (statistics.median(times[m]) * 1000 for m in ("workspace-write", "off"))
    diffs = statistics.median((a - b) * 1000 for a, b in zip(times["workspace-write"], times["off"]))
    print(f"terminal 'true', sandboxed   median {box:.1f} ms")
    print(f"terminal 'true', no sandbox  median {plain:.1f} ms")
    print(f"the sandbox costs (median of paired differences): {diffs:.1f} ms per call (goal <= 15 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
