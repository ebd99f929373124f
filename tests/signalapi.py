"""A loopback signal-cli daemon in HTTP mode for the gateway's tests: ``/api/v1/check``, the events stream
(server-sent events) and the JSON-RPC calls the gateway makes (send, sendTyping, sendReaction, getAttachment,
listContacts), on Starlette and uvicorn, each call recorded.

    with SignalAPI() as api:                # api.url -> SIGNAL_HTTP_URL; api.account -> SIGNAL_ACCOUNT
        api.say("hello", user="+15550042")  # -> the message's timestamp
        api.wait_sent(1)                    # -> [(chat, text)]
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time

from tests.asgiserver import Served, wait_sent

ALICE = "+15550042"


class SignalAPI(Served):
    def __init__(self):
        self.account = "+15550001"
        self.events, self.calls, self.messages, self.files = [], [], [], {}
        self.reactions: dict = {}  # (author, timestamp) -> the bot's reaction emoji
        self.changed, self.clock = threading.Condition(), int(time.time() * 1000)
        self.streams = 0  # events streams opened: a test says its messages once the gateway listens
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do
    def say(self, text: str = "", user: str = ALICE, group: str = "", name: str = "Alice", **data) -> int:
        with self.changed:
            self.clock += 1
            message = {"timestamp": self.clock, "message": text or None, **data,
                       **({"groupInfo": {"groupId": group, "type": "DELIVER"}} if group else {})}
            self.events.append({"envelope": {"source": user, "sourceNumber": user, "sourceUuid": f"uuid-{user}",
                                             "sourceName": name, "timestamp": self.clock, "dataMessage": message},
                                "account": self.account})
            self.changed.notify_all()
            return self.clock

    def picture(self, data: bytes, caption: str = "", user: str = ALICE) -> int:
        self.files[f"att{len(self.files)}"] = data
        return self.say(caption, user=user, attachments=[{"contentType": "image/png", "id": f"att{len(self.files) - 1}",
                                                          "filename": "dot.png", "size": len(data)}])

    def wait_listening(self, streams: int = 1, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while self.streams < streams:
                assert self.changed.wait(max(deadline - time.monotonic(), 0.01)) or time.monotonic() < deadline, \
                    "the gateway did not open the events stream"

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(m["chat"], m["message"]) for m in self.messages]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the daemon's side
    def _call(self, method: str, params: dict):
        """The result of a JSON-RPC call, or an error ``(code, message)``."""
        if params.get("account") != self.account:
            return -32602, f"Specified account does not exist: {params.get('account')}"
        chat = params.get("groupId") and f"group:{params['groupId']}" or (params.get("recipient") or [""])[0]
        with self.changed:
            if method == "listContacts":
                return []
            if method == "send":
                self.clock += 1
                self.messages.append({"chat": chat, "message": params.get("message"), "styles": params.get(
                    "textStyle") or [], "attachments": params.get("attachments") or []})
                self.changed.notify_all()
                return {"timestamp": self.clock, "results": [{"type": "SUCCESS"}]}
            if method == "sendReaction":
                key = (params["targetAuthor"], params["targetTimestamp"])
                if params.get("remove"):
                    self.reactions.pop(key, None)
                else:
                    self.reactions[key] = params["emoji"]
                self.changed.notify_all()
                return {"timestamp": self.clock}
            if method == "sendTyping":
                return {}
            if method == "getAttachment":
                data = self.files.get(params.get("id"))
                return (-1, "Attachment not found") if data is None else {"data": base64.b64encode(data).decode()}
        return -32601, f"Method not implemented: {method}"

    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        async def check(request: Request):
            return Response(status_code=200)

        async def rpc(request: Request):
            body = await request.json()
            with self.changed:
                self.calls.append((body["method"], body.get("params") or {}))
            result = self._call(body["method"], body.get("params") or {})
            if isinstance(result, tuple):
                return JSONResponse({"jsonrpc": "2.0", "error": {"code": result[0], "message": result[1]},
                                     "id": body.get("id")})
            return JSONResponse({"jsonrpc": "2.0", "result": result, "id": body.get("id")})

        async def events(request: Request):
            if request.query_params.get("account") != self.account:
                return JSONResponse({"error": "unknown account"}, status_code=400)

            async def stream():
                at = len(self.events)  # what was said before the stream opened is not sent (signal-cli keeps none)
                with self.changed:
                    self.streams += 1
                    self.changed.notify_all()
                yield ":\n\n"
                while True:
                    while at < len(self.events):
                        yield f"event:receive\ndata:{json.dumps(self.events[at])}\n\n"
                        at += 1
                    await asyncio.sleep(0.02)

            return StreamingResponse(stream(), media_type="text/event-stream")

        return Starlette(routes=[Route("/api/v1/check", check), Route("/api/v1/rpc", rpc, methods=["POST"]),
                                 Route("/api/v1/events", events)])
