"""Benchmarks of the SQLite session store.

(a) appending one step (assistant message with a tool call + its result) to a
    session that already holds 10,000 messages vs to an empty session: the
    cost should not grow with the history;
(b) ``session_search`` (the tool handler, store search included) over 100,000
    messages: target under 50 ms.

Run: ``python bench/bench_sessions.py`` from the repository root. Uses a temp
folder; touches nothing else.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plugins.sessions.store import SessionStore  # noqa: E402

WORDS = (
    "agent tool model session provider garden python sqlite search index query message history budget "
    "stream token cache retry fallback config plugin kernel schema memory context compress summary "
    "weather coffee river mountain library window planet orange violet silver market ticket engine "
    "bridge castle forest harbor island jungle lantern meadow needle ocean pepper quartz rocket saddle"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def step(i: int, rng: random.Random) -> list:
    call = f"call_{i}"
    return [
        {"role": "assistant", "content": sentence(rng, 12), "reasoning": sentence(rng, 20),
         "tool_calls": [{"id": call, "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}]},
        {"role": "tool", "tool_call_id": call, "content": sentence(rng, 60)},
    ]


def fill(store: SessionStore, session_id: str, n_messages: int, rng: random.Random, batch: int = 500) -> None:
    store.append(session_id, [{"role": "user", "content": sentence(rng, 15)}])
    done, i = 1, 0
    while done < n_messages:
        msgs = []
        while len(msgs) < batch and done + len(msgs) < n_messages:
            msgs.extend(step(i, rng))
            i += 1
        store.append(session_id, msgs[: n_messages - done])
        done += len(msgs[: n_messages - done])


def median_ms(samples: list) -> float:
    return statistics.median(samples) * 1000


def bench_append(folder: Path, rng: random.Random, rounds: int = 200) -> None:
    store = SessionStore.for_data_dir(folder)
    fill(store, "big", 10_000, rng)
    store.ensure_session("empty")
    assert store.message_count("big") == 10_000
    times = {"big": [], "empty": []}
    for r in range(rounds):
        # Alternate so both see the same disk/cache conditions. The "empty"
        # session is replaced every round so it really is empty each time.
        for sid in ("big", "empty") if r % 2 == 0 else ("empty", "big"):
            target = sid if sid == "big" else f"empty{r}"
            if sid == "empty":
                store.ensure_session(target)
            msgs = step(100_000 + r, rng)
            t0 = time.perf_counter()
            store.append(target, msgs)
            times[sid].append(time.perf_counter() - t0)
    big, empty = median_ms(times["big"]), median_ms(times["empty"])
    print(f"(a) append one step (2 messages), median of {rounds}:")
    print(f"    to an empty session:            {empty:7.3f} ms")
    print(f"    to a session of 10,000 messages: {big:7.3f} ms")
    print(f"    ratio big/empty:                 {big / empty:7.2f}")
    store.close()


def bench_search(folder: Path, rng: random.Random, rounds: int = 50) -> None:
    from types import SimpleNamespace

    from hermes.host.config import Config
    from kernel.types import ToolContext
    from plugins.sessions import close_stores, get_store
    from plugins.sessions.tool import search_handler

    os.environ["HERMES_HOME"] = str(folder)
    store = get_store(folder)
    t0 = time.perf_counter()
    for s in range(100):  # 100 sessions of 1,000 messages
        fill(store, f"session-{s:03d}", 1_000, rng)
    build = time.perf_counter() - t0
    total = store.message_count()
    assert total == 100_000, total
    size_mb = (folder / "state.db").stat().st_size / 1e6
    print(f"(b) session_search over {total:,} messages in 100 sessions "
          f"(built in {build:.1f} s, state.db {size_mb:.0f} MB):")
    ctx = ToolContext(agent=SimpleNamespace(config=Config(), session_id="current"), tool_name="session_search",
                      tool_call_id="c", task_id="t", session_id="current", turn_id="1")
    queries = {
        "one common word": "garden",
        "two words": "coffee river",
        "three words": "planet orange lantern",
        "a word in no message": "xylophone",
        "FTS syntax as user text": '"garden" river* (',
    }
    for label, query in queries.items():
        samples, count = [], 0
        for _ in range(rounds):
            t0 = time.perf_counter()
            out = search_handler({"query": query, "limit": 10}, ctx)
            samples.append(time.perf_counter() - t0)
            count = json.loads(out)["count"]
        print(f"    {label:<26} {median_ms(samples):7.2f} ms median, {max(samples) * 1000:7.2f} ms max "
              f"({count} results)")
    close_stores()


def main() -> None:
    rng = random.Random(4)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
        a, b = Path(tmp) / "a", Path(tmp) / "b"
        a.mkdir()
        b.mkdir()
        bench_append(a, rng)
        bench_search(b, rng)


if __name__ == "__main__":
    main()
