"""Start-up cost of the hermes command, as whole processes.

Runs every command once per round, alternating, for N rounds (after one
warm-up round) in this interpreter's environment, with an empty HERMES_HOME,
and prints each median wall time and its ratio to a bare ``python -c pass``
and to ``python -c "import click"`` measured in the same rounds.
Pass ``--hermes-agent PATH`` (the ``hermes`` script of hermes-agent installed
in a throwaway venv) to time the original's ``plugins list`` in the same run.

    python bench/bench_startup.py [--runs 15] [--hermes-agent THROWAWAY_VENV/bin/hermes]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(cmd: list, env: dict) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.decode()[-400:]}")
    return took


def alternating(cases: list, env: dict, runs: int) -> dict:
    """One sample of every command per round, ``runs`` rounds (A B C A B C ...),
    after one warm-up round (page cache, .pyc): load on the machine hits all alike."""
    for _label, cmd, _limit in cases:
        run_once(cmd, env)
    samples: dict = {label: [] for label, _cmd, _limit in cases}
    for _ in range(runs):
        for label, cmd, _limit in cases:
            samples[label].append(run_once(cmd, env))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--hermes-agent", help="path to hermes-agent's hermes script (throwaway venv)")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="hermes-bench-home-")
    env = dict(os.environ, HERMES_HOME=home, HOME=home)
    # users run from byte-compiled modules (pip compiles them at install); the
    # warm-up run writes them for an editable install too
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    bindir = Path(sys.executable).parent
    hermes = str(bindir / "hermes") if (bindir / "hermes").exists() else shutil.which("hermes")
    cases = [
        ("python -c pass", [sys.executable, "-c", "pass"], None),
        ("python -c 'import click'", [sys.executable, "-c", "import click"], None),
        ("python -c 'import kernel'", [sys.executable, "-c", "import kernel"], 1.5),
        ("hermes --help", [hermes, "--help"], 4.0),
        ("hermes plugins list", [hermes, "plugins", "list"], 6.0),
        ("hermes plugins list --json", [hermes, "plugins", "list", "--json"], 6.0),
    ]
    if args.hermes_agent:
        cases.append(("hermes-agent plugins list", [args.hermes_agent, "plugins", "list"], None))
    samples = alternating(cases, env, args.runs)
    medians = {label: statistics.median(times) for label, times in samples.items()}
    bare, click_only = medians["python -c pass"], medians["python -c 'import click'"]
    print(f"{'command':32} {'median':>9} {'/bare':>7} {'/click':>7}  limit (vs bare)")
    for label, _cmd, limit in cases:
        med = medians[label]
        ratio = med / bare
        verdict = "" if limit is None else (f"<= {limit:g}x ok" if ratio <= limit else f"> {limit:g}x OVER")
        print(f"{label:32} {med * 1000:7.1f}ms {ratio:6.2f}x {med / click_only:6.2f}x  {verdict}")
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
