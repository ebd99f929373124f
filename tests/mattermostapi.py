"""A loopback Mattermost for the gateway's tests: the websocket (authentication challenge, hello, posted events) and
the REST API v4 calls the gateway makes (users/me, posts, their patch, reactions, typing, files), on Starlette and
uvicorn, each call recorded.

    with MattermostAPI() as api:                  # api.url -> MATTERMOST_URL; api.token -> MATTERMOST_TOKEN
        api.say("hello")                          # alice's direct message: the post's id
        api.wait_sent(1)                          # -> [(channel, message)]
"""

from __future__ import annotations

import asyncio
import json
import threading

from tests.asgiserver import Served, wait_sent

BOT = {"id": "bot1", "username": "hermes"}


class MattermostAPI(Served):
    def __init__(self):
        self.token = "mm-test-token"
        self.events, self.calls, self.posts, self.files = [], [], [], {}
        self.reactions: dict = {}  # post id -> the bot's emoji names on it
        self.challenged: list = []  # the tokens the websocket's authentication challenges carried
        self.changed, self.next = threading.Condition(), 100
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do
    def say(self, message: str, user: str = "alice-id", channel: str = "dm-alice", direct: bool = True,
            mention: bool = False, file_ids: list = (), root: str = "") -> str:
        """A post (``root``: a reply in that post's thread); its id."""
        with self.changed:
            self.next += 1
            post = {"id": f"p{self.next}", "channel_id": channel, "user_id": user, "message": message, "type": "",
                    "root_id": root, "create_at": 1796650000000 + self.next,
                    **({"metadata": {"files": [{"id": f, "name": "dot.png", "mime_type": "image/png",
                                                "size": len(self.files[f])} for f in file_ids]}} if file_ids else {})}
            self.events.append({"event": "posted", "data": {
                "channel_type": "D" if direct else "O", "post": json.dumps(post), "sender_name": "@alice",
                **({"mentions": json.dumps([BOT["id"]])} if mention else {})}})
            self.changed.notify_all()
            return post["id"]

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(p["channel_id"], p["message"]) for p in self.posts]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the server's side
    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route, WebSocketRoute

        async def api(request: Request):
            path, method = request.path_params["path"], request.method
            multipart = "multipart" in request.headers.get("content-type", "")
            body = None if method in ("GET", "DELETE") or multipart else await request.json()
            with self.changed:
                self.calls.append((method, path, body))
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return JSONResponse({"id": "api.context.session_expired.app_error",
                                     "message": "Invalid or expired session, please login again."}, status_code=401)
            parts = path.split("/")
            with self.changed:
                self.changed.notify_all()
                if path == "users/me":
                    return JSONResponse(BOT)
                if parts[0] == "channels" and parts[-1] == "posts" and method == "GET":  # since: created after it
                    since = int(request.query_params.get("since") or 0)
                    found = [json.loads(e["data"]["post"]) for e in self.events if e["event"] == "posted"]
                    found = {p["id"]: p for p in found if p["channel_id"] == parts[1] and p["create_at"] >= since}
                    return JSONResponse({"order": list(found), "posts": found})
                if path == "posts" and method == "POST":
                    self.next += 1
                    self.posts.append({"id": f"p{self.next}", **body})
                    return JSONResponse(self.posts[-1], status_code=201)
                if parts[0] == "posts" and parts[-1] == "patch":
                    found = next((p for p in self.posts if p["id"] == parts[1]), None)
                    if found is None:
                        return JSONResponse({"message": "Unable to find the post."}, status_code=404)
                    found["message"] = body["message"]
                    return JSONResponse(found)
                if path == "reactions":
                    self.reactions.setdefault(body["post_id"], []).append(body["emoji_name"])
                    return JSONResponse(body, status_code=201)
                if parts[-1:] != ["typing"] and parts[0] == "users" and "reactions" in parts and method == "DELETE":
                    mine = self.reactions.get(parts[3], [])
                    if parts[5] in mine:
                        mine.remove(parts[5])
                    return JSONResponse({"status": "OK"})
                if parts[-1] == "typing":
                    return JSONResponse({"status": "OK"})
                if path == "files" and multipart:
                    form = await request.form()
                    upload = form["files"]
                    self.next += 1
                    self.files[f"f{self.next}"] = await upload.read()
                    return JSONResponse({"file_infos": [{"id": f"f{self.next}", "name": upload.filename}]},
                                        status_code=201)
                if parts[0] == "files" and method == "GET":
                    data = self.files.get(parts[1])
                    return Response(data, media_type="image/png") if data is not None else JSONResponse(
                        {"message": "not found"}, status_code=404)
            return JSONResponse({"message": f"no route: {method} {path}"}, status_code=404)

        async def websocket(socket):
            await socket.accept()
            try:
                challenge = json.loads(await socket.receive_text())
            except Exception:  # noqa: BLE001 - the client went away
                return
            with self.changed:  # what was posted before the connection is not sent (Mattermost replays none)
                sent = len(self.events)
                self.challenged.append((challenge.get("data") or {}).get("token"))
            await socket.send_text(json.dumps({"event": "hello", "data": {"server_version": "10.0"}}))
            while True:
                try:
                    await asyncio.wait_for(socket.receive_text(), 0.05)
                except asyncio.TimeoutError:
                    pass
                except Exception:  # noqa: BLE001 - the client went away
                    return
                with self.changed:
                    waiting, sent = self.events[sent:], len(self.events)
                for event in waiting:
                    await socket.send_text(json.dumps(event))

        return Starlette(routes=[Route("/api/v4/{path:path}", api, methods=["GET", "POST", "PUT", "DELETE"]),
                                 WebSocketRoute("/api/v4/websocket", websocket)])
