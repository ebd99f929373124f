"""50-iteration tool loop: ``hermes run`` vs a minimal hand-written SDK loop (and the peers).

Every contender runs as a fresh subprocess (so each pays interpreter start-up and SDK imports)
against the same loopback wire server with the same script: 50 chat-completions answers that each
call an ``echo`` tool, then a final text answer. Runs alternate (hermes, minimal, hermes, ...) so
machine noise hits all alike, after one uncounted round (which also byte-compiles every module, as a
pip install leaves them: PYTHONDONTWRITEBYTECODE is dropped for the children). Prints each side's
medians (wall, and CPU of the child), the median of the per-round ratios (issue 24's target: hermes
<= 1.05x), and the same for the start: from the spawn to the first model request the server
receives, wall and the child's CPU by then.

    python bench/bench_loop.py [--iterations 50] [--repeats 5] [--no-save-too] [--used-only-too] [--peers]
                               [--vs OTHER_VENV_PYTHON --vs-root OTHER_CHECKOUT]

With ``--no-save-too``, ``hermes run --no-save`` runs in the rotation too: the
session store's cost (target <= 1.02x). With ``--postgres``, ``hermes run`` with
``sessions.store: postgres`` too, on a PostgreSQL server the bench starts on 127.0.0.1
(tests/postgres_server.py): what that store costs against SQLite's. With ``--durable``, ``hermes run`` with
``durable.engine: dbos`` too (its checkpoints in SQLite in the data folder; with ``--postgres`` also in
PostgreSQL): what durable mode adds per step (the loop's part of the run, after the first request, over the
iterations; the goal is under 2 ms on SQLite) and to the start.

With ``--peers``, the same conversation runs through pydantic-ai and the OpenAI Agents SDK (each
with its own chat-completions model class over the openai SDK, a plain function tool, defaults
otherwise), and the minimal loop again beside them, all in a throwaway venv the bench makes
outside the project (``--peers-venv``, kept for the next run) with the versions pinned below.

With ``--used-only-too``, ``hermes run`` also runs with ``HERMES_PLUGINS`` naming only the plugins this run
calls (the echo tool, the chat-completions provider, its resolver, the SQLite store): the other built-ins are
never imported. What it measures is how far a start that imports only what a command uses could go.

With ``--vs``, another checkout's ``hermes run`` (its own venv's console
script, its own tree first on the path) runs in the same rotation, and the
ratio of the two is printed: how a change moved the loop's cost.

The ``echo`` tool reaches hermes the way any third-party plugin does: an
entry point in a (temporary) installed distribution. hermes is given only that
tool (``-t bench``), so every loop sends the same tool schema.
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
USED = "bench-echo,openai-chat,provider-resolve,sessions-sqlite"  # --used-only-too: what this run calls

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

PEER_PINS = ["pydantic-ai-slim[openai]==2.68.0", "openai-agents==0.24.0"]

PYDANTIC_AI_LOOP = '''
import sys
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import UsageLimits

client = AsyncOpenAI(base_url=sys.argv[1], api_key="bench", max_retries=0)
agent = Agent(OpenAIChatModel("bench", provider=OpenAIProvider(openai_client=client)), instructions="You are a benchmark.")

@agent.tool_plain
def echo(text: str) -> str:
    """Echo the text back"""
    return text

print(agent.run_sync("loop", usage_limits=UsageLimits(request_limit=None)).output)
'''

AGENTS_SDK_LOOP = '''
import sys
from openai import AsyncOpenAI
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled

set_tracing_disabled(True)  # nothing leaves the machine
client = AsyncOpenAI(base_url=sys.argv[1], api_key="bench", max_retries=0)

@function_tool
def echo(text: str) -> str:
    """Echo the text back"""
    return text

agent = Agent(name="bench", instructions="You are a benchmark.", tools=[echo],
              model=OpenAIChatCompletionsModel(model="bench", openai_client=client))
print(Runner.run_sync(agent, "loop", max_turns=1000).final_output)
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


def peers_python(venv: Path) -> str:
    """The python of the peers' throwaway venv, made (and the pinned peers installed) on first use."""
    python = venv / "bin" / "python"
    marker = venv / "pins.txt"
    if not (python.exists() and marker.exists() and marker.read_text() == " ".join(PEER_PINS)):
        print(f"making the peers' venv in {venv} ({', '.join(PEER_PINS)}) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PEER_PINS], check=True)
        marker.write_text(" ".join(PEER_PINS))
    return str(python)


def cpu_of(pid: int) -> float:
    """CPU seconds process ``pid`` has used so far, all its threads (schedstat: nanoseconds)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


class Run:
    """One contender's run: wall and CPU in all, and by the first and the last model request the server saw."""

    def __init__(self):
        self.pid, self.started, self.first, self.last = 0, 0.0, None, None  # (wall, CPU) at those requests

    def script(self, server: WireServer, iterations: int) -> None:
        def first(request):
            self.first = (time.perf_counter() - self.started, cpu_of(self.pid))
            return steps[0]

        def last(request):
            self.last = (time.perf_counter() - self.started, cpu_of(self.pid))
            return steps[-1]

        steps = [reply(tool_calls=[("echo", {"text": f"step {i}"})]) for i in range(iterations)] + [reply("All done.")]
        server.script([first, *steps[1:-1], last])

    def timed(self, cmd: list, env: dict, cwd: Path) -> tuple:
        """(wall seconds, CPU seconds of the child: user + system, first-request wall and CPU, last-request
        wall and CPU). Every contender runs in ``cwd``, a folder of no project: started in a code project,
        hermes' coding layer would run git, which the minimal loop has no counterpart of."""
        import resource

        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
        self.pid = proc.pid
        out, err = proc.communicate(timeout=300)
        elapsed = time.perf_counter() - self.started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0 or "All done." not in out or self.first is None or self.last is None:
            raise SystemExit(f"run failed ({' '.join(cmd[:3])} ...):\n{out[-2000:]}\n{err[-2000:]}")
        return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), *self.first, *self.last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--vs", help="the python of another checkout's venv (its hermes runs beside this one)")
    parser.add_argument("--vs-root", help="that checkout's folder")
    parser.add_argument("--no-save-too", action="store_true",
                        help="also run hermes with --no-save: what the session store costs (target <= 1.02x)")
    parser.add_argument("--used-only-too", action="store_true",
                        help="also run hermes with only the plugins the run calls (the rest never imported)")
    parser.add_argument("--postgres", action="store_true", help="also run hermes on the PostgreSQL session store")
    parser.add_argument("--durable", action="store_true", help="also run hermes with durable.engine: dbos")
    parser.add_argument("--peers", action="store_true", help="also run pydantic-ai and the OpenAI Agents SDK")
    parser.add_argument("--peers-venv", default=str(Path(tempfile.gettempdir()) / "hermes-bench-peers"),
                        help="where the peers' throwaway venv is made and kept (default: %(default)s)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    server, postgres = WireServer().start(), None
    try:
        site = make_site(tmp)
        home = tmp / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "HERMES_"))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # users run byte-compiled modules (pip compiles the SDKs')
        env.update(HERMES_HOME=str(home), PYTHONPATH=os.pathsep.join([str(ROOT), str(site)]))
        for name, text in (("minimal_loop", MINIMAL_LOOP), ("pydantic_ai_loop", PYDANTIC_AI_LOOP),
                           ("agents_sdk_loop", AGENTS_SDK_LOOP)):
            (tmp / f"{name}.py").write_text(text)
        hermes_cmd = hermes_command() + ["run", "--base-url", server.openai_url, "--api-mode", "chat_completions",
                                         "-m", "bench", "--max-turns", str(args.iterations + 10), "-t", "bench", "loop"]
        contenders = [("hermes run", hermes_cmd, env),
                      ("minimal SDK loop", [sys.executable, str(tmp / "minimal_loop.py"), server.openai_url], env)]
        if args.no_save_too:
            contenders.insert(1, ("hermes run --no-save", [*hermes_cmd[:-1], "--no-save", hermes_cmd[-1]], env))
        if args.used_only_too:
            contenders.insert(1, ("hermes run, used only", hermes_cmd, dict(env, HERMES_PLUGINS=USED)))
        homes = {}  # contender -> the config of a data folder of its own
        if args.postgres:
            from tests.conftest import free_port
            from tests.postgres_server import PostgresServer

            postgres = PostgresServer(free_port()).start()
            homes["hermes run (postgres)"] = f"sessions:\n  store: postgres\n  database_url: {postgres.create_database('bench')}\n"
        if args.durable:
            homes["hermes run (durable, sqlite)"] = "durable:\n  engine: dbos\n"
            if postgres is not None:
                homes["hermes run (durable, postgres)"] = ("durable:\n  engine: dbos\n  database_url: "
                                                           f"{postgres.create_database('durable')}\n")
        for name, config in homes.items():
            folder = tmp / f"home-{len(contenders)}"
            folder.mkdir()
            (folder / "config.yaml").write_text(config)
            contenders.insert(1, (name, hermes_cmd, dict(env, HERMES_HOME=str(folder))))
        if args.vs:
            other_env = dict(env, PYTHONPATH=os.pathsep.join([str(Path(args.vs_root).resolve()), str(site)]),
                             HERMES_HOME=str(tmp / "home-other"))  # its own data folder: its state is not ours
            contenders.insert(1, ("other hermes run", [str(Path(args.vs).parent / "hermes"), *hermes_cmd[1:]], other_env))
        if args.peers:
            python = peers_python(Path(args.peers_venv))
            peer_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}  # nothing of this checkout
            contenders += [(name, [python, str(tmp / f"{file}.py"), server.openai_url], peer_env) for name, file in (
                ("pydantic-ai", "pydantic_ai_loop"), ("OpenAI Agents SDK", "agents_sdk_loop"),
                ("minimal (peers' venv)", "minimal_loop"))]
        results: dict = {name: [] for name, _, _ in contenders}
        for round_ in range(-1, args.repeats):  # round -1 warms up (byte-compiling, the page cache), uncounted
            # every other round in the reverse order: a place in the rotation is worth some percent (a run of this
            # tree against a copy of it measured 0.94x to the first request when it always went first)
            for name, cmd, run_env in contenders if round_ % 2 == 0 else contenders[::-1]:
                run = Run()
                run.script(server, args.iterations)
                before = len(server.requests)
                timing = run.timed(cmd, run_env, tmp)
                if round_ >= 0:
                    results[name].append(timing)
                made = len(server.requests) - before
                if made != args.iterations + 1:
                    raise SystemExit(f"{name}: expected {args.iterations + 1} model calls, saw {made}")
                offered = [t["function"]["name"] for t in server.requests[-1].body.get("tools", [])]
                if offered != ["echo"]:  # same work on every side: one tool schema per request
                    raise SystemExit(f"{name}: offered tools {offered}, expected ['echo']")
        for name, times in results.items():
            med = [statistics.median(t[i] for t in times) for i in range(4)]
            print(f"{name:22s} median {med[0]:.3f}s wall, {med[1]:.3f}s CPU; first request {med[2] * 1e3:.0f} ms"
                  f" wall, {med[3] * 1e3:.0f} ms CPU")

        def paired(a: str, b: str, wall: int = 0, cpu: int = 1) -> str:  # the median of the per-round ratios
            w = statistics.median(x[wall] / y[wall] for x, y in zip(results[a], results[b]))
            c = statistics.median(x[cpu] / y[cpu] for x, y in zip(results[a], results[b]))
            return f"{w:.3f}x wall, {c:.3f}x CPU"

        print(f"rounds: {args.repeats}, {args.iterations} tool iterations; ratios are medians of per-round ratios")
        pairs = [("hermes run", "minimal SDK loop", "(target <= 1.05x)")]
        if args.no_save_too:
            pairs.append(("hermes run", "hermes run --no-save", "(target <= 1.02x)"))
        if args.used_only_too:
            pairs.append(("hermes run, used only", "minimal SDK loop", "(the other built-ins never imported)"))
        if args.postgres:
            pairs.append(("hermes run (postgres)", "hermes run", ""))
        durable = [name for name in homes if name.startswith("hermes run (durable")]
        pairs += [(name, "hermes run", "") for name in durable]
        if args.vs:
            pairs.append(("hermes run", "other hermes run", ""))
        if args.peers:
            pairs += [("pydantic-ai", "minimal (peers' venv)", ""), ("OpenAI Agents SDK", "minimal (peers' venv)", "")]
        for a, b, target in pairs:
            print(f"{a} / {b}: whole run {paired(a, b)}; to the first request {paired(a, b, 2, 3)} {target}".rstrip())
        for name in durable:  # the loop's part: from the first request to the last, per iteration
            pairs_ = list(zip(results[name], results["hermes run"]))
            step = [((x[4] - x[2]) - (y[4] - y[2])) / args.iterations * 1e3 for x, y in pairs_]
            cpu = [((x[5] - x[3]) - (y[5] - y[3])) / args.iterations * 1e3 for x, y in pairs_]
            start = [(x[2] - y[2]) * 1e3 for x, y in pairs_]
            end = [((x[0] - x[4]) - (y[0] - y[4])) * 1e3 for x, y in pairs_]
            print(f"{name}: adds {statistics.median(step):.2f} ms wall, {statistics.median(cpu):.2f} ms CPU per "
                  f"iteration (a model call and a tool call: two durable steps; goal < 2 ms a step on SQLite); "
                  f"{statistics.median(start):.0f} ms to the first request, {statistics.median(end):.0f} ms after "
                  f"the last")
    finally:
        server.stop()
        if postgres is not None:
            postgres.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
