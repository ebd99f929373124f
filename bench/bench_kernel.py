"""Kernel overhead per loop iteration.

A tool loop of N iterations with the scripted provider (no network, no model)
and P plugins that implement every hook of kernel.hookspecs with a no-op.
Whatever the run costs beyond the trivial provider and tool is the kernel's
overhead. Prints the median of several runs, per iteration, in CPU time of the process (issue 24's measure:
on a shared machine one run's wall time varied by half from the next, its CPU time by a few percent).

With ``--vs-pluggy`` it also records the hook calls one run makes (name and arguments, through
pluggy's call monitoring) and replays them on a bare pluggy manager holding the same no-op plugins,
unguarded: the kernel's cost per iteration against pluggy's own for the same calls (issue 24's
target with 20 plugins: at most 1.8x). The same calls are also replayed on a plugin host holding the same plugins
behind the guard, and the loop runs once more with the same plugins registered with pluggy unguarded: together they
split what the plugins add into the guard's share and what a call costs inside a running loop rather than in a
tight replay (the kernel's work for listeners, colder caches). Kernel runs and replays alternate.

    python bench/bench_kernel.py [--iterations 200] [--plugins 20] [--runs 7] [--vs-pluggy]
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import sys
import tempfile
import time
from typing import Optional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from hermes.host.config import Config  # noqa: E402
from hermes.host.plugins import PluginHost  # noqa: E402
from kernel import hookimpl, hookspecs  # noqa: E402
from kernel.agent import Agent  # noqa: E402
from kernel.types import ProviderConfig, Tool  # noqa: E402
from plugins_providers.scripted import scripted_plugin  # noqa: E402

SKIP = {"register_commands", "discover_plugins", "register_tools", "register_model_providers", "resolve_api_mode",
        "register_toolsets", "register_memory_backends", "register_context_engines", "register_slash_commands",
        "clarify", "approve_tool_call", "choose_provider", "on_provider_error", "load_session", "latest_session"}


def noop_plugin(i: int):
    """A plugin object implementing every non-question hook with a no-op."""
    namespace = {"__name__": f"noop{i}"}
    for name, spec in vars(hookspecs).items():
        if inspect.isfunction(spec) and hasattr(spec, "hermes_spec") and name not in SKIP:
            params = list(inspect.signature(spec).parameters)
            src = f"def {name}(self, {', '.join(params)}):\n    return None\n"
            scope: dict = {}
            exec(src, scope)  # noqa: S102
            namespace[name] = hookimpl(scope[name])
    return type(f"Noop{i}", (), namespace)()


class Tools:
    __name__ = "bench-tools"

    @hookimpl
    def register_tools(self, register):
        register(Tool("echo", "echo", {"type": "object", "properties": {}}, lambda a, c: "ok", parallel_safe=True))


def register_bare(pm, noops: list) -> None:
    """The no-op plugins registered with pluggy as they are: no guard."""
    for i, plugin in enumerate(noops):
        pm.register(plugin, name=f"noop{i}")


def one_run(iterations: int, plugins: int, stream: bool, record: Optional[list] = None, guarded: bool = True) -> float:
    """Seconds per iteration of the loop; ``guarded=False`` registers the no-op plugins with pluggy as they are,
    past the host's guard (what the loop would cost with bare pluggy inside it)."""
    steps = [{"tool_calls": [["echo", {"i": i}]]} for i in range(iterations - 1)] + ["done"]
    config = Config({"agent": {"max_turns": iterations + 5}})
    noops = [noop_plugin(i) for i in range(plugins)]
    host = PluginHost.from_objects([scripted_plugin(steps), Tools(), *(noops if guarded else [])], config)
    if not guarded:
        register_bare(host.pm, noops)
    agent = Agent(host, ProviderConfig(api_mode="scripted", model="m"))
    if record is not None:
        host.pm.add_hookcall_monitoring(lambda name, impls, kwargs: record.append((name, dict(kwargs))),
                                        lambda outcome, name, impls, kwargs: None)
    agent.stream = stream
    started = time.process_time()
    result = agent.run_conversation("go")
    took = time.process_time() - started
    assert result["exit_reason"] == "completed" and result["api_calls"] == iterations, result["exit_reason"]
    return took / iterations


def replay(calls: list, plugins: int, iterations: int, guarded: bool = False) -> float:
    """The recorded hook calls on bare pluggy with the no-op plugins (``guarded``: on a plugin host, each
    behind the guard): seconds per iteration."""
    import pluggy

    if guarded:
        pm = PluginHost.from_objects([noop_plugin(i) for i in range(plugins)], Config({}), providers=False).pm
    else:
        pm = pluggy.PluginManager("hermes")
        pm.add_hookspecs(hookspecs)
        register_bare(pm, [noop_plugin(i) for i in range(plugins)])
    bound = [(getattr(pm.hook, name), kwargs) for name, kwargs in calls if hasattr(pm.hook, name)]
    started = time.process_time()
    for hook, kwargs in bound:
        hook(**kwargs)
    return (time.process_time() - started) / iterations


def vs_pluggy(args) -> None:
    calls: list = []
    one_run(args.iterations, args.plugins, False, record=calls)
    kernel, empty, bare, guarded, unguarded = [], [], [], [], []
    for _ in range(args.runs + 1):  # alternating; the first round warms up
        kernel.append(one_run(args.iterations, args.plugins, False))
        empty.append(one_run(args.iterations, 0, False))
        bare.append(replay(calls, args.plugins, args.iterations))
        guarded.append(replay(calls, args.plugins, args.iterations, guarded=True))
        unguarded.append(one_run(args.iterations, args.plugins, False, guarded=False))
    rounds = list(zip(kernel, empty, bare, guarded, unguarded))[1:]
    whole = statistics.median(k / b for k, _, b, _, _ in rounds)
    marginal = statistics.median((k - e) / b for k, e, b, _, _ in rounds)
    guard = statistics.median(g / b for _, _, b, g, _ in rounds)
    inside = statistics.median((u - e) / b for _, e, b, _, u in rounds)
    ms = [statistics.median(x[1:]) * 1000 for x in (kernel, empty, bare)]
    print(f"per iteration: kernel with {args.plugins} no-op plugins on every hook {ms[0]:.3f} ms, with none {ms[1]:.3f} ms; "
          f"bare pluggy making the same {len(calls) / args.iterations:.0f} hook calls with the {args.plugins} plugins "
          f"{ms[2]:.3f} ms")
    print(f"ratio to bare pluggy: the whole iteration {whole:.2f}x; what the plugins add to it {marginal:.2f}x "
          f"(target <= 1.8x); the same calls on the guarded plugins alone {guard:.2f}x; what the same plugins add "
          f"unguarded, inside the loop {inside:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--plugins", type=int, default=20)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--vs-pluggy", action="store_true", help="the kernel against bare pluggy making its calls")
    args = parser.parse_args()
    os.environ["HERMES_HOME"] = tempfile.mkdtemp(prefix="hermes-bench-")
    if args.vs_pluggy:
        return vs_pluggy(args)
    for plugins in (0, args.plugins):
        for stream in (False, True):
            one_run(20, plugins, stream)  # warm-up
            runs = [one_run(args.iterations, plugins, stream) for _ in range(args.runs)]
            med = statistics.median(runs) * 1000
            print(f"{plugins:2d} plugins x every hook, stream={str(stream):5}: median {med:.3f} ms per iteration "
                  f"(min {min(runs) * 1000:.3f}, max {max(runs) * 1000:.3f}; {args.runs} runs of {args.iterations})")


if __name__ == "__main__":
    main()
