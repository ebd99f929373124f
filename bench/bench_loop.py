"""50-iteration tool loop: ``hermes run`` vs a minimal hand-written SDK loop.

Both run as fresh subprocesses (so both pay interpreter start-up and SDK
imports) against the same loopback wire server with the same script: 50
streamed chat-completions answers that each call an ``echo`` tool, then a
final text answer. Runs alternate (hermes, minimal, hermes, ...) so machine
noise hits both alike. Prints each side's medians (wall, and CPU of the child)
and the median of the per-round ratios (issue 24's target: hermes <= 1.05x).

    python bench/bench_loop.py [--iterations 50] [--repeats 5] [--no-save-too]
                               [--vs OTHER_VENV_PYTHON --vs-root OTHER_CHECKOUT]

With ``--no-save-too``, ``hermes run --no-save`` runs in the rotation too: the
session store's cost (target <= 1.02x).

With ``--vs``, another checkout's ``hermes run`` (its own venv's console
script, its own tree first on the path) runs in the same rotation, and the
ratio of the two is printed: how a change moved the loop's cost.

The ``echo`` tool reaches hermes the way any third-party plugin does: an
entry point in a (temporary) installed distribution. hermes is given only that
tool (``-t bench``), so both loops send the same tool schema.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from plugins_providers.testserver import WireServer, reply  # noqa: E402

TOOL_PLUGIN = '''
from kernel import hookimpl
from kernel.types import Tool

@hookimpl
def register_tools(register):
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    register(Tool("echo", "Echo the text back", schema, lambda args, ctx: args["text"], toolset="bench", parallel_safe=True))
'''

PROVIDER_ENTRY_POINTS = {
    "openai-chat": "plugins_providers.openai_chat",
    "provider-resolve": "plugins_providers.resolve",
    "fallback": "plugins.fallback",
}

MINIMAL_LOOP = '''
import json, sys
import openai

client = openai.OpenAI(base_url=sys.argv[1], api_key="bench", max_retries=0)
tools = [{"type": "function", "function": {"name": "echo", "description": "Echo the text back",
          "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}]
messages = [{"role": "system", "content": "You are a benchmark."}, {"role": "user", "content": "loop"}]
while True:
    text, calls = [], {}
    stream = client.chat.completions.create(model="bench", messages=messages, tools=tools, stream=True,
                                            stream_options={"include_usage": True})
    for chunk in stream:
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
                sys.stdout.write(delta.content)
            for tc in delta.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": "", "name": "", "args": ""})
                slot["id"] = tc.id or slot["id"]
                if tc.function is not None:
                    slot["name"] += tc.function.name or ""
                    slot["args"] += tc.function.arguments or ""
    if not calls:
        print()
        break
    messages.append({"role": "assistant", "content": "".join(text) or None, "tool_calls": [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["args"]}} for c in calls.values()]})
    for c in calls.values():
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": json.loads(c["args"])["text"]})
'''


def make_site(folder: Path) -> Path:
    """A fake installed distribution with the echo tool (and the provider
    plugins, if the installed hermes does not declare them yet)."""
    from importlib.metadata import entry_points

    installed = {ep.value for ep in entry_points(group="hermes.plugins")}
    site = folder / "site"
    meta = site / "hermes_bench_tools-0.0.1.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-bench-tools\nVersion: 0.0.1\n\n")
    (site / "hermes_bench_echo.py").write_text(textwrap.dedent(TOOL_PLUGIN))
    lines = ["[hermes.plugins]", "bench-echo = hermes_bench_echo"]
    lines += [f"{name} = {target}" for name, target in PROVIDER_ENTRY_POINTS.items() if target not in installed]
    (meta / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return site


def hermes_command() -> list:
    script = Path(sys.executable).parent / "hermes"
    return [str(script)] if script.exists() else [sys.executable, "-m", "hermes.cli"]


def script(server: WireServer, iterations: int) -> None:
    server.script([reply(tool_calls=[("echo", {"text": f"step {i}"})]) for i in range(iterations)] + [reply("All done.")])


def timed(cmd: list, env: dict) -> tuple:
    """(wall seconds, CPU seconds of the child: user + system)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or "All done." not in proc.stdout:
        raise SystemExit(f"run failed ({' '.join(cmd[:3])} ...):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--vs", help="the python of another checkout's venv (its hermes runs beside this one)")
    parser.add_argument("--vs-root", help="that checkout's folder")
    parser.add_argument("--no-save-too", action="store_true",
                        help="also run hermes with --no-save: what the session store costs (target <= 1.02x)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    server = WireServer().start()
    try:
        site = make_site(tmp)
        home = tmp / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "HERMES_"))}
        env.update(HERMES_HOME=str(home), PYTHONPATH=os.pathsep.join([str(ROOT), str(site)]))
        loop_file = tmp / "minimal_loop.py"
        loop_file.write_text(MINIMAL_LOOP)
        hermes_cmd = hermes_command() + ["run", "--base-url", server.openai_url, "--api-mode", "chat_completions",
                                         "-m", "bench", "--max-turns", str(args.iterations + 10), "-t", "bench", "loop"]
        minimal_cmd = [sys.executable, str(loop_file), server.openai_url]
        contenders = [("hermes run", hermes_cmd, env), ("minimal SDK loop", minimal_cmd, env)]
        if args.no_save_too:
            contenders.insert(1, ("hermes run --no-save", [*hermes_cmd[:-1], "--no-save", hermes_cmd[-1]], env))
        if args.vs:
            other_env = dict(env, PYTHONPATH=os.pathsep.join([str(Path(args.vs_root).resolve()), str(site)]))
            contenders.insert(1, ("other hermes run", [str(Path(args.vs).parent / "hermes"), *hermes_cmd[1:]], other_env))
        results: dict = {name: [] for name, _, _ in contenders}
        for _ in range(args.repeats):
            for name, cmd, run_env in contenders:
                script(server, args.iterations)
                before = len(server.requests)
                results[name].append(timed(cmd, run_env))
                made = len(server.requests) - before
                if made != args.iterations + 1:
                    raise SystemExit(f"{name}: expected {args.iterations + 1} model calls, saw {made}")
                offered = [t["function"]["name"] for t in server.requests[-1].body.get("tools", [])]
                if offered != ["echo"]:  # same work on both sides: one tool schema per request
                    raise SystemExit(f"{name}: offered tools {offered}, expected ['echo']")
        medians = {name: statistics.median(w for w, _ in times) for name, times in results.items()}
        for name, times in results.items():
            print(f"{name:20s} median {medians[name]:.3f}s wall, {statistics.median(c for _, c in times):.3f}s CPU;"
                  " runs " + " ".join(f"{w:.3f}" for w, _ in times))

        def paired(a: str, b: str) -> str:  # the median of the per-round ratios, wall and CPU
            wall = statistics.median(x[0] / y[0] for x, y in zip(results[a], results[b]))
            cpu = statistics.median(x[1] / y[1] for x, y in zip(results[a], results[b]))
            return f"{wall:.3f}x wall, {cpu:.3f}x CPU"

        print(f"ratio hermes/minimal: {paired('hermes run', 'minimal SDK loop')} over {args.iterations} tool iterations")
        if args.no_save_too:
            print(f"ratio hermes/hermes --no-save: {paired('hermes run', 'hermes run --no-save')} (target <= 1.02x)")
        if args.vs:
            print(f"ratio hermes/other hermes: {paired('hermes run', 'other hermes run')}")
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
