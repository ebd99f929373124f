"""What the platforms that are sent their messages share (webhooks, WhatsApp's Cloud API): an HTTP server on a thread
of its own (the standard library's: a POST handler needs no framework), bodies of at most a megabyte."""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections import OrderedDict
from typing import Any, Callable, Optional

from plugins.gateway.hookspecs import PlatformError

log = logging.getLogger("hermes.gateway")
MOST_BODY = 1 << 20  # bytes


def listen(name: str, host: str, port: int, handle: Callable[[str, str, Any, bytes], tuple]) -> Any:
    """A running server on ``host:port`` whose requests ``handle(method, path, headers, body)`` answers with
    ``(status, a JSON object, text or bytes[, their type])``; :class:`PlatformError` (lasting) when the port cannot be
    had."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            try:
                status, body, *kind = (413, {"error": "payload too large"}) if size > MOST_BODY else handle(
                    method, self.path, self.headers, self.rfile.read(size))
            except Exception:  # noqa: BLE001 - one request never ends the server
                log.exception("%s: a request to %s failed", name, self.path)
                status, body, kind = 500, {"error": "internal error"}, []
            data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(status)
            self.send_header("Content-Type", kind[0] if kind else "text/plain" if isinstance(body, str) else
                             "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._answer("GET")

        def do_POST(self):
            self._answer("POST")

        def log_message(self, *args):  # the gateway's log says what matters
            pass

    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError as exc:
        raise PlatformError(f"{name}: cannot listen on {host}:{port} ({exc.strerror or exc})", lasting=True) from None
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name=f"gateway-{name}-http", daemon=True).start()
    return server


def bearer_claims(keys: Any, headers: Any, audience: str, issuer: Any, name: str) -> Optional[dict]:
    """The claims of the request's ``Authorization: Bearer`` token when one of ``keys`` (PyJWT's client of a service's
    published keys) signed it for ``audience``, by ``issuer`` (one or a list), unexpired; else None, said in the log."""
    import jwt

    scheme, _, token = str(headers.get("Authorization") or "").partition(" ")
    try:
        if scheme != "Bearer":
            raise jwt.InvalidTokenError("no bearer token")
        return jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["RS256"], audience=audience,
                          issuer=issuer, leeway=300)
    except (jwt.PyJWTError, OSError) as exc:
        log.warning("%s: a POST without a token signed for it was refused (%s)", name, exc)
        return None


class Listened:
    """What such a platform keeps: the inbox its server's handler fills and :meth:`receive` empties, the server, and
    the ids of the last messages (a service that was not answered in time delivers one again)."""

    offset = 0  # the service sends again what was not taken: nothing to keep

    def __init__(self) -> None:
        self.inbox: queue.Queue = queue.Queue()
        self.seen: OrderedDict = OrderedDict()
        self.server: Any = None

    def first(self, message: str) -> bool:
        """Whether the message ``message`` comes for the first time (of the last thousand)."""
        if message in self.seen:
            return False
        self.seen[message] = True
        while len(self.seen) > 1000:
            self.seen.popitem(last=False)
        return True

    def receive(self, wait: Optional[float] = None) -> list:
        try:
            found = [self.inbox.get(timeout=5 if wait is None else wait)]
        except queue.Empty:
            return []
        while not self.inbox.empty():
            found.append(self.inbox.get_nowait())
        return found

    def typing(self, chat: str) -> None:
        pass  # none is shown

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
