"""``python -m plugins_providers.testserver``: the wire-protocol test server by hand.

Serves on 127.0.0.1 until Ctrl+C (or SIGTERM), printing its addresses, then one
line per request. ``--script steps.json`` queues answers: a JSON list whose
items are a string (the answer) or an object of :class:`Step` fields
(``{"tool_calls": [["terminal", {"command": "ls"}]]}``, ``{"status": 429}``);
when they run out every request is answered ``--default``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from plugins_providers.testserver import Step, WireServer, reply


def _steps(path: str) -> list:
    try:
        with open(path, encoding="utf-8") as f:
            items = json.load(f)
        if not isinstance(items, list):
            raise ValueError("expected a JSON list of steps")
        return [reply(item) if isinstance(item, str) else Step(**item) for item in items]
    except (OSError, ValueError, TypeError) as exc:  # TypeError: a field Step does not have
        raise SystemExit(f"wire server: {path}: {exc}") from None


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plugins_providers.testserver", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--script", metavar="FILE", help="a JSON list of steps to answer in order")
    parser.add_argument("--default", default="ok", help="the answer once the script is used up (default: ok)")
    parser.add_argument("--api-key", help="require this key (default: accept any)")
    args = parser.parse_args(argv)
    steps = _steps(args.script) if args.script else []
    server = WireServer(api_key=args.api_key, default=reply(args.default), port=args.port)
    server.push(*steps)
    try:
        server.start()
    except OSError as exc:
        raise SystemExit(f"wire server: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from None
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    server.on_request = lambda request: print(f"{request.method} {request.path}", flush=True)
    print(f"wire server on {server.url} (OpenAI SDK base URL {server.openai_url}); {len(steps)} steps queued; "
          "Ctrl+C stops it", flush=True)
    print(f"try: hermes run --base-url {server.openai_url} --api-mode chat_completions -m test \"hi\"", flush=True)
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
