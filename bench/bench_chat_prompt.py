"""How long ``hermes chat`` takes to show its prompt, and to answer a message sent at once, in a pseudo-terminal.

Each round starts ``hermes chat --no-save`` from a fresh process and times the wall clock until ``hermes> `` is
shown, what a person waits for before typing. Three data folders:

* a scripted model (no SDK, no network) and no MCP server;
* the same with an MCP server (``light_mcp_server.py``, standard library only, so its own start costs next to
  nothing): building the agent starts it in the background, where the client imports the ``mcp`` SDK;
* the chat-completions provider (the ``openai`` SDK) on a loopback wire server: here the round also sends a
  message the moment the prompt is shown and times its answer, so a start that puts work off past the prompt
  shows what it costs the first answer (the worst case: nobody types that fast).

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
sys.path.insert(0, str(ROOT))

from plugins_providers.testserver import WireServer, reply  # noqa: E402

ANSWER = "the answer is kiwi"


def home(folder: Path, case: str, server: WireServer) -> Path:
    folder.mkdir()
    (folder / "script.json").write_text(f'["{ANSWER}"]')
    if case == "openai":
        config = f"api_mode: chat_completions\nmodel: gpt-test\nbase_url: {server.openai_url}\n"
    else:
        config = f"api_mode: scripted\nbase_url: {folder / 'script.json'}\n"
    if case == "mcp":
        config += (f"mcp_servers:\n  light:\n    command: {sys.executable}\n"
                   f"    args: [{ROOT / 'bench' / 'light_mcp_server.py'}]\n")
    (folder / "config.yaml").write_text(config)
    return folder


def one_round(root: Path, data: Path) -> tuple:
    """(seconds to the prompt, seconds from Enter at the prompt to the answer shown)."""
    env = {**os.environ, "HERMES_HOME": str(data), "PYTHONPATH": str(root), "TERM": "xterm-256color",
           "PROMPT_TOOLKIT_NO_CPR": "1", "OPENAI_API_KEY": "sk-bench"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    child = pexpect.spawn(sys.executable, ["-m", "hermes.cli", "chat", "--no-save"], env=env, cwd=str(data),
                          encoding="utf-8", timeout=30)
    child.expect_exact("hermes> ")
    prompt = time.perf_counter()
    child.send("hi\r")
    child.expect_exact(ANSWER)
    answered = time.perf_counter()
    child.expect_exact("hermes> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return prompt - started, answered - prompt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--vs-root", help="another checkout, run alternately with this one")
    args = parser.parse_args()
    trees = {"this tree": ROOT, **({"vs": Path(args.vs_root).resolve()} if args.vs_root else {})}
    server = WireServer(default=reply(ANSWER)).start()
    with tempfile.TemporaryDirectory() as tmp:
        for case, label in (("plain", "scripted, no MCP server"), ("mcp", "scripted, one MCP server"),
                            ("openai", "openai SDK, loopback server")):
            homes = {name: home(Path(tmp) / f"{case}-{name.replace(' ', '-')}", case, server) for name in trees}
            for name, root in trees.items():  # warm: bytecode written, the plugin listing remembered
                one_round(root, homes[name])
            times: dict = {name: [] for name in trees}
            for _ in range(args.rounds):
                for name, root in trees.items():
                    times[name].append(one_round(root, homes[name]))
            print(f"{label} ({args.rounds} rounds, median wall):", flush=True)
            for what, index in (("to the prompt", 0), ("Enter to the answer", 1)):
                medians = {name: statistics.median(t[index] for t in ts) * 1000 for name, ts in times.items()}
                line = ", ".join(f"{name} {ms:.0f} ms" for name, ms in medians.items())
                if args.vs_root:
                    line += f"; this tree / vs: {medians['this tree'] / medians['vs']:.3f}x"
                print(f"  {what:20} {line}", flush=True)
            whole = {name: statistics.median(a + b for a, b in ts) * 1000 for name, ts in times.items()}
            line = ", ".join(f"{name} {ms:.0f} ms" for name, ms in whole.items())
            if args.vs_root:
                line += f"; this tree / vs: {whole['this tree'] / whole['vs']:.3f}x"
            print(f"  {'start to the answer':20} {line}", flush=True)
    server.stop()


if __name__ == "__main__":
    main()
