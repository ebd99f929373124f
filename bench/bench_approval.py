"""What the approval check costs on commands of 1 kB, 100 kB and 1 MB (the
goal: any command judged in under 100 ms), and on the slowest command that
is still parsed (500 tokens), in rounds over every size, one after another.

    python bench/bench_approval.py [--rounds 21]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from hermes.host.config import Config  # noqa: E402
from plugins.approval import _check  # noqa: E402
from plugins.shell_analysis import MAX_TOKENS  # noqa: E402

COMMANDS = {
    "1 kB of words": ("echo " + "word " * 200)[:1000],
    "1 kB of commands": "; ".join(f"ls -la src/f{i}" for i in range(80))[:1000],
    f"{MAX_TOKENS} tokens (the most parsed)": " && ".join(f"rm -rf build/x{i}" for i in range(MAX_TOKENS // 4)),
    "100 kB here-document": "cat > notes.md <<'EOF'\n" + "a line of notes\n" * 6250 + "EOF",
    "100 kB": ("echo " + "word " * 20_000)[:100_000],
    "1 MB": ("echo " + "word " * 200_000)[:1_000_000],
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=21)
    rounds = parser.parse_args().rounds
    workdir = tempfile.mkdtemp()
    config = Config({"approvals": {"deny": ["*rm -rf /*"]}})
    _check("echo warm", config, workdir=workdir)
    times: dict = {name: [] for name in COMMANDS}
    for _ in range(rounds):
        for name, command in COMMANDS.items():
            started = time.perf_counter()
            _check(command, config, workdir=workdir)
            times[name].append(time.perf_counter() - started)
    for name, spent in times.items():
        print(f"{name:32} median {statistics.median(spent) * 1000:6.1f} ms   max {max(spent) * 1000:6.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
