"""A loopback Matrix homeserver for the gateway's tests: the client-server API calls the gateway makes (login, whoami,
sync with long polling and since tokens, join and leave, send with transaction ids, redact, typing, joined members,
media upload and authenticated download, logout), on Starlette and uvicorn, each call recorded.

    with MatrixAPI() as api:                     # api.url -> MATRIX_HOMESERVER; api.token -> MATRIX_ACCESS_TOKEN
        api.invite("!dm:test")                   # alice invites the bot to a direct chat
        api.say("!dm:test", "hello")             # -> the event's id
        api.wait_sent(1)                         # -> [(room, text as shown now, edits applied)]
"""

from __future__ import annotations

import asyncio
import threading
import time

from tests.asgiserver import Served, wait_sent

BOT, ALICE = "@hermes:test", "@alice:test"


def invitation(inviter: str) -> dict:
    return {"invite_state": {"events": [{"type": "m.room.member", "state_key": BOT, "sender": inviter,
                                         "content": {"membership": "invite"}}]}}


class MatrixAPI(Served):
    def __init__(self):
        self.token, self.password = "syt_test_token", "secret"
        self.log: list = []  # ("invite", room, inviter), ("event", room, event) or ("joined", room, where in the
        # log): a sync token is an index into it
        self.rooms: dict = {}  # room -> its joined members
        self.media: dict = {}  # media id -> bytes
        self.calls, self.declined, self.txns = [], [], {}
        self.changed, self.next = threading.Condition(), 0
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do
    def _event(self, room: str, sender: str, kind: str, content: dict) -> str:
        with self.changed:
            self.next += 1
            event = {"type": kind, "sender": sender, "content": content, "event_id": f"$e{self.next}",
                     "room_id": room, "origin_server_ts": int(time.time() * 1000)}
            self.log.append(("event", room, event))
            self.changed.notify_all()
            return event["event_id"]

    def room(self, room: str, *members: str) -> None:
        """A room the bot is in already, with ``members`` (its history is not answered)."""
        with self.changed:
            self.rooms[room] = {BOT, *members}

    def invite(self, room: str, by: str = ALICE, others: tuple = ()) -> None:
        """``by`` makes ``room`` (with ``others``) and invites the bot."""
        with self.changed:
            self.rooms[room] = {by, *others}
            self.log.append(("invite", room, by))
            self.changed.notify_all()

    def say(self, room: str, text: str, user: str = ALICE, **content) -> str:
        return self._event(room, user, "m.room.message", {"msgtype": "m.text", "body": text, **content})

    def encrypted(self, room: str, user: str = ALICE) -> str:
        return self._event(room, user, "m.room.encrypted", {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "x"})

    def picture(self, room: str, data: bytes, caption: str = "", user: str = ALICE) -> str:
        with self.changed:
            self.media[f"m{len(self.media)}"] = data
            url = f"mxc://test/m{len(self.media) - 1}"
        return self._event(room, user, "m.room.message", {"msgtype": "m.image", "body": caption or "dot.png",
                                                          "filename": "dot.png", "url": url,
                                                          "info": {"mimetype": "image/png", "size": len(data)}})

    # -- what the test reads
    def _mine(self) -> list:
        return [e for kind, _, e in self.log if kind == "event" and e["sender"] == BOT]

    def sent(self, raw: bool = False) -> list:
        """``(room, text)`` of each message the bot sent, as a user reads it now (its edits applied); ``raw``: the
        content itself, edited."""
        with self.changed:
            mine = self._mine()
            edits = {e["content"]["m.relates_to"]["event_id"]: e["content"]["m.new_content"] for e in mine
                     if (e["content"].get("m.relates_to") or {}).get("rel_type") == "m.replace"}
            shown = [(e["room_id"], edits.get(e["event_id"], e["content"])) for e in mine
                     if e["type"] == "m.room.message" and "m.relates_to" not in e["content"]]
            return shown if raw else [(room, content.get("body")) for room, content in shown]

    def last_sent(self, room: str) -> str:
        """The event id of the bot's last message in ``room`` (what a user answers to)."""
        with self.changed:
            return [e["event_id"] for e in self._mine() if e["room_id"] == room and e["type"] == "m.room.message"
                    and "m.relates_to" not in e["content"]][-1]

    def reactions(self, event_id: str) -> list:
        """The bot's reactions on a message (those redacted since left out)."""
        with self.changed:
            return [e["content"]["m.relates_to"]["key"] for e in self._mine() if e["type"] == "m.reaction"
                    and e["content"]["m.relates_to"]["event_id"] == event_id and not e.get("redacted")]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the server's side
    def _sync(self, since: "int | None") -> dict:
        """What happened after ``since`` (None: a first sync, the rooms' history)."""
        rooms: dict = {"join": {}, "invite": {}}
        with self.changed:
            for kind, room, item in self.log[since:] if since is not None else []:
                if kind == "invite" and BOT not in self.rooms.get(room, ()) and room not in self.declined:
                    rooms["invite"][room] = invitation(item)
                elif kind == "joined":  # a room just joined comes with its recent history, as Matrix sends it
                    rooms["join"][room] = {"timeline": {"events": [e for k, r, e in self.log[:item] if k == "event"
                                                                   and r == room]},
                                           "summary": {"m.joined_member_count": len(self.rooms[room])}}
                elif kind == "event" and BOT in self.rooms.get(room, ()):
                    joined = rooms["join"].setdefault(room, {"timeline": {"events": []}, "summary": {
                        "m.joined_member_count": len(self.rooms[room])}})
                    joined["timeline"]["events"].append(item)
            if since is None:  # a first sync: each room's recent history, and the invitations waiting
                for kind, room, item in self.log:
                    if kind == "event" and BOT in self.rooms.get(room, ()):
                        rooms["join"].setdefault(room, {"timeline": {"events": []}})["timeline"]["events"].append(item)
                    elif kind == "invite" and BOT not in self.rooms.get(room, ()) and room not in self.declined:
                        rooms["invite"][room] = invitation(item)
            return {"next_batch": str(len(self.log)), "rooms": rooms}

    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        def refused():
            return JSONResponse({"errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token passed."},
                                status_code=401)

        async def client(request: Request):
            path, method = request.path_params["path"], request.method
            body = await request.json() if method in ("POST", "PUT") else None
            with self.changed:
                self.calls.append((method, path, body))
                self.changed.notify_all()
            if path == "login":
                if body.get("identifier", {}).get("user") != BOT or body.get("password") != self.password:
                    return JSONResponse({"errcode": "M_FORBIDDEN", "error": "Invalid username or password"},
                                        status_code=403)
                return JSONResponse({"access_token": self.token, "user_id": BOT, "device_id": "HERMES1"})
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return refused()
            if path == "account/whoami":
                return JSONResponse({"user_id": BOT, "device_id": "HERMES1"})
            if path == "logout":
                return JSONResponse({})
            if path == "sync":
                since = request.query_params.get("since")
                since = int(since) if since is not None else None
                deadline = time.monotonic() + min(int(request.query_params.get("timeout") or 0) / 1000, 0.5)
                while since is not None and len(self.log) <= since and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                return JSONResponse(self._sync(since))
            parts = path.split("/")
            room = parts[1] if parts[0] == "rooms" else ""
            with self.changed:
                if parts[-1] == "join":
                    self.rooms.setdefault(room, set()).add(BOT)
                    self.log.append(("joined", room, len(self.log)))
                elif parts[-1] == "leave":
                    self.declined.append(room)
                elif parts[-1] == "joined_members":
                    return JSONResponse({"joined": {m: {} for m in self.rooms.get(room, ())}})
                elif parts[2:3] == ["typing"]:
                    pass
                elif parts[2:3] == ["send"]:
                    if BOT not in self.rooms.get(room, ()):
                        return JSONResponse({"errcode": "M_FORBIDDEN", "error": "not in the room"}, status_code=403)
                    if parts[4] not in self.txns:  # a transaction sent again is the same event
                        self.next += 1
                        self.txns[parts[4]] = f"$e{self.next}"
                        self.log.append(("event", room, {"type": parts[3], "sender": BOT, "content": body,
                                                         "event_id": self.txns[parts[4]], "room_id": room}))
                    self.changed.notify_all()
                    return JSONResponse({"event_id": self.txns[parts[4]]})
                elif parts[2:3] == ["redact"]:
                    for kind, _, event in self.log:
                        if kind == "event" and event["event_id"] == parts[3]:
                            event["redacted"] = True
                    self.changed.notify_all()
                    return JSONResponse({"event_id": f"$r{parts[4]}"})
                else:
                    return JSONResponse({"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"},
                                        status_code=404)
            return JSONResponse({})

        async def upload(request: Request):
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return refused()
            with self.changed:
                self.media[f"m{len(self.media)}"] = await request.body()
                self.calls.append(("POST", "upload", request.query_params.get("filename")))
                return JSONResponse({"content_uri": f"mxc://test/m{len(self.media) - 1}"})

        async def download(request: Request):
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return refused()
            data = self.media.get(request.path_params["media"])
            return Response(data, media_type="image/png") if data is not None else JSONResponse(
                {"errcode": "M_NOT_FOUND", "error": "Not found"}, status_code=404)

        return Starlette(routes=[Route("/_matrix/client/v3/{path:path}", client, methods=["GET", "POST", "PUT"]),
                                 Route("/_matrix/media/v3/upload", upload, methods=["POST"]),
                                 Route("/_matrix/client/v1/media/download/{server}/{media}", download)])
