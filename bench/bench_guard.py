"""The guard's cost per hook call: this tree against an earlier revision.

Twenty plugins implement ``on_status`` (an observer hook, the kind fired most)
and ``pre_tool_call`` (a guarding hook) with a no-op; one hook call runs all
twenty guarded implementations. The same probe runs in fresh interpreters
against this tree and against ``--baseline`` (checked out with ``git archive``
into a temporary folder), alternating A B A B, and bare pluggy with the same
twenty plugins, unguarded, is measured in every run for scale. Prints the
median per hook call of each and the ratio this tree / baseline.

    python bench/bench_guard.py --baseline REV [--rounds 7] [--calls 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = r'''
import json, sys, time
import pluggy
from kernel import hookimpl, hookspecs
from kernel.config import Config
from kernel.plugins import PluginHost

def plugin(i):
    def on_status(status, detail):
        return None
    def pre_tool_call(tool_name, args):
        return None
    ns = {"__name__": f"noop{i}", "on_status": staticmethod(hookimpl(on_status)),
          "pre_tool_call": staticmethod(hookimpl(pre_tool_call))}
    return type(f"Noop{i}", (), ns)()

calls = int(sys.argv[1])
plugins = [plugin(i) for i in range(20)]
guarded = PluginHost.from_objects(plugins, Config({})).pm.hook
bare_pm = pluggy.PluginManager("hermes")
bare_pm.add_hookspecs(hookspecs)
for p in plugins:
    bare_pm.register(p, name=p.__name__)
bare = bare_pm.hook

def per_call(hook, name, kwargs):
    """Best of 5 batches (the least disturbed by the rest of the machine)."""
    caller = getattr(hook, name)
    for _ in range(calls // 10):  # warm-up
        caller(**kwargs)
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls // 5):
            caller(**kwargs)
        best = min(best, (time.perf_counter() - started) / (calls // 5) * 1e6)
    return best

status = dict(status="s", detail="d", agent=None)
tool = dict(tool_name="echo", args={}, task_id="t", session_id="s", tool_call_id="c", turn_id="u",
            api_request_id="r", middleware_trace=[], agent=None)
print(json.dumps({"on_status": per_call(guarded, "on_status", status),
                  "pre_tool_call": per_call(guarded, "pre_tool_call", tool),
                  "bare_on_status": per_call(bare, "on_status", status),
                  "bare_pre_tool_call": per_call(bare, "pre_tool_call", tool)}))
'''


def checkout(rev: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="hermes-baseline-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def probe(tree: Path, calls: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), HERMES_HOME=tempfile.mkdtemp(prefix="hermes-bench-"))
    out = subprocess.run([sys.executable, "-c", PROBE, str(calls)], env=env, capture_output=True, text=True,
                         cwd=tempfile.gettempdir())
    if out.returncode != 0:
        raise SystemExit(f"probe failed in {tree}:\n{out.stderr}")
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", required=True, help="git revision to compare with")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    base = checkout(args.baseline)
    runs: dict = {"this tree": [], "baseline": []}
    for _ in range(args.rounds):  # A B A B
        runs["this tree"].append(probe(ROOT, args.calls))
        runs["baseline"].append(probe(base, args.calls))
    for hook in ("on_status", "pre_tool_call"):
        med = {name: statistics.median(r[hook] for r in rs) for name, rs in runs.items()}
        bare = statistics.median(r[f"bare_{hook}"] for rs in runs.values() for r in rs)
        print(f"{hook:14} 20 plugins: this tree {med['this tree']:6.2f} us/call, baseline {args.baseline} "
              f"{med['baseline']:6.2f} us/call, ratio {med['this tree'] / med['baseline']:.2f}x "
              f"(bare pluggy, unguarded: {bare:.2f} us/call)")


if __name__ == "__main__":
    main()
