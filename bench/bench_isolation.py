"""What isolation costs: this tree against an earlier revision, side by side.

1. The guard's cost per hook call.

Twenty plugins implement ``on_status`` (an observer hook, the kind fired most)
and ``pre_tool_call`` (a guarding hook) with a no-op; one hook call runs all
twenty guarded implementations. The same probe runs in fresh interpreters
against this tree and against ``--baseline`` (checked out with ``git archive``
into a temporary folder), alternating A B A B, and bare pluggy with the same
twenty plugins, unguarded, is measured in every run for scale. Prints the
median per hook call of each and the ratio this tree / baseline.

2. ``hermes plugins list`` in steady state (the load cached, as after any
   command), both trees against the same installed distributions, alternating.

3. The kernel's overhead per tool-loop iteration with 20 plugins implementing
   every hook (each tree's own ``bench/bench_kernel.py``), alternating.

    python bench/bench_isolation.py --baseline REV [--rounds 7] [--calls 20000]
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

PROBE = r'''
import json, sys, time
import pluggy
from hermes.host.config import Config
from hermes.host.plugins import PluginHost
from kernel import hookimpl, hookspecs

def plugin(i):
    def on_status(status, detail):
        return None
    def pre_tool_call(call):
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
    """Best of 5 batches (the least disturbed by the rest of the machine), in CPU time."""
    caller = getattr(hook, name)
    for _ in range(calls // 10):  # warm-up
        caller(**kwargs)
    best = float("inf")
    for _ in range(5):
        started = time.process_time()  # CPU: a shared machine's wall time moves by half from one batch to the next
        for _ in range(calls // 5):
            caller(**kwargs)
        best = min(best, (time.process_time() - started) / (calls // 5) * 1e6)
    return best

status = dict(status="s", detail="d", agent=None)
tool = dict(call=None, agent=None)  # the guard passes it on as it is
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


def listing(tree: Path, home: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree), HERMES_HOME=home)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users run byte-compiled modules
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", "import sys, hermes.cli.app as c; c.main(sys.argv[1:])", "plugins", "list"],
                         env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    took = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(f"plugins list failed in {tree}:\n{out.stderr}")
    return took


LOOP = r'''
import os, statistics, sys, tempfile
sys.path.insert(0, os.path.join(sys.argv[1], "bench"))
os.environ["HERMES_HOME"] = tempfile.mkdtemp(prefix="hermes-bench-")
import json, time, bench_kernel
time.perf_counter = time.process_time  # CPU in both trees (an older bench_kernel timed the wall clock)
out = {}
for stream in (False, True):
    bench_kernel.one_run(20, 20, stream)
    out[str(stream)] = statistics.median(bench_kernel.one_run(200, 20, stream) for _ in range(3)) * 1000
print(json.dumps(out))
'''


def loop(tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", LOOP, str(tree)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"loop probe failed in {tree}:\n{out.stderr}")
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
    homes = {"this tree": tempfile.mkdtemp(prefix="hermes-bench-"), "baseline": tempfile.mkdtemp(prefix="hermes-bench-")}
    trees = {"this tree": ROOT, "baseline": base}
    for name in trees:  # the first listing loads once and caches; then steady state
        listing(trees[name], homes[name]), listing(trees[name], homes[name])
    times: dict = {name: [] for name in trees}
    for _ in range(args.rounds * 2):
        for name in trees:
            times[name].append(listing(trees[name], homes[name]))
    med = {name: statistics.median(t) * 1000 for name, t in times.items()}
    print(f"plugins list   steady state: this tree {med['this tree']:6.1f} ms, baseline {args.baseline} "
          f"{med['baseline']:6.1f} ms, ratio {med['this tree'] / med['baseline']:.2f}x")
    loops: dict = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name in trees:
            loops[name].append(loop(trees[name]))
    for stream in ("False", "True"):
        med = {name: statistics.median(r[stream] for r in rs) for name, rs in loops.items()}
        print(f"tool loop      20 plugins, stream={stream:5}: this tree {med['this tree']:.3f} ms/iteration, baseline "
              f"{args.baseline} {med['baseline']:.3f} ms/iteration, ratio {med['this tree'] / med['baseline']:.2f}x")


if __name__ == "__main__":
    main()
