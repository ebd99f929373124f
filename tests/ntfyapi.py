"""A loopback ntfy server for the gateway's tests: a topic's message stream (``/TOPIC/json``, with ``since``),
publishing (POST or PUT ``/TOPIC``, with ntfy's Tags, Title, Markdown and Filename headers), ``/TOPIC/auth``, and
attachments, on Starlette and uvicorn; an access token (``token``) when set is asked for.

    with NtfyAPI() as api:                  # api.url -> NTFY_SERVER_URL
        api.publish("hermes-in", "hello")   # -> the message's id
        api.wait_sent(1)                    # -> [(topic, text)] of the bot's (tagged hermes-agent)
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

from tests.asgiserver import Served, wait_sent


class NtfyAPI(Served):
    def __init__(self, token: str = ""):
        self.token = token
        self.messages: list = []  # every message published, ntfy's JSON plus "headers" (the bot's request's)
        self.files: dict = {}
        self.changed = threading.Condition()
        self.streams = 0  # streams opened: a test publishes once the gateway listens
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do
    def publish(self, topic: str, text: str, title: str = "", tags: tuple = (), file: tuple = (),
                headers: dict = None) -> str:
        """A message to ``topic``; ``file``: (name, type, data) attached."""
        with self.changed:
            message = {"id": f"m{len(self.messages) + 1:04d}", "time": int(time.time()), "event": "message",
                       "topic": topic, "message": text, **({"title": title} if title else {}),
                       **({"tags": list(tags)} if tags else {}), "headers": headers or {}}
            if file:
                self.files[message["id"]] = file[2]
                message["attachment"] = {"name": file[0], "type": file[1], "size": len(file[2]),
                                         "url": f"{self.url}/file/{message['id']}"}
            self.messages.append(message)
            self.changed.notify_all()
            return message["id"]

    def wait_listening(self, streams: int = 1, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while self.streams < streams:
                assert self.changed.wait(max(deadline - time.monotonic(), 0.01)) or time.monotonic() < deadline, \
                    "the gateway did not open the message stream"

    # -- what the test reads
    def sent(self, raw: bool = False) -> list:
        """``(topic, text)`` of each of the bot's messages (tagged hermes-agent); ``raw``: the messages."""
        with self.changed:
            mine = [m for m in self.messages if "hermes-agent" in m.get("tags", [])]
            return mine if raw else [(m["topic"], m["message"]) for m in mine]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the server's side
    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        def refused(request: Request):
            if self.token and request.headers.get("authorization") != f"Bearer {self.token}":
                return JSONResponse({"code": 40101, "http": 401, "error": "unauthorized"}, status_code=401)
            return None

        async def auth(request: Request):
            return refused(request) or JSONResponse({"success": True})

        async def topic(request: Request):
            if (no := refused(request)) is not None:
                return no
            name, headers = request.path_params["topic"], {k.lower(): v for k, v in request.headers.items()}
            body = await request.body()
            filename = headers.get("filename") or headers.get("x-filename")
            tags = [t.strip() for t in (headers.get("tags") or headers.get("x-tags") or "").split(",") if t.strip()]
            id = self.publish(name, "" if filename else body.decode(), title=headers.get("title", ""), tags=tags,
                              file=(filename, "application/octet-stream", body) if filename else (), headers=headers)
            return JSONResponse({k: v for k, v in self.messages[-1].items() if k != "headers"} | {"id": id})

        async def stream(request: Request):
            if (no := refused(request)) is not None:
                return no
            name, since = request.path_params["topic"], request.query_params.get("since")

            async def lines():
                with self.changed:
                    ids = [m["id"] for m in self.messages]
                    at = ids.index(since) + 1 if since in ids else len(self.messages)  # since: what came after it
                    self.streams += 1
                    self.changed.notify_all()
                yield json.dumps({"id": "open", "event": "open", "topic": name}) + "\n"
                while True:
                    while at < len(self.messages):
                        message = self.messages[at]
                        at += 1
                        if message["topic"] == name:
                            yield json.dumps({k: v for k, v in message.items() if k != "headers"}) + "\n"
                    await asyncio.sleep(0.02)

            return StreamingResponse(lines(), media_type="application/x-ndjson")

        async def file(request: Request):
            return Response(self.files.get(request.path_params["id"], b""), media_type="application/octet-stream")

        return Starlette(routes=[Route("/file/{id}", file), Route("/{topic}/auth", auth),
                                 Route("/{topic}/json", stream), Route("/{topic}", topic, methods=["POST", "PUT"])])
