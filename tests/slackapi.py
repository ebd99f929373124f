"""A loopback Slack for the gateway's tests: Socket Mode (apps.connections.open, then a websocket that says hello,
sends events and interactions in envelopes and records their acknowledgements) and the Web API calls the gateway
makes (auth.test, chat.postMessage, chat.update), on Starlette and uvicorn, each call recorded.

    with SlackAPI() as api:                     # api.api_url -> slack.api_url; api.bot_token, api.app_token ->
        api.say("hello", user="U42")            # SLACK_BOT_TOKEN, SLACK_APP_TOKEN
        api.wait_sent(1)                        # -> [(channel, text)]
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from urllib.parse import parse_qsl

from tests.asgiserver import Served, wait_sent


class SlackAPI(Served):
    def __init__(self):
        self.bot_token, self.app_token = "xoxb-test", "xapp-test"
        self.envelopes, self.acks, self.calls, self.messages = [], [], [], []
        self.history: list = []  # the users' messages
        self.connected = False  # a Socket Mode connection reads the envelopes: none is kept while it is closed
        self.uploads: dict = {}  # file id -> {name, length, data, channel, thread} of the bot's uploads
        self.changed, self.next = threading.Condition(), 1000
        self.reactions: dict = {}  # message ts -> the names of the bot's reactions on it
        super().__init__()
        port = self.port
        self.api_url, self.socket_url = f"http://127.0.0.1:{port}/api", f"ws://127.0.0.1:{port}/socket"

    def _envelope(self, kind: str, payload: dict) -> None:
        with self.changed:
            if not self.connected and self.acks:  # closed, after a first connection: Slack keeps nothing
                return
            self.next += 1
            self.envelopes.append({"envelope_id": f"e{self.next}", "type": kind, "payload": payload})
            self.changed.notify_all()

    # -- what a user does
    def say(self, text: str, user: str = "U42", channel: str = "", mention: bool = False, thread: str = "") -> str:
        """A message from ``user`` (default: their direct-message channel, ``D-USER``; in ``thread``: a reply under
        the message of that ts); a mention comes as the message and an app_mention, as Slack sends it to an app
        subscribed to both. Its ts."""
        ts = f"{time.time():.6f}"
        channel = channel or f"D-{user}"
        event = {"type": "message", "channel": channel, "user": user, "text": text, "ts": ts,
                 "channel_type": "im" if channel.startswith("D") else "channel", **({"thread_ts": thread}
                                                                                    if thread else {})}
        self._envelope("events_api", {"event": event})
        with self.changed:
            self.history.append(event)
        if mention:
            self._envelope("events_api", {"event": dict(event, type="app_mention")})
        return ts

    def press(self, value: str, user: str = "U42") -> None:
        """The user presses the button of ``value`` under the last message showing it."""
        with self.changed:
            shown = next(m for m in reversed(self.messages) if value in m["buttons"])
        self._envelope("interactive", {"type": "block_actions", "user": {"id": user, "username": "alice"},
                                       "channel": {"id": shown["channel"]},
                                       "message": {"ts": shown["ts"], "text": shown["text"],
                                                   **({"thread_ts": shown["thread_ts"]} if shown["thread_ts"] else {})},
                                       "actions": [{"action_id": "hermes-0", "value": value}]})

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(m["channel"], m["text"]) for m in self.messages]

    def buttons(self) -> list:
        with self.changed:
            return [m["buttons"] for m in self.messages]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the server's side
    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route, WebSocketRoute

        def buttons(body: dict) -> list:
            return [e["value"] for block in body.get("blocks") or [] if block.get("type") == "actions"
                    for e in block["elements"]]

        async def method(request: Request):
            name = request.path_params["method"]
            form = request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded")
            body = dict(parse_qsl((await request.body()).decode())) if form else await request.json()
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            with self.changed:
                self.calls.append((name, body))
                self.changed.notify_all()
            wanted = self.app_token if name == "apps.connections.open" else self.bot_token
            if token != wanted:
                return JSONResponse({"ok": False, "error": "invalid_auth"})
            if name == "auth.test":
                return JSONResponse({"ok": True, "user": "hermes_test_bot", "user_id": "U999", "team": "T1"})
            if name == "apps.connections.open":
                return JSONResponse({"ok": True, "url": self.socket_url})
            if name == "files.getUploadURLExternal":
                with self.changed:
                    self.next += 1
                    self.uploads[f"F{self.next}"] = {"name": body["filename"], "length": int(body["length"])}
                return JSONResponse({"ok": True, "upload_url": f"http://127.0.0.1:{self.port}/upload/F{self.next}",
                                     "file_id": f"F{self.next}"})
            if name == "files.completeUploadExternal":
                with self.changed:
                    for each in body["files"]:
                        self.uploads[each["id"]].update(channel=body["channel_id"], thread=body.get("thread_ts"))
                    self.changed.notify_all()
                return JSONResponse({"ok": True, "files": body["files"]})
            if name == "conversations.history":  # a channel's messages after oldest, not a thread's replies
                if not form:
                    return JSONResponse({"ok": False, "error": "invalid_arguments"})
                with self.changed:
                    found = [m for m in self.history if m["channel"] == body["channel"] and float(m["ts"]) >
                             float(body.get("oldest") or 0) and m.get("thread_ts", m["ts"]) == m["ts"]]
                return JSONResponse({"ok": True, "messages": sorted(found, key=lambda m: -float(m["ts"]))})
            if name == "conversations.replies":
                if not form:  # as Slack: the methods that read take no JSON
                    return JSONResponse({"ok": False, "error": "invalid_arguments"})
                with self.changed:
                    found = [m for m in self.history if body["ts"] in (m["ts"], m.get("thread_ts"))] + [
                        {"user": "U999", "bot_id": "B1", "text": m["text"], "ts": m["ts"]} for m in self.messages
                        if m["thread_ts"] == body["ts"]]
                return JSONResponse({"ok": True, "messages": sorted(found, key=lambda m: float(m["ts"]))})
            with self.changed:
                if name == "chat.postMessage":
                    self.next += 1
                    message = {"channel": body["channel"], "ts": f"{self.next}.000100", "text": body["text"],
                               "buttons": buttons(body), "thread_ts": body.get("thread_ts")}
                    self.messages.append(message)
                elif name in ("reactions.add", "reactions.remove"):
                    mine = self.reactions.setdefault(body["timestamp"], [])
                    if (body["name"] in mine) == (name == "reactions.add"):
                        return JSONResponse({"ok": False, "error": "already_reacted" if name == "reactions.add"
                                             else "no_reaction"})
                    mine.append(body["name"]) if name == "reactions.add" else mine.remove(body["name"])
                    self.changed.notify_all()
                    return JSONResponse({"ok": True})
                elif name == "chat.update":
                    message = next((m for m in self.messages if m["ts"] == body.get("ts")), None)
                    if message is None:
                        return JSONResponse({"ok": False, "error": "message_not_found"})
                    message.update(text=body["text"], buttons=buttons(body))
                else:
                    return JSONResponse({"ok": False, "error": "unknown_method"})
                self.changed.notify_all()
            return JSONResponse({"ok": True, "channel": message["channel"], "ts": message["ts"]})

        async def socket_mode(websocket):
            await websocket.accept()
            with self.changed:
                self.connected = True
            await websocket.send_text(json.dumps({"type": "hello", "num_connections": 1}))
            while True:
                try:
                    ack = json.loads(await asyncio.wait_for(websocket.receive_text(), 0.05))
                    with self.changed:
                        self.acks.append(ack.get("envelope_id"))
                except asyncio.TimeoutError:
                    pass
                except Exception:  # noqa: BLE001 - the client went away
                    with self.changed:
                        self.connected, self.envelopes = False, []  # Slack's few retries are not played here
                    return
                with self.changed:
                    waiting, self.envelopes = self.envelopes, []
                for envelope in waiting:
                    await websocket.send_text(json.dumps(envelope))

        async def upload(request: Request):  # the upload address: the bytes, multipart as Slack takes them
            form = await request.form()
            with self.changed:
                self.uploads[request.path_params["file"]]["data"] = await form["file"].read()
            return Response("OK - 5")

        return Starlette(routes=[Route("/api/{method}", method, methods=["POST"]),
                                 Route("/upload/{file}", upload, methods=["POST"]),
                                 WebSocketRoute("/socket", socket_mode)])
