"""How long ``hermes chat`` takes to show its prompt, in a pseudo-terminal, as a person waits for it.

Each round starts ``hermes chat --no-save`` (a scripted model: no SDK, no network) from a fresh process and
times the wall clock until ``hermes> `` is shown, then leaves with Ctrl+D. Two data folders: one without MCP
servers and one with a server (``light_mcp_server.py``, standard library only, so its own start costs next to
nothing): building the agent starts the server in the background, and the client imports the ``mcp`` SDK
there, which holds the interpreter while the main thread draws the prompt.

With ``--vs-root OTHER_CHECKOUT`` each round runs this tree and that one alternately (A B A B), and the medians
and their ratio are printed per data folder.

    python bench/bench_chat_prompt.py [--rounds 21] [--vs-root /tmp/base]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parent.parent


def home(folder: Path, with_mcp: bool) -> Path:
    folder.mkdir()
    (folder / "script.json").write_text('["hello"]')
    config = f"api_mode: scripted\nbase_url: {folder / 'script.json'}\n"
    if with_mcp:
        config += (f"mcp_servers:\n  light:\n    command: {sys.executable}\n"
                   f"    args: [{ROOT / 'bench' / 'light_mcp_server.py'}]\n")
    (folder / "config.yaml").write_text(config)
    return folder


def to_prompt(root: Path, data: Path) -> float:
    env = {**os.environ, "HERMES_HOME": str(data), "PYTHONPATH": str(root), "TERM": "xterm-256color",
           "PROMPT_TOOLKIT_NO_CPR": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    child = pexpect.spawn(sys.executable, ["-m", "hermes.cli", "chat", "--no-save"], env=env, cwd=str(data),
                          encoding="utf-8", timeout=30)
    child.expect_exact("hermes> ")
    seconds = time.perf_counter() - started
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--vs-root", help="another checkout, run alternately with this one")
    args = parser.parse_args()
    trees = {"this tree": ROOT, **({"vs": Path(args.vs_root).resolve()} if args.vs_root else {})}
    with tempfile.TemporaryDirectory() as tmp:
        for label, with_mcp in (("no MCP server", False), ("one MCP server", True)):
            homes = {name: home(Path(tmp) / f"{name.replace(' ', '-')}-{with_mcp}", with_mcp) for name in trees}
            for name, root in trees.items():  # warm: bytecode written, the plugin listing remembered
                to_prompt(root, homes[name])
            times: dict = {name: [] for name in trees}
            for _ in range(args.rounds):
                for name, root in trees.items():
                    times[name].append(to_prompt(root, homes[name]))
            medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
            line = ", ".join(f"{name} {ms:.0f} ms" for name, ms in medians.items())
            if args.vs_root:
                line += f"; this tree / vs: {medians['this tree'] / medians['vs']:.3f}x"
            print(f"{label}: median wall to the prompt over {args.rounds} rounds: {line}", flush=True)


if __name__ == "__main__":
    main()
