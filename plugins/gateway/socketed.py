"""What the platforms that keep a websocket open share (Discord's gateway, Slack's Socket Mode): a thread of its own
holds the connection (:meth:`Socketed._session`, the platform's) and puts what it receives in an inbox that
:meth:`Socketed.receive` empties; a connection that ends is opened again, waiting longer each time, and said once
through the inbox; one that cannot be had at the start, or never will be (a refused token), ends it."""

from __future__ import annotations

import json
import queue
import random
import threading
from typing import Any, Iterator, Optional

from plugins.gateway.hookspecs import PlatformError

POLL_SECONDS = 5  # receive() waits this long for a message


class Socketed:
    name = "socketed"

    def __init__(self) -> None:
        self.threads: dict = {}  # thread -> its channel, of those the bot started or answers in: read whole
        self.inbox: queue.Queue = queue.Queue()  # Incoming, or a PlatformError the connection met
        self.ready, self.settled, self.stopping = threading.Event(), threading.Event(), threading.Event()
        self.failure: Optional[PlatformError] = None
        self.ws: Any = None
        self.client: Any = None

    @property
    def offset(self) -> list:
        """What the gateway keeps for it: nothing is replayed to a bot, but the threads it answers in are read without
        a mention after a restart too (the last 1000)."""
        return [[thread, channel] for thread, channel in list(self.threads.items())[-1000:]]

    @offset.setter
    def offset(self, kept: Any) -> None:
        if isinstance(kept, list):  # (a gateway before kept 0)
            self.threads.update((str(pair[0]), str(pair[1])) for pair in kept if isinstance(pair, list) and
                                len(pair) == 2)

    def _session(self) -> None:
        """One connection, until it ends (return: open another) or fails (:class:`PlatformError`); it sets ``ready``
        and ``settled`` once the service says it is."""
        raise NotImplementedError

    def frames(self, ws: Any, closed: str) -> Iterator[dict]:
        """A websocket's JSON frames (websocket-client's) until the gateway stops, pinging it when it is quiet for a
        minute (a dead connection is found out by the next read); :class:`PlatformError` ``closed`` when the other
        side closes it."""
        import websocket

        ws.settimeout(60)
        while not self.stopping.is_set():
            try:
                frame = ws.recv()
            except websocket.WebSocketTimeoutException:
                ws.ping()
                continue
            if not frame:
                raise PlatformError(closed)
            yield json.loads(frame)

    def connect(self, what: str) -> None:
        """Start the connection's thread and wait until it is ready; :class:`PlatformError` when it is not."""
        threading.Thread(target=self._run, name=f"gateway-{self.name}-socket", daemon=True).start()
        self.settled.wait(30)
        if not self.ready.is_set():
            self.close()
            raise self.failure or PlatformError(f"{self.name}: {what} did not say it was ready in 30 s")

    def _run(self) -> None:
        failures = 0
        while not self.stopping.is_set():
            try:
                self._session()
                failures = 0
            except PlatformError as exc:
                if exc.lasting or not self.ready.is_set():  # never ready, or never will be: start() or the gateway
                    self.failure = exc                        # says it and stops
                    self.inbox.put(exc)
                    self.settled.set()
                    return
                self.inbox.put(exc)  # said by the gateway, which goes on receiving
                failures += 1
            if self.stopping.wait(min(30, 2 ** failures) * random.uniform(0.5, 1)):
                return

    def receive(self, wait: "float | None" = None) -> list:
        try:
            first = self.inbox.get(timeout=POLL_SECONDS if wait is None else wait)
        except queue.Empty:
            return []
        found = [first]
        while not self.inbox.empty():
            found.append(self.inbox.get_nowait())
        failures = [f for f in found if isinstance(f, PlatformError)]
        messages = [m for m in found if not isinstance(m, PlatformError)]
        if messages:  # the messages first; a failure after them is said at the next call
            for failure in failures:
                self.inbox.put(failure)
            return messages
        raise failures[0]

    def close(self) -> None:
        self.stopping.set()
        if self.ws is not None:
            try:
                self.ws.close()
            except Exception:  # noqa: BLE001 - closing what may be closed
                pass
        if self.client is not None:
            self.client.close()
