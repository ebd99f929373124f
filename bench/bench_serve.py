"""What ``hermes serve`` costs, and how it scales (issue 26).

1. Overhead: a one-step turn (the scripted provider answers at once) through ``POST /v1/chat/completions``
   from one client, against the same turn in-process (a process with the same plugins and data folder that
   builds an agent and runs the turn), blocks alternating; the difference of the medians (goal: at most 2 ms).
2. Load: requests per second and p50/p99 latency of that turn with 1, 8 and 32 concurrent clients (each a
   thread with its own keep-alive connection); every request must succeed at 32.
3. Against a model that takes ``--delay`` seconds a reply (the wire-protocol test server): throughput with 8
   clients against 1, alternating round by round (goal: at least 6x: the model, not the server, is the limit).

    python bench/bench_serve.py [--turns 200] [--rounds 5] [--delay 0.1]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HERMES = [str(Path(sys.executable).parent / "hermes")] if (Path(sys.executable).parent / "hermes").exists() \
    else [sys.executable, "-m", "hermes.cli"]
BODY = json.dumps({"model": "hermes-agent", "messages": [{"role": "user", "content": "hi"}]}).encode()

IN_PROCESS = r"""
import json, sys, time
from hermes.cli.app import App
from plugins.serve.turns import TurnRequest, build_agent, run_turn
host = App(None).host
for line in sys.stdin:
    times = []
    for _ in range(int(line)):
        started = time.perf_counter()
        turn = TurnRequest(user_message="hi")
        result = run_turn(build_agent(host, turn, None), turn)
        assert result.final_response == "ok", result.error
        times.append(time.perf_counter() - started)
    print(json.dumps(times), flush=True)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(home: Path, env: dict) -> tuple:
    port = free_port()
    process = subprocess.Popen(HERMES + ["serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return process, port
        except OSError:
            time.sleep(0.1)
    raise SystemExit("hermes serve did not start")


def client_turns(port: int, count: int, latencies: list, failures: list) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for _ in range(count):
        started = time.perf_counter()
        try:
            connection.request("POST", "/v1/chat/completions", BODY, {"Content-Type": "application/json"})
            response = connection.getresponse()
            data = response.read()
            if response.status != 200:
                failures.append(f"{response.status}: {data[:200]!r}")
                continue
        except (OSError, http.client.HTTPException) as exc:
            failures.append(repr(exc))
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            continue
        latencies.append(time.perf_counter() - started)
    connection.close()


def load(port: int, clients: int, per_client: int) -> dict:
    latencies, failures = [], []
    threads = [threading.Thread(target=client_turns, args=(port, per_client, latencies, failures))
               for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.perf_counter() - started
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else 0  # noqa: E731
    return {"clients": clients, "requests": len(latencies), "failed": len(failures), "rps": len(latencies) / took,
            "p50": p(0.5), "p99": p(0.99), "first_failure": failures[0] if failures else None}


def environment(home: Path, config: dict) -> dict:
    (home / "config.yaml").write_text(json.dumps(config))
    env = {k: v for k, v in os.environ.items() if k not in ("API_SERVER_KEY", "PYTHONDONTWRITEBYTECODE")}
    env.update(HERMES_HOME=str(home), PYTHONPATH=str(ROOT))
    return env


def overhead_and_load(args, home: Path) -> None:
    script = home / "script.json"
    script.write_text(json.dumps(["ok"]))
    env = environment(home, {"model": "bench", "api_mode": "scripted", "base_url": str(script),
                             "api_server": {"max_concurrent_runs": 32}})
    server, port = start_server(home, env)
    child = subprocess.Popen([sys.executable, "-c", IN_PROCESS], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        block = max(10, args.turns // args.rounds)
        child.stdin.write("20\n")  # warm-up, both
        child.stdin.flush()
        child.stdout.readline()
        load(port, 1, 20)
        ours, theirs = [], []
        for _ in range(args.rounds):
            child.stdin.write(f"{block}\n")
            child.stdin.flush()
            ours += json.loads(child.stdout.readline())
            latencies: list = []
            client_turns(port, block, latencies, [])
            theirs += latencies
        a, b = statistics.median(ours) * 1000, statistics.median(theirs) * 1000
        print(f"a one-step turn (scripted provider), {len(ours)} turns each, blocks of {block} alternating")
        print(f"  in-process (build the agent, run the turn)   median {a:7.2f} ms")
        print(f"  through hermes serve, one client             median {b:7.2f} ms   overhead {b - a:+.2f} ms")
        print("\nload (scripted provider)")
        for clients in (1, 8, 32):
            row = load(port, clients, max(5, args.turns // clients))
            print(f"  {clients:>2} clients  {row['requests']:>5} requests  {row['rps']:7.1f} req/s  "
                  f"p50 {row['p50']:7.1f} ms  p99 {row['p99']:7.1f} ms  failed {row['failed']}"
                  + (f"  ({row['first_failure']})" if row["failed"] else ""))
    finally:
        child.stdin.close()
        child.wait(10)
        server.terminate()
        server.wait(10)


def with_slow_model(args, home: Path) -> None:
    from plugins_providers.testserver import WireServer, reply

    wire = WireServer().start()
    env = environment(home, {"model": "bench", "api_mode": "chat_completions", "base_url": wire.openai_url,
                             "agent": {"stream": False}, "api_server": {"max_concurrent_runs": 32}})
    server, port = start_server(home, env)
    try:
        wire.push(*[reply("ok", delay=args.delay) for _ in range(3)])
        load(port, 1, 3)  # warm-up: the SDK's import and the first connection are not the steady state
        rows: dict = {1: [], 8: []}
        for _ in range(args.rounds):  # 1 and 8 clients alternate, round after round
            for clients in (1, 8):
                count = max(4, args.delay_turns // args.rounds // clients)
                wire.push(*[reply("ok", delay=args.delay) for _ in range(count * clients + 5)])
                rows[clients].append(load(port, clients, count))
        ratios = [b["rps"] / a["rps"] for a, b in zip(rows[1], rows[8])]
        print(f"\nagainst a model that answers in {args.delay * 1000:.0f} ms (the wire-protocol test server), "
              f"{args.rounds} rounds of 1 then 8 clients")
        for clients, done in rows.items():
            print(f"  {clients:>2} clients  {sum(r['requests'] for r in done):>5} requests  "
                  f"median {statistics.median(r['rps'] for r in done):7.1f} req/s  "
                  f"p50 {statistics.median(r['p50'] for r in done):7.1f} ms  "
                  f"p99 {max(r['p99'] for r in done):7.1f} ms  failed {sum(r['failed'] for r in done)}")
        print(f"  throughput with 8 clients: median {statistics.median(ratios):.2f}x that with 1 over the rounds "
              "(goal: at least 6x)")
    finally:
        server.terminate()
        server.wait(10)
        wire.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--delay-turns", type=int, default=80)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        overhead_and_load(args, Path(first))
        with_slow_model(args, Path(second))


if __name__ == "__main__":
    main()
