"""An ASGI application (Starlette's) served on a loopback port of its own by uvicorn, in a thread, for the tests'
stand-ins of services that speak websockets (Discord's gateway, Slack's Socket Mode): ``with Served(app):``; and
what every stand-in of a messaging service does for its tests, :func:`wait_sent`."""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Callable


class Served:
    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]

    def _app(self):
        raise NotImplementedError

    def __enter__(self):
        import uvicorn

        self.server = uvicorn.Server(uvicorn.Config(self._app(), log_level="error", ws="wsproto", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def post(url: str, body: bytes, headers: dict) -> tuple:
    """POST ``body`` to ``url`` as a service posts an event to a gateway: ``(the status, the answer's body)``, an
    HTTP error's too."""
    request = urllib.request.Request(url, body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def wait_sent(changed: threading.Condition, sent: Callable[[], list], count: int, timeout: float = 30) -> list:
    """``sent()`` once it holds ``count`` messages and none is a draft still being written (text ending in the
    cursor); AssertionError after ``timeout`` seconds. ``changed`` is notified whenever something is sent."""
    deadline = time.monotonic() + timeout
    with changed:
        while len(sent()) < count or any(isinstance(m, tuple) and str(m[-1]).endswith(" ▉") for m in sent()):
            if not changed.wait(max(deadline - time.monotonic(), 0)) and time.monotonic() >= deadline:
                raise AssertionError(f"{len(sent())} message(s) sent, not {count}: {sent()}")
        return sent()
