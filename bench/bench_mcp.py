"""What MCP costs: the time until the first tool list, and a call against a direct SDK round trip.

1. Start-up: the time from starting the servers to having every tool list, with the slowest server alone
   (one that waits ``--slow`` seconds before it serves, as one waiting on its backend does) against the same
   server beside four others (issue 25: 5 servers in at most 1.3x the slowest alone); first with servers on
   the standard library alone (bench/light_mcp_server.py: what is measured is the client and the waiting),
   then with the test server on the SDK, and five of those against one: their start is CPU (each imports the
   SDK, about 0.8 s), so on a 2-core machine they queue for the cores whoever starts them.
2. A call: ``echo`` through an MCP tool's handler (the agent's thread hands it to the MCP loop, waits, and
   formats the result) against ``await session.call_tool`` in an asyncio program holding its own session to
   the same kind of server (issue 25: at most 1.2x).

Rounds alternate A B A B; medians and their ratio. The servers are tests/mcp/server.py.

    python bench/bench_mcp.py [--rounds 11] [--calls 200] [--slow 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermes.host.config import is_secret_name  # noqa: E402
from kernel.secrets import Secrets  # noqa: E402
from plugins.mcp.config import parse  # noqa: E402
from plugins.mcp.servers import Manager, tools_of  # noqa: E402

SERVER = ROOT / "tests" / "mcp" / "server.py"
LIGHT = ROOT / "bench" / "light_mcp_server.py"


def server(name: str, *args) -> object:
    return parse(name, {"command": sys.executable, "args": [str(SERVER), *map(str, args)]})


def light(name: str, wait: float = 0.0) -> object:
    return parse(name, {"command": sys.executable, "args": ["-I", "-S", str(LIGHT), str(wait)]})


CPU: dict = {}  # label -> the servers' CPU seconds of each round


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def start_up(servers: dict, home: Path, label: str) -> float:
    manager, cpu = Manager(home, Secrets(filter(is_secret_name, os.environ))), children_cpu()
    try:
        started = time.perf_counter()
        manager.update(servers)
        manager.wait_connecting(120)
        took = time.perf_counter() - started
        bad = [c.error for c in manager.connections.values() if c.state != "ready"]
        if bad:
            raise SystemExit(f"a server did not start: {bad}")
        return took
    finally:
        manager.shutdown()
        time.sleep(0.3)  # the guards reaped (their CPU and the servers' is counted when they end)
        CPU.setdefault(label, []).append(children_cpu() - cpu)


def paired(label_a, run_a, label_b, run_b, rounds: int) -> None:
    a, b = [], []
    for _ in range(rounds):
        a.append(run_a())
        b.append(run_b())
    ma, mb = statistics.median(a), statistics.median(b)
    cpu = {label: f"   servers' CPU {statistics.median(CPU[label]) * 1000:7.0f} ms" if label in CPU else ""
           for label in (label_a, label_b)}
    print(f"  {label_a:<46} median {ma * 1000:8.1f} ms{'':16}{cpu[label_a]}")
    print(f"  {label_b:<46} median {mb * 1000:8.1f} ms   ratio {mb / ma:.2f}x{cpu[label_b]}")


def bench_start(rounds: int, slow: float, home: Path) -> None:
    print(f"until every tool list ({rounds} rounds each, alternating)")
    slowest = {"slow": light("slow", slow)}
    five = {**slowest, **{f"s{i}": light(f"s{i}") for i in range(4)}}
    a, b = f"the slowest alone (stdlib server, waits {slow:g}s)", "it and four that answer at once"
    paired(a, lambda: start_up(slowest, home, a), b, lambda: start_up(five, home, b), rounds)
    slowest = {"slow": server("slow", "slow-start", slow)}
    five = {**slowest, **{f"s{i}": server(f"s{i}", "normal") for i in range(4)}}
    a, b = f"the slowest alone (SDK server, waits {slow:g}s)", "it and four ordinary SDK servers"
    paired(a, lambda: start_up(slowest, home, a), b, lambda: start_up(five, home, b), rounds)
    one = {"s0": server("s0", "normal")}
    many = {f"s{i}": server(f"s{i}", "normal") for i in range(5)}
    a, b = "one ordinary SDK server", "five ordinary SDK servers"
    paired(a, lambda: start_up(one, home, a), b, lambda: start_up(many, home, b), rounds)


def bench_calls(rounds: int, calls: int, home: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    ready, stop = threading.Event(), asyncio.Event()
    holder: dict = {}

    async def hold():
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "normal"])
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                holder["session"] = session
                ready.set()
                await stop.wait()

    asyncio.run_coroutine_threadsafe(hold(), loop)
    ready.wait(60)

    async def direct_block():
        session = holder["session"]
        started = time.perf_counter()
        for i in range(calls):
            await session.call_tool("echo", {"text": f"hi {i}"})
        return (time.perf_counter() - started) / calls

    manager = Manager(home, Secrets(filter(is_secret_name, os.environ)))
    manager.update({"t": server("t", "normal")})
    manager.wait_connecting(60)
    echo = next(t for t in tools_of(manager.connections["t"], home / "cache") if t.name == "mcp__t__echo")

    def ours_block():
        started = time.perf_counter()
        for i in range(calls):
            echo.handler({"text": f"hi {i}"}, None)
        return (time.perf_counter() - started) / calls

    def direct():
        return asyncio.run_coroutine_threadsafe(direct_block(), loop).result()

    direct(), ours_block()  # warm-up
    print(f"\na call of echo ({calls} calls a block, {rounds} blocks each, alternating)")
    paired("await session.call_tool (the SDK, direct)", direct, "an MCP tool's handler (hermes)", ours_block, rounds)
    manager.shutdown()
    loop.call_soon_threadsafe(stop.set)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--slow", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        bench_start(args.rounds, args.slow, Path(home))
        bench_calls(args.rounds, args.calls, Path(home))


if __name__ == "__main__":
    main()
