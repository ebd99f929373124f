"""Where ``hermes run`` spends its start: CPU by stage up to the first model request, and the imports of ours.

``bench_loop.py`` says how far the start is from a hand-written SDK loop's (issue 24: at most 1.05x); this
says where the difference goes, so that work on it starts from numbers. Two parts, each against the same
loopback wire server and the same installed ``echo`` tool as ``bench_loop.py``:

* **Stages.** ``hermes run`` runs ``--runs`` times (after one uncounted run) in a wrapper that wraps a few
  functions of the program and the host and notes the process's CPU time (``time.process_time``) as each begins
  and ends, and when the first request is about to go out (the run stops there). The median CPU of each stage
  is printed, and of the time between the named stages.
* **Imports.** ``-X importtime`` of ``hermes run`` and of the minimal loop (``--runs`` each, alternating): the
  modules only hermes imports, their self time (median per module) summed by package, and what the modules
  both import cost each. ``-X importtime`` itself adds to each import, so read these as shares, not as CPU.

    python bench/bench_start.py [--runs 11] [--top 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_loop import MINIMAL_LOOP, Run, make_site  # noqa: E402
from plugins_providers.testserver import WireServer  # noqa: E402

# Runs hermes.cli in this process with a mark at each named stage; prints the marks as "name<TAB>cpu" and
# leaves at the first request (the SDK's HTTP client is imported by then: its send is patched once it is).
WRAPPER = r'''
import os, sys, time

marks = [("interpreter up", time.process_time())]


def mark(name):
    marks.append((name, time.process_time()))


def stage(owner, attr, name):
    fn = vars(owner).get(attr) or getattr(owner, attr)  # a classmethod as it is in the class
    raw = fn.__func__ if isinstance(fn, classmethod) else fn

    def wrapped(*args, **kwargs):
        mark("> " + name)
        try:
            return raw(*args, **kwargs)
        finally:
            mark("< " + name)

    setattr(owner, attr, classmethod(wrapped) if isinstance(fn, classmethod) else wrapped)


import builtins

real_import = builtins.__import__


def watching_import(name, *args, **kwargs):  # patch the client's send as soon as the SDK's HTTP layer exists
    module = real_import(name, *args, **kwargs)
    client = next((sys.modules[m] for m in ("httpx2", "httpx") if m in sys.modules
                   and hasattr(sys.modules[m], "Client")), None)
    if client is not None:
        builtins.__import__ = real_import
        mark("SDK's HTTP layer imported")

        def first_request(*args, **kwargs):
            mark("first request")
            sys.stderr.write("".join(f"{n}\t{c}\n" for n, c in marks))
            sys.stderr.flush()
            os._exit(0)

        client.Client.send = first_request
    return module


builtins.__import__ = watching_import
import click  # noqa: E402

mark("click imported")
import hermes.cli.app as app  # noqa: E402

mark("program imported")
import hermes.host.plugins as host_plugins  # noqa: E402
import plugins.front as front  # noqa: E402
import plugins.commands.run as run_command  # noqa: E402

stage(host_plugins, "entry_point_candidates", "entry points")
stage(host_plugins.PluginHost, "discover", "discover")
stage(host_plugins.PluginHost, "_load_all", "import and register the plugins")
stage(app.App, "load_host", "the host")
for name in ("prepare_store", "build_agent"):
    stage(front, name, name)
    setattr(run_command, name, getattr(front, name))
sys.argv = ["hermes", *sys.argv[1:]]
app.main()
'''


def stages(server: WireServer, env: dict, runs: int, hermes_args: list, folder: Path) -> None:
    wrapper = folder / "stages.py"
    wrapper.write_text(WRAPPER)
    at: dict = {}  # mark -> its CPU ms in each run (the first time it is reached)
    for round_ in range(-1, runs):
        Run().script(server, 1)
        done = subprocess.run([sys.executable, str(wrapper), *hermes_args], env=env, capture_output=True, text=True,
                              timeout=120)
        marks = [line.split("\t") for line in done.stderr.splitlines() if "\t" in line]
        if not marks or marks[-1][0] != "first request":
            raise SystemExit(f"the wrapped run did not reach its first request:\n{done.stderr[-2000:]}")
        if round_ >= 0:
            first: dict = {}
            for name, cpu in marks:
                first.setdefault(name, float(cpu) * 1000)
            for name, ms in first.items():
                at.setdefault(name, []).append(ms)
    timeline = sorted(((statistics.median(v), name) for name, v in at.items() if len(v) == runs))
    print(f"`hermes run` up to its first request: the process's CPU at each mark (ms, medians of {runs} runs),"
          " and since the mark before")
    previous = 0.0
    for ms, name in timeline:
        print(f"  {ms:7.1f}  +{ms - previous:6.1f}  {name}")
        previous = ms
    print("stages, whole (CPU ms, medians; nested ones are inside the others):")
    for ms, name in timeline:
        if name.startswith("> ") and f"< {name[2:]}" in at:
            spans = [b - a for a, b in zip(at[name], at[f"< {name[2:]}"])]
            print(f"  {statistics.median(spans):7.1f}  {name[2:]}")


def import_times(cmd: list, env: dict) -> dict:
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    times = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            self_us, _, module = line[len("import time:"):].split("|")
            times[module.strip()] = int(self_us)
    return times


def imports(server: WireServer, env: dict, runs: int, hermes_args: list, folder: Path, top: int) -> None:
    (folder / "minimal_loop.py").write_text(MINIMAL_LOOP)
    minimal = [sys.executable, "-X", "importtime", str(folder / "minimal_loop.py"), server.openai_url]
    hermes = [sys.executable, "-X", "importtime", "-m", "hermes.cli", *hermes_args]
    ours, theirs = [], []
    for round_ in range(-1, runs):
        Run().script(server, 1)
        got = import_times(hermes, env)
        Run().script(server, 1)
        other = import_times(minimal, env)
        if round_ >= 0:
            ours.append(got)
            theirs.append(other)
    only = set.intersection(*(set(t) for t in ours)) - set.union(*(set(t) for t in theirs))
    median = {m: statistics.median(t[m] for t in ours) / 1000 for m in only}
    by_package: dict = {}
    for module, ms in median.items():
        parts = module.split(".")
        package = ".".join(parts[:2]) if parts[0] in ("hermes", "plugins", "kernel") else parts[0]
        by_package[package] = by_package.get(package, 0.0) + ms
    shared = set.intersection(*(set(t) for t in ours)) & set.intersection(*(set(t) for t in theirs))
    print(f"\nimports only `hermes run` makes: {len(only)} modules, {sum(median.values()):.1f} ms self time "
          f"(-X importtime, medians of {runs}); the {len(shared)} modules both import cost "
          f"{sum(statistics.median(t[m] for t in ours) for m in shared) / 1000:.1f} ms in hermes, "
          f"{sum(statistics.median(t[m] for t in theirs) for m in shared) / 1000:.1f} ms in the minimal loop")
    for package, ms in sorted(by_package.items(), key=lambda item: -item[1])[:top]:
        print(f"  {ms:7.1f}  {package}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--top", type=int, default=20, help="how many packages the import part lists")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="hermes-bench-start-"))
    server = WireServer().start()
    try:
        site = make_site(folder)
        (folder / "home").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "HERMES_"))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # byte-compiled, as after a pip install
        env.update(HERMES_HOME=str(folder / "home"), PYTHONPATH=os.pathsep.join([str(ROOT), str(site)]))
        hermes_args = ["run", "--base-url", server.openai_url, "--api-mode", "chat_completions", "-m", "bench",
                       "-t", "bench", "go"]
        stages(server, env, args.runs, hermes_args, folder)
        imports(server, env, args.runs, hermes_args, folder, args.top)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
