"""A loopback BlueBubbles server for the gateway's iMessage tests: the REST calls the platform makes (the server's
info, webhooks registered, listed and removed, messages and attachments sent, an attachment fetched, typing) on
Starlette and uvicorn, each checked for the server's password, and what the server does with a new iMessage: a
``new-message`` event POSTed to every webhook registered.

    with BlueBubblesAPI() as api:          # api.url -> BLUEBUBBLES_SERVER_URL; api.password
        api.say("hello")                   # -> the message's GUID
        api.wait_sent(1)                   # -> [(chat GUID, text)]
"""

from __future__ import annotations

import json
import threading

from tests.asgiserver import Served, post, wait_sent

ALICE = "+15551234567"
DM, GROUP = f"iMessage;-;{ALICE}", "iMessage;+;chat123456"


class BlueBubblesAPI(Served):
    def __init__(self):
        self.password = "bb-password"
        self.hooks, self.messages, self.files, self.typing, self.attachments = {}, [], [], [], {}
        self.changed, self.next, self.private_api = threading.Condition(), 0, True
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do (the server posts it to each webhook)
    def post(self, payload: dict, url: str = "") -> list:
        return [post(hook, json.dumps(payload).encode(), {"Content-Type": "application/json"})[0]
                for hook in ([url] if url else [h["url"] for h in self.hooks.values()])]

    def say(self, text: str = "", user: str = ALICE, chat: str = DM, guid: str = "", **more) -> str:
        with self.changed:
            self.next += 1
            guid = guid or f"in-{self.next}"
        assert self.post({"type": "new-message", "data": {
            "guid": guid, "text": text, "isFromMe": False, "handle": {"address": user}, "attachments": [],
            "chats": [{"guid": chat, "style": 43 if ";+;" in chat else 45}], "associatedMessageType": None,
            **more}}) == [200]
        return guid

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(m["chatGuid"], m["message"]) for m in self.messages]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the server
    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        def ok(data=None):
            return JSONResponse({"status": 200, "message": "Success", "data": data})

        async def api(request: Request):
            path, method = request.path_params["path"], request.method
            if request.query_params.get("password") != self.password:
                return JSONResponse({"status": 401, "message": "You are not authorized to access this resource",
                                     "error": {"type": "Authentication Error", "message": "Invalid password!"}}, 401)
            if path == "server/info":
                return ok({"server_version": "1.9.9", "private_api": self.private_api,
                           "detected_icloud": "hermes@icloud.com"})
            if path == "webhook" and method == "GET":
                return ok(list(self.hooks.values()))
            if path == "webhook" and method == "POST":
                body = await request.json()
                self.next += 1
                self.hooks[self.next] = {"id": self.next, "url": body["url"], "events": body["events"]}
                return ok(self.hooks[self.next])
            if path.startswith("webhook/") and method == "DELETE":
                self.hooks.pop(int(path.partition("/")[2]), None)
                return ok()
            if path == "message/text":
                body = await request.json()
                with self.changed:
                    self.next += 1
                    self.messages.append(body)
                    self.changed.notify_all()
                return ok({"guid": f"out-{self.next}"})
            if path == "message/attachment":
                form = await request.form()
                with self.changed:
                    self.files.append((form["chatGuid"], form["name"], await form["attachment"].read()))
                    self.changed.notify_all()
                return ok({"guid": "out-file"})
            if path.startswith("chat/") and path.endswith("/typing"):
                self.typing.append(path.split("/")[1])
                return ok()
            if path.startswith("attachment/") and path.endswith("/download"):
                return Response(self.attachments[path.split("/")[1]], media_type="application/octet-stream")
            return JSONResponse({"status": 404, "message": f"no route {path}"}, 404)

        return Starlette(routes=[Route("/api/v1/{path:path}", api, methods=["GET", "POST", "DELETE"])])
