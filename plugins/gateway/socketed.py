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
REPLAYED = 50  # conversations whose messages sent while the gateway was stopped are fetched (where a platform can)


class Socketed:
    name = "socketed"

    def __init__(self) -> None:
        self.threads: dict = {}  # thread -> its channel, of those the bot started or answers in: read whole
        self.read: dict = {}  # channel -> [where its last message read was, what else reading it again takes]
        self.inbox: queue.Queue = queue.Queue()  # Incoming, or a PlatformError the connection met
        self.ready, self.settled, self.stopping = threading.Event(), threading.Event(), threading.Event()
        self.failure: Optional[PlatformError] = None
        self.ws: Any = None
        self.client: Any = None

    @property
    def offset(self) -> dict:
        """What the gateway keeps for it: the threads it answers in (read without a mention after a restart too; the
        last 1000), and where each of the last conversations was read to (a platform that fetches what was sent while
        the gateway was stopped goes on from there)."""
        return {"threads": [[thread, channel] for thread, channel in list(self.threads.items())[-1000:]],
                "read": dict(list(self.read.items())[-REPLAYED:])}

    @offset.setter
    def offset(self, kept: Any) -> None:
        kept = kept if isinstance(kept, dict) else {"threads": kept}  # the threads alone (or 0): a gateway before
        threads = kept.get("threads") if isinstance(kept.get("threads"), list) else []
        self.threads.update((str(p[0]), str(p[1])) for p in threads if isinstance(p, list) and len(p) == 2)
        read = kept.get("read") if isinstance(kept.get("read"), dict) else {}
        self.read.update({str(c): [str(v[0]), str(v[1])] for c, v in read.items() if isinstance(v, list) and
                          len(v) == 2})

    def mark_read(self, channel: str, where: str, more: str = "") -> None:
        """``channel`` read to ``where`` (``more``: what reading it again takes), the most recent conversation."""
        self.read.pop(channel, None)
        self.read[channel] = [where, more]

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
