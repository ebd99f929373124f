"""``hermes batch`` throughput with 1, 2 and 4 workers against the scripted provider (issue 27's goal: two
workers at least 1.8x the throughput of one).

Each prompt is a short tool conversation (three echo calls, then the answer) with the session stored (the
SQLite store, every worker writing its own sessions at once). Worker counts alternate round by round;
throughput is prompts per wall second of the whole command (start-up of the command and of its workers
included), and each ratio is the median of the rounds' ratios to the one-worker run of the same round.

    python bench/bench_batch.py [--prompts 200] [--rounds 5] [--no-save] [--delay SECONDS]

``--delay`` makes each model call take that long (the scripted provider waits), as a real model's
latency does: then the workers wait rather than compute, and a core per worker is not needed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_loop import hermes_command, make_site  # noqa: E402

WORKERS = (1, 2, 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-save", action="store_true", help="store no sessions (the batch alone)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds each model call takes")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="hermes-bench-batch-"))
    site = make_site(tmp)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "HERMES_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(site)])
    prompts = tmp / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"prompt": f"task {i}"}) + "\n" for i in range(args.prompts)))
    script = tmp / "script.json"
    steps = [{"tool_calls": [["echo", {"text": f"step {i}"}]]} for i in range(3)] + [{"content": "done"}]
    script.write_text(json.dumps([dict(step, delay=args.delay) if args.delay else step for step in steps]))
    rates: dict = {w: [] for w in WORKERS}
    for round_ in range(-1, args.rounds):  # round -1 warms up (byte-compiling, the page cache), uncounted
        for workers in WORKERS:
            home, out = tmp / f"home-{round_}-{workers}", tmp / f"out-{round_}-{workers}.jsonl"
            home.mkdir()
            cmd = [*hermes_command(), "batch", str(prompts), "--out", str(out), "--workers", str(workers),
                   "--api-mode", "scripted", "--base-url", str(script), "-t", "bench", "--json"]
            if args.no_save:
                cmd.append("--no-save")
            started = time.perf_counter()
            proc = subprocess.run(cmd, env=dict(env, HERMES_HOME=str(home)), capture_output=True, text=True)
            took = time.perf_counter() - started
            if proc.returncode != 0 or json.loads(proc.stdout)["written"] != args.prompts:
                raise SystemExit(f"batch failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
            if round_ >= 0:
                rates[workers].append(args.prompts / took)
    print(f"{args.prompts} prompts of 3 tool calls each, scripted provider ({args.delay * 1000:g} ms a model call), "
          f"sessions {'not stored' if args.no_save else 'stored (SQLite)'}, {args.rounds} rounds, {os.cpu_count()} CPUs")
    for workers in WORKERS:
        ratio = statistics.median(r / one for r, one in zip(rates[workers], rates[1]))
        print(f"{workers} worker(s): median {statistics.median(rates[workers]):7.1f} prompts/s; "
              f"{ratio:.2f}x one worker" + ("  (goal for 2: >= 1.8x)" if workers == 2 else ""))


if __name__ == "__main__":
    main()
