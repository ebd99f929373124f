"""A loopback Feishu Open Platform for the gateway's Feishu tests: the REST calls the platform makes (the tenant
token, the bot's info, messages sent and edited, images and files uploaded, a message's picture fetched) on
Starlette and uvicorn, and what Feishu does with a user's message: an event POSTed to the gateway's webhook, with
the subscription's verification token (and signed, when it has an encrypt key).

    with FeishuAPI() as api:               # api.url -> feishu.api_url; api.app_id, api.secret
        api.webhook = "http://127.0.0.1:PORT/feishu/webhook"
        api.say("hello")                   # -> the message's id
        api.wait_sent(1)                   # -> [(chat_id, text)]
"""

from __future__ import annotations

import hashlib
import json
import threading

from tests.asgiserver import Served, post, wait_sent

ALICE, BOT, DM, GROUP = "ou_alice", "ou_bot", "oc_dm_alice", "oc_group"


class FeishuAPI(Served):
    def __init__(self):
        self.app_id, self.secret, self.verification_token = "cli_test", "feishu-secret", "verify-me"
        self.encrypt_key = ""
        self.messages, self.edits, self.calls, self.uploads, self.resources = [], [], [], [], {}
        self.tokens_issued, self.changed, self.next = 0, threading.Condition(), 0
        self.webhook, self.answered = "", 0
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do (Feishu posts it to the webhook)
    def post(self, payload: dict, token: str = "") -> tuple:
        payload.setdefault("header", {}).setdefault("token", token or self.verification_token)
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if self.encrypt_key:
            stamp, nonce = "1796650000", "n0nce"
            headers.update({"X-Lark-Request-Timestamp": stamp, "X-Lark-Request-Nonce": nonce, "X-Lark-Signature":
                            hashlib.sha256((stamp + nonce + self.encrypt_key).encode() + body).hexdigest()})
        self.answered, answer = post(self.webhook, body, headers)
        return self.answered, json.loads(answer or b"{}")

    def say(self, text: str = "", user: str = ALICE, chat: str = DM, group: bool = False, mention_bot: bool = False,
            kind: str = "text", content: dict = None, message_id: str = "") -> str:
        """A message from ``user`` in ``chat`` (a group's naming the bot with ``mention_bot``); its id."""
        with self.changed:
            self.next += 1
            message_id = message_id or f"om_in_{self.next}"
        mentions = [{"key": "@_user_1", "id": {"open_id": BOT}, "name": "hermes"}] if mention_bot else []
        text = f"@_user_1 {text}" if mention_bot else text
        status, _ = self.post({"schema": "2.0", "header": {"event_type": "im.message.receive_v1",
                                                            "event_id": f"ev_{message_id}"},
                               "event": {"sender": {"sender_id": {"open_id": user}, "sender_type": "user"},
                                         "message": {"message_id": message_id, "chat_id": chat,
                                                     "chat_type": "group" if group else "p2p", "message_type": kind,
                                                     "content": json.dumps(content or {"text": text}),
                                                     "mentions": mentions}}})
        assert status == 200, status
        return message_id

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(m["receive_id"], json.loads(m["content"]).get("text")) for m in self.messages
                    if m["msg_type"] == "text"]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the Open Platform
    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        def ok(data: dict = None, **more):
            return JSONResponse({"code": 0, "msg": "success", **({"data": data} if data is not None else {}), **more})

        async def token(request: Request):
            body = await request.json()
            if (body.get("app_id"), body.get("app_secret")) != (self.app_id, self.secret):
                return JSONResponse({"code": 10014, "msg": "app secret invalid"})
            self.tokens_issued += 1
            return ok(tenant_access_token=f"t-{self.tokens_issued}", expire=7200)

        async def api(request: Request):
            path = request.path_params["path"]
            self.calls.append((request.method, path))
            if request.headers.get("authorization") != f"Bearer t-{self.tokens_issued}":
                return JSONResponse({"code": 99991663, "msg": "Invalid access token for authorization."}, 400)
            if path == "bot/v3/info":
                return ok(bot={"app_name": "Hermes Test", "open_id": BOT})
            if path == "im/v1/messages" and request.method == "POST":
                body = await request.json()
                with self.changed:
                    self.next += 1
                    self.messages.append({**body, "message_id": f"om_out_{self.next}"})
                    self.changed.notify_all()
                return ok({"message_id": f"om_out_{self.next}"})
            if path.startswith("im/v1/messages/") and request.method == "PUT":
                body, message_id = await request.json(), path.rpartition("/")[2]
                with self.changed:
                    for message in self.messages:
                        if message["message_id"] == message_id:
                            message["content"] = body["content"]
                    self.edits.append(message_id)
                    self.changed.notify_all()
                return ok({})
            if path in ("im/v1/images", "im/v1/files"):
                form = await request.form()
                upload = form.get("image") or form.get("file")
                self.uploads.append((upload.filename, await upload.read()))
                key = "image_key" if path.endswith("images") else "file_key"
                return ok({key: f"up_{len(self.uploads)}"})
            if "/resources/" in path:
                return Response(self.resources[path.rpartition("/")[2]], media_type="image/png")
            return JSONResponse({"code": 1254000, "msg": f"no such api: {path}"}, 404)

        return Starlette(routes=[Route("/open-apis/auth/v3/tenant_access_token/internal", token, methods=["POST"]),
                                 Route("/open-apis/{path:path}", api, methods=["GET", "POST", "PUT"])])
