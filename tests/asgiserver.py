"""An ASGI application (Starlette's) served on a loopback port of its own by uvicorn, in a thread, for the tests'
stand-ins of services that speak websockets (Discord's gateway, Slack's Socket Mode): ``with Served(app):``."""

from __future__ import annotations

import socket
import threading
import time


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
