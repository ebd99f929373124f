"""``Idempotency-Key`` (hermes-agent's API server takes it on its non-streamed chat completions and responses): a
client that retries a request after a timeout or a dropped connection gets the first request's answer, and the agent
runs once, its tools' side effects too. A retry while the first still runs waits for it; the first runs on when its
client goes away, for the retry to collect. Kept in memory for :data:`KEPT_SECONDS` (the last :data:`MOST`), only
answers that succeeded: a failure is the client's to retry for real. A key sent again with another body is refused
(422): it names another request."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from typing import Awaitable, Callable

from starlette.responses import Response

KEPT_SECONDS = 300.0  # hermes-agent's
MOST = 1000
HEADER = "idempotency-key"
REPLAYED = "Idempotent-Replayed"


class Once:
    def __init__(self):
        self.done: OrderedDict = OrderedDict()  # key -> (fingerprint, when, status, body, headers)
        self.running: dict = {}  # key -> (fingerprint, the task making the answer)

    async def answer(self, key: str, body: dict, make: Callable[[], Awaitable[Response]]) -> Response:
        from plugins.serve.app import error

        fingerprint = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        self._forget_old()
        if key in self.done:
            was, _, status, content, headers = self.done[key]
            if was == fingerprint:
                return Response(content, status_code=status, headers={**headers, REPLAYED: "true"})
        elif key in self.running:
            was, task = self.running[key]
        else:
            was, task = fingerprint, asyncio.ensure_future(make())
            self.running[key] = (fingerprint, task)
            task.add_done_callback(lambda done: self._settle(key, fingerprint, done))
        if was != fingerprint:
            return error(422, "this Idempotency-Key was sent with another request body: a key names one request",
                         code="idempotency_key_reused")
        first = await asyncio.shield(task)  # a waiter that goes away leaves the turn running for the next
        return Response(first.body, status_code=first.status_code, headers=dict(first.headers))

    def _settle(self, key: str, fingerprint: str, task: asyncio.Future) -> None:
        self.running.pop(key, None)
        if task.cancelled() or task.exception() is not None or not 200 <= task.result().status_code < 300:
            return
        answer = task.result()
        self.done[key] = (fingerprint, time.monotonic(), answer.status_code, answer.body, dict(answer.headers))
        while len(self.done) > MOST:
            self.done.popitem(last=False)

    def _forget_old(self) -> None:
        now = time.monotonic()
        while self.done and now - next(iter(self.done.values()))[1] > KEPT_SECONDS:
            self.done.popitem(last=False)
