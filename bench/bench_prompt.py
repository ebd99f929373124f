"""Prompt assembly: the prompt plugin building a session's system prompt for
a project with three context files (the AGENTS.md chain of a repository
root and two subfolders) and 20 skills, every built-in tool offered and a
memory block, alternating with the memory block alone, in one process.

    python bench/bench_prompt.py [--runs 200]

The issue's limit is 5 ms per assembly.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-home-"))
    os.environ["HERMES_HOME"] = str(home)
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("The user keeps bees.\n§\nTests run with make check.\n")
    repo = home / "repo"
    deep = repo / "src" / "app"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    for folder in (repo, repo / "src", deep):
        (folder / "AGENTS.md").write_text("# Conventions\n" + "Keep functions short and named for what they do.\n" * 60)
    for i in range(20):
        folder = home / "skills" / f"skill-{i:02d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: skill-{i:02d}\ndescription: What to do for task {i}.\n---\n\n"
                                         + "A step of the procedure.\n" * 40)
        (folder / "notes.md").write_text("more")
    os.chdir(deep)

    from hermes.host.config import load_config
    from hermes.host.plugins import PluginHost
    from kernel.agent import Agent
    from kernel.types import ProviderConfig

    config = load_config()
    host = PluginHost.discover(config)
    agent = Agent(host, ProviderConfig(model="bench-model", api_mode="chat_completions"), platform="cli")
    parts = [agent.hook.system_prompt]  # the hook as the kernel calls it, wrapper included

    def with_plugin() -> None:
        parts[0](agent=agent, session_id=agent.session_id, model="bench-model", platform="cli")

    def parts_only() -> None:  # what the other plugins contribute, without the layers
        from plugins_memory import manager

        manager.system_prompt(agent=agent, session_id=agent.session_id)

    for fn in (with_plugin, parts_only):
        fn()
    ours, base = [], []
    for _ in range(args.runs):
        for fn, out in ((with_plugin, ours), (parts_only, base)):
            started = time.perf_counter()
            fn()
            out.append(time.perf_counter() - started)
    with_plugin()
    layers = agent.state["prompt.layers"]
    agent.close()
    print(f"layers: {', '.join(f'{layer.name} {layer.chars}' for layer in layers)} characters")
    print(f"{'assembly':40} {'median':>9} {'max':>9}")
    print(f"{'system_prompt with the prompt plugin':40} {statistics.median(ours) * 1000:7.2f}ms "
          f"{max(ours) * 1000:7.2f}ms  {'<= 5 ms ok' if statistics.median(ours) <= 0.005 else '> 5 ms OVER'}")
    print(f"{'the memory block alone':40} {statistics.median(base) * 1000:7.2f}ms {max(base) * 1000:7.2f}ms")


if __name__ == "__main__":
    main()
