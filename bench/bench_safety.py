"""What the safety checks cost: masking known key values in tool output.

Masks 100 kB of tool output (with and without keys in it) against an
environment holding 12 secrets, in this interpreter; prints the median per
100 kB over many repeats. Target: under 1 ms per 100 kB.

    python bench/bench_safety.py [--repeats 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kernel.secrets import Secrets  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    env = {f"SERVICE{i}_API_KEY": f"sk-{i:02d}-" + "x" * 40 for i in range(12)}
    env.update(PATH="/usr/bin", HOME="/home/user")
    secrets = Secrets(environ=env)
    line = "drwxr-xr-x 2 user user 4096 Dec  1 08:00 some-folder-name-here\n"
    clean = (line * (100_000 // len(line) + 1))[:100_000]
    leaky = clean[:50_000] + env["SERVICE3_API_KEY"] + clean[50_000 + 48:]
    for label, text in (("no key in it", clean), ("one key in it", leaky)):
        runs = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            secrets.mask(text)
            runs.append(time.perf_counter() - started)
        print(f"mask 100 kB, 12 secrets, {label:13}: median {statistics.median(runs) * 1000:.3f} ms "
              f"(max {max(runs) * 1000:.3f} ms; target < 1 ms)")


if __name__ == "__main__":
    main()
