"""Start-up cost of the hermes command, as whole processes.

Runs every command once per round, alternating, for N rounds (after one
warm-up round) in this interpreter's environment, under an empty temporary HOME,
and prints each median wall time and its ratios to a bare ``python -c pass``
and to ``python -c "import click"`` run beside it (the median of the
per-round ratios); the limits
are the start-up issue's, against ``import click``. ``plugins list`` is timed
twice: as it usually runs (nothing installed or configured since the last
listing: printed from the remembered listing), "re-derived" (the
remembered listing dropped before every run, as after a config change: the plugin sources are imported, the
entry points were kept) and "re-derived after an install" (the kept entry points dropped too, as a ``pip install``
does: the entry-point metadata is read). ``--help`` is
timed twice the same way: printed from the help click rendered last time,
and "re-rendered" (that help dropped before every run, as after a change of
the plugins' commands). Both also run with no data folder at all ("fresh data folder", as the
first run after an install: a default install's prints the built-ins' commands and records as shipped),
``--help`` there once more with a config.yaml (every plugin loads to learn them), with only the essential built-ins
selected
(``HERMES_PLUGINS=``: no other built-in imported), and beside them ``import click`` plus reading the entry
points: what a first run that imported only what it uses could reach, and the floor under any first run.
Commands run without HERMES_HOME, as users run them (the folders come from platformdirs), under a temporary HOME.
Pass ``--hermes-agent PATH`` (the ``hermes`` script of hermes-agent installed
in a throwaway venv) to time the original's ``plugins list`` in the same run.

With ``--cold`` (root on Linux) the page cache is dropped before every run of
every command, the reference included: start-up as after a reboot. With ``--cpu`` the figures are the
child's CPU time (user and system) instead of wall time, as issue 24 measures (with ``--runs 21``).

    python bench/bench_startup.py [--runs 15] [--cold] [--cpu] [--hermes-agent THROWAWAY_VENV/bin/hermes]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


COLD = []  # [True] under --cold
CPU = []  # [True] under --cpu


def drop_page_cache() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def run_once(cmd: list, env: dict, before=None) -> float:
    if before is not None:
        before()
    if COLD:
        drop_page_cache()
    started, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, env=env, capture_output=True)
    took, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.decode()[-400:]}")
    return (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime) if CPU else took


def alternating(cases: list, runs: int) -> dict:
    """One sample of every command per round, ``runs`` rounds (A B C A B C ...),
    after one warm-up round (page cache, .pyc): load on the machine hits all alike."""
    for _label, cmd, _limit, before, env in cases:
        run_once(cmd, env, before)
    samples: dict = {label: [] for label, *_ in cases}
    for _ in range(runs):
        for label, cmd, _limit, before, env in cases:
            samples[label].append(run_once(cmd, env, before))
    return samples


MINIMAL_CLICK_APP = """
import click
@click.group()
@click.version_option("1.0")
def cli():
    "A minimal click program."
@cli.command()
def hello():
    "Say hello."
cli(["--help"])
"""
# what any first run pays before a line of hermes: click, and reading the installed packages' entry points
ENTRY_POINTS_READ = "import click; from importlib.metadata import entry_points; entry_points(group='hermes.plugins')"


def forget_listing(home: str, installed: bool = False):
    """Drop the remembered listing, as a config change does; ``installed``: the kept entry points too, as an install
    does (it moves a folder of ``sys.path``)."""
    state = Path(home) / "plugin-state.json"

    def forget() -> None:
        try:
            data = json.loads(state.read_text())
        except (OSError, ValueError):
            return
        data.pop("listing", None)
        if installed:
            data.pop("entry_points", None)
        state.write_text(json.dumps(data))

    return forget


def forget_help(home: str):
    """Drop the remembered help, as a change of the plugins' commands does."""
    return lambda: (Path(home) / "output-help.txt").unlink(missing_ok=True)


def fresh(home: str):
    """Drop the whole data folder, as the first run after an install finds it (issue 24: <= 2.5x)."""
    return lambda: shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--cpu", action="store_true", help="the children's CPU time instead of wall time")
    parser.add_argument("--hermes-agent", help="path to hermes-agent's hermes script (throwaway venv)")
    parser.add_argument("--cold", action="store_true", help="drop the page cache before every run (root, Linux)")
    args = parser.parse_args()
    if args.cpu:
        CPU.append(True)
    if args.cold:
        try:
            drop_page_cache()
        except OSError as exc:
            raise SystemExit(f"--cold needs to write /proc/sys/vm/drop_caches (root on Linux): {exc}")
        COLD.append(True)
    root = tempfile.mkdtemp(prefix="hermes-bench-home-")
    # no HERMES_HOME, as users run it: the folders come from platformdirs
    env = dict(os.environ, HOME=root, XDG_DATA_HOME=f"{root}/data", XDG_CONFIG_HOME=f"{root}/config")
    env.pop("HERMES_HOME", None)
    # users run from byte-compiled modules (pip compiles them at install); the
    # warm-up run writes them for an editable install too
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # what the "re-" cases drop must not be dropped for the others: their own data folder, with a plugin folder in it
    # (empty): they stand for a changed config or install, which the first-run file shipped for a default install
    # (plugins/commands/first-run.json) does not answer, so the plugins load as they did before there was one
    changed_env = dict(env, XDG_DATA_HOME=f"{root}/changed")
    changed_home = f"{root}/changed/hermes"
    fresh_env, fresh_home = dict(env, XDG_DATA_HOME=f"{root}/fresh"), f"{root}/fresh/hermes"
    installed_env, installed_home = dict(env, XDG_DATA_HOME=f"{root}/installed"), f"{root}/installed/hermes"
    for home in (changed_home, installed_home):
        os.makedirs(f"{home}/plugins")
    configured = Path(root) / "configured" / "hermes"
    configured.mkdir(parents=True)
    (configured / "config.yaml").write_text("plugins:\n  disabled: []\n")
    bindir = Path(sys.executable).parent
    hermes = str(bindir / "hermes") if (bindir / "hermes").exists() else shutil.which("hermes")
    cases = [  # label, command, limit, what to do before each run, environment
        ("python -c pass", [sys.executable, "-c", "pass"], None, None, env),
        ("python -c 'import click'", [sys.executable, "-c", "import click"], None, None, env),
        ("python -c 'import kernel'", [sys.executable, "-c", "import kernel"], None, None, env),
        # the floor for any --help: click rendering the help of a two-command group
        ("a minimal click app --help", [sys.executable, "-c", MINIMAL_CLICK_APP], None, None, env),
        ("hermes --help", [hermes, "--help"], 1.15, None, env),
        ("hermes --help, re-rendered", [hermes, "--help"], 1.15, forget_help(changed_home), changed_env),
        ("hermes plugins list", [hermes, "plugins", "list"], 1.3, None, env),
        ("hermes plugins list --json", [hermes, "plugins", "list", "--json"], 1.3, None, env),
        ("plugins list, re-derived", [hermes, "plugins", "list"], 1.3, forget_listing(changed_home), changed_env),
        ("re-derived after an install", [hermes, "plugins", "list"], 1.3, forget_listing(installed_home, True),
         installed_env),
        ("hermes --help, fresh data folder", [hermes, "--help"], 2.5, fresh(fresh_home), fresh_env),
        ("plugins list, fresh data folder", [hermes, "plugins", "list"], 2.5, fresh(fresh_home), fresh_env),
        # a first run the shipped file does not answer (a config.yaml, or another plugin installed): every plugin loads
        ("--help, fresh, configured", [hermes, "--help"], None, fresh(fresh_home),
         dict(fresh_env, XDG_CONFIG_HOME=f"{root}/configured")),
        # how far a first run could go: no built-in imported but the essential ones, and the floor under it
        ("--help, fresh, essentials only", [hermes, "--help"], None, fresh(fresh_home),
         dict(fresh_env, HERMES_PLUGINS="")),
        ("click + entry points read", [sys.executable, "-c", ENTRY_POINTS_READ], None, None, env),
    ]
    if args.hermes_agent:
        cases.append(("hermes-agent plugins list", [args.hermes_agent, "plugins", "list"], None, None, env))
    samples = alternating(cases, args.runs)
    medians = {label: statistics.median(times) for label, times in samples.items()}
    bare, click_only = samples["python -c pass"], samples["python -c 'import click'"]
    # each round's ratio to the reference timed beside it, then the median: a
    # busy moment slows both sides of a pair alike
    paired = lambda times, ref: statistics.median(t / r for t, r in zip(times, ref))  # noqa: E731
    print(f"{'command':32} {'CPU' if CPU else 'median':>9} {'/bare':>7} {'/click':>7}  limit (vs import click)")
    for label, _cmd, limit, *_ in cases:
        ratio = paired(samples[label], click_only)
        verdict = "" if limit is None else (f"<= {limit:g}x ok" if ratio <= limit else f"> {limit:g}x OVER")
        print(f"{label:32} {medians[label] * 1000:7.1f}ms {paired(samples[label], bare):6.2f}x {ratio:6.2f}x  {verdict}")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
