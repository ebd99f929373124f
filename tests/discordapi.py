"""A loopback Discord for the gateway's tests: its gateway (a websocket: HELLO, IDENTIFY checked, READY, heartbeats
acknowledged, MESSAGE_CREATE dispatched, a wrong token closed with 4004) and the REST calls the gateway makes
(GET /users/@me, messages posted, edited and uploaded, typing), on Starlette and uvicorn as hermes serve runs, each
call recorded.

    with DiscordAPI() as api:                   # api.api_url -> discord.api_url, api.gateway_url ->
        api.say("hello", user=42)               # discord.gateway_url, api.token -> DISCORD_BOT_TOKEN
        api.wait_sent(1)                        # -> [(channel_id, content)]
"""

from __future__ import annotations

import asyncio
import json
import threading

from tests.asgiserver import Served, wait_sent

BOT = {"id": "999", "username": "hermes_test_bot", "bot": True}


class DiscordAPI(Served):
    def __init__(self, token: str = "discord-test-token"):
        self.token, self.events, self.calls, self.messages = token, [], [], []
        self.files: dict = {}  # attachment file name -> bytes, served at /attachments/NAME
        self.identified, self.changed, self.next_id = [], threading.Condition(), 1000
        self.refuse_gateway = False  # the REST API takes the token, the gateway closes with 4004
        self.dropping = False  # the next loop of the gateway's connection closes it (1001: Discord restarting)
        self.pressed: dict = {}  # interaction id -> the message whose button was pressed
        self.reactions: dict = {}  # message id -> the bot's reaction emoji on it
        self.threads: dict = {}  # thread id -> the channel it is in
        self.history: list = []  # the users' messages, as sent to the bot
        self.connected = self.opened = 0  # gateway connections open, and ever opened: a message said while none is
        # open, after the first was, is not sent (Discord replays nothing; the platform fetches it)
        super().__init__()
        port = self.port
        self.api_url, self.gateway_url = f"http://127.0.0.1:{port}/api/v10", f"ws://127.0.0.1:{port}/gateway"

    # -- what a user does
    def say(self, content: str = "", user: int = 42, channel: str = "", guild: str = "", mention: bool = False,
            username: str = "alice", attachments: list = ()) -> str:
        """A message from ``user`` (default: in their direct-message channel, ``dm-USER``); its id."""
        with self.changed:
            self.next_id += 1
            self.history.append({"id": str(self.next_id), "channel_id": channel or f"dm-{user}",
                                 **({"guild_id": guild} if guild else {}), "content": content,
                                 "author": {"id": str(user), "username": username, "bot": False},
                                 "mentions": [BOT] if mention else [], "attachments": list(attachments)})
            if self.connected or not self.identified:  # before the first connection: kept for it (a test's start)
                self.events.append(("MESSAGE_CREATE", self.history[-1]))
            self.changed.notify_all()
            return str(self.next_id)

    def start_thread(self, channel: str) -> str:
        """A thread a user starts in ``channel``; its id."""
        with self.changed:
            self.next_id += 1
            self.threads[str(self.next_id)] = channel
            return str(self.next_id)

    def press(self, custom_id: str, user: int = 42, username: str = "alice") -> None:
        """The user presses the button ``custom_id`` under the last message showing it."""
        with self.changed:
            shown = next(m for m in reversed(self.messages) if custom_id in m.get("buttons", []))
            self.next_id += 1
            self.pressed[str(self.next_id)] = shown
            self.events.append(("INTERACTION_CREATE", {
                "id": str(self.next_id), "token": "tok", "type": 3, "channel_id": shown["channel_id"],
                "user": {"id": str(user), "username": username}, "message": {"id": shown["id"]},
                "data": {"custom_id": custom_id, "component_type": 2}}))
            self.changed.notify_all()

    def buttons(self) -> list:
        with self.changed:
            return [m.get("buttons", []) for m in self.messages]

    def drop(self) -> None:
        """Discord closes the gateway connection (it does, to move a bot to another server): the bot comes back."""
        self.dropping = True

    # -- what the test reads
    def sent(self, channel=None) -> list:
        with self.changed:
            return [(m["channel_id"], m["content"]) for m in self.messages
                    if channel is None or m["channel_id"] == channel]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the server's side
    def _record(self, method: str, path: str, body) -> None:
        with self.changed:
            self.calls.append((method, path, body))
            self.changed.notify_all()

    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route, WebSocketRoute

        def authorized(request: Request) -> bool:
            return request.headers.get("authorization") == f"Bot {self.token}"

        async def me(request: Request):
            self._record("GET", "/users/@me", None)
            if not authorized(request):
                return JSONResponse({"message": "401: Unauthorized", "code": 0}, status_code=401)
            return JSONResponse(BOT)

        async def messages(request: Request):
            channel = request.path_params["channel"]
            if "multipart" in request.headers.get("content-type", ""):
                from tests.botapi import form

                fields = form(request.headers["content-type"], await request.body())
                files = [(f["filename"], f["data"]) for f in fields.values() if isinstance(f, dict)]
                self._record("POST", f"/channels/{channel}/messages", {"files": files})
                return JSONResponse({"id": "f1", "channel_id": channel})
            body = await request.json()
            self._record("POST", f"/channels/{channel}/messages", body)
            if not authorized(request):
                return JSONResponse({"message": "401: Unauthorized", "code": 0}, status_code=401)
            if len(body.get("content") or "") > 2000:
                return JSONResponse({"message": "Invalid Form Body", "code": 50035}, status_code=400)
            with self.changed:
                self.next_id += 1
                self.messages.append({"id": str(self.next_id), "channel_id": channel, "content": body["content"],
                                      "buttons": [b["custom_id"] for row in body.get("components") or []
                                                  for b in row["components"]]})
                self.changed.notify_all()
            return JSONResponse({"id": str(self.next_id), "channel_id": channel, "content": body["content"]})

        async def thread(request: Request):  # a thread started from a message: a channel of its own
            body = await request.json()
            self._record("POST", request.url.path, body)
            if request.path_params["channel"] in self.threads:
                return JSONResponse({"message": "Cannot execute action on this channel type", "code": 50024},
                                    status_code=400)
            self.threads[request.path_params["message"]] = request.path_params["channel"]
            return JSONResponse({"id": request.path_params["message"], "type": 11, "name": body["name"],
                                 "parent_id": request.path_params["channel"]}, status_code=201)  # its id: the message's

        async def recent(request: Request):  # a channel's messages before one (or after one), the newest first
            channel, after = request.path_params["channel"], int(request.query_params.get("after") or 0)
            before = int(request.query_params.get("before") or 1 << 62)
            self._record("GET", request.url.path, dict(request.query_params))
            with self.changed:
                found = [m for m in self.history if m["channel_id"] == channel] + [
                    {"id": m["id"], "channel_id": channel, "content": m["content"], "author": BOT}
                    for m in self.messages if m["channel_id"] == channel]
            found = sorted((m for m in found if after < int(m["id"]) < before), key=lambda m: -int(m["id"]))
            return JSONResponse(found[:int(request.query_params.get("limit", 50))])

        async def channel(request: Request):
            found = request.path_params["channel"]
            self._record("GET", request.url.path, None)
            return JSONResponse({"id": found, "type": 11, "parent_id": self.threads[found]} if found in self.threads
                                else {"id": found, "type": 1 if found.startswith("dm-") else 0})

        async def edit(request: Request):
            body = await request.json()
            self._record("PATCH", request.url.path, body)
            with self.changed:
                found = next((m for m in self.messages if m["id"] == request.path_params["message"]), None)
                if found is None:
                    return JSONResponse({"message": "Unknown Message", "code": 10008}, status_code=404)
                found["content"] = body["content"]
                self.changed.notify_all()
            return JSONResponse(found)

        async def callback(request: Request):
            body = await request.json()
            self._record("POST", request.url.path, body)
            with self.changed:
                pressed = self.pressed.get(request.path_params["interaction"])
                if pressed is not None and body.get("type") == 7:
                    pressed["buttons"] = [b["custom_id"] for row in body["data"].get("components") or []
                                          for b in row["components"]]
            return Response(status_code=204)

        async def typing(request: Request):
            self._record("POST", request.url.path, None)
            return Response(status_code=204)

        async def reaction(request: Request):  # the bot's own, added (PUT) or taken away (DELETE)
            self._record(request.method, request.url.path, None)
            with self.changed:
                mine = self.reactions.setdefault(request.path_params["message"], [])
                emoji = request.path_params["emoji"]  # Starlette decodes the path
                if request.method == "PUT" and emoji not in mine:
                    mine.append(emoji)
                elif request.method == "DELETE" and emoji in mine:
                    mine.remove(emoji)
                self.changed.notify_all()
            return Response(status_code=204)

        async def attachment(request: Request):
            data = self.files.get(request.path_params["name"])
            return Response(data, media_type="application/octet-stream") if data is not None else \
                Response(status_code=404)

        async def gateway(websocket):
            await websocket.accept()
            await websocket.send_text(json.dumps({"op": 10, "d": {"heartbeat_interval": 1000}}))
            identify = json.loads(await websocket.receive_text())
            self.identified.append(identify)
            if identify.get("op") != 2 or (identify.get("d") or {}).get("token") != self.token or self.refuse_gateway:
                await websocket.close(code=4004, reason="Authentication failed.")
                return
            seq = 1
            await websocket.send_text(json.dumps({"op": 0, "s": seq, "t": "READY", "d": {
                "v": 10, "user": BOT, "session_id": "s1", "resume_gateway_url": self.gateway_url, "guilds": []}}))
            with self.changed:
                self.connected, self.opened = self.connected + 1, self.opened + 1
                self.changed.notify_all()
            try:
                await relay(websocket, seq)
            finally:
                with self.changed:
                    self.connected -= 1

        async def relay(websocket, seq):
            while True:
                try:
                    frame = await asyncio.wait_for(websocket.receive_text(), 0.05)
                    if json.loads(frame).get("op") == 1:
                        await websocket.send_text(json.dumps({"op": 11}))
                except asyncio.TimeoutError:
                    pass
                except Exception:  # noqa: BLE001 - the client went away
                    return
                if self.dropping:
                    self.dropping = False
                    await websocket.close(code=1001)
                    return
                with self.changed:
                    waiting, self.events = self.events, []
                for kind, event in waiting:
                    seq += 1
                    await websocket.send_text(json.dumps({"op": 0, "s": seq, "t": kind, "d": event}))

        return Starlette(routes=[
            Route("/api/v10/users/@me", me), Route("/api/v10/channels/{channel}/messages", messages, methods=["POST"]),
            Route("/api/v10/channels/{channel}", channel),
            Route("/api/v10/channels/{channel}/messages", recent, methods=["GET"]),
            Route("/api/v10/channels/{channel}/messages/{message}", edit, methods=["PATCH"]),
            Route("/api/v10/channels/{channel}/messages/{message}/threads", thread, methods=["POST"]),
            Route("/api/v10/channels/{channel}/typing", typing, methods=["POST"]),
            Route("/api/v10/channels/{channel}/messages/{message}/reactions/{emoji}/@me", reaction,
                  methods=["PUT", "DELETE"]),
            Route("/api/v10/interactions/{interaction}/{token}/callback", callback, methods=["POST"]),
            Route("/attachments/{name}", attachment), WebSocketRoute("/gateway", gateway)])
