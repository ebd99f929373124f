"""A loopback LINE Messaging API for the gateway's LINE tests: the calls the platform makes (the bot's info, replies,
pushes, the loading "...", what a user sent, by id) on Starlette and uvicorn, and what LINE does with a user's
message: an event POSTed to the gateway's webhook, signed with the channel secret, with a reply token that is taken
once.

    with LineAPI() as api:                 # api.url -> line.api_url; api.token, api.secret
        api.webhook = "http://127.0.0.1:PORT/line/webhook"
        api.say("hello")                   # -> the message's id
        api.wait_sent(1)                   # -> [(chat, text, "reply" or "push")]
"""

from __future__ import annotations

import json
import threading

from plugins.gateway.line import signature
from tests.asgiserver import Served, post, wait_sent

ALICE, BOT, GROUP = "U" + "a" * 32, "U" + "b" * 32, "C" + "c" * 32


class LineAPI(Served):
    def __init__(self):
        self.token, self.secret = "line-token", "line-secret"
        self.messages, self.calls, self.loading, self.contents = [], [], [], {}
        self.tokens, self.changed, self.next, self.webhook = {}, threading.Condition(), 0, ""
        self.stale = False  # every reply token refused, as one that expired
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do (LINE posts it to the webhook)
    def post(self, payload: dict, secret: str = "") -> int:
        body = json.dumps(payload).encode()
        return post(self.webhook, body, {"Content-Type": "application/json",
                                         "X-Line-Signature": signature(secret or self.secret, body)})[0]

    def say(self, text: str = "", user: str = ALICE, group: str = "", mention_bot: bool = False,
            message: dict = None, message_id: str = "") -> str:
        """A message from ``user`` (in ``group``, naming the bot with ``mention_bot``); its id."""
        with self.changed:
            self.next += 1
            message_id, reply_token = message_id or f"{100 + self.next}", f"rt-{self.next}"
            self.tokens[reply_token] = group or user  # the chat it answers in; LINE takes each once
        if mention_bot:
            text = f"@Hermes {text}"
        body = message or {"type": "text", "text": text, **({"mention": {"mentionees": [
            {"index": 0, "length": 7, "type": "user", "userId": BOT, "isSelf": True}]}} if mention_bot else {})}
        source = {"type": "group", "groupId": group, "userId": user} if group else {"type": "user", "userId": user}
        status = self.post({"destination": BOT, "events": [{
            "type": "message", "mode": "active", "timestamp": 1796650000000, "webhookEventId": f"01H{self.next}",
            "deliveryContext": {"isRedelivery": False}, "replyToken": reply_token, "source": source,
            "message": {"id": message_id, **body}}]})
        assert status == 200, status
        return message_id

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(m["to"], m["text"], m["how"]) for m in self.messages if m["type"] == "text"]

    def pictures(self) -> list:
        with self.changed:
            return [(m["to"], m["originalContentUrl"]) for m in self.messages if m["type"] == "image"]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the Messaging API
    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        def out(to: str, how: str, messages: list) -> JSONResponse:
            with self.changed:
                ids = []
                for message in messages:
                    self.next += 1
                    ids.append({"id": f"9{self.next}", "quoteToken": "q"})
                    self.messages.append({"to": to, "how": how, **message})
                self.changed.notify_all()
            return JSONResponse({"sentMessages": ids})

        async def api(request: Request):
            path = request.path_params["path"]
            self.calls.append((request.method, path))
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return JSONResponse({"message": "Authentication failed. Confirm that the access token in the "
                                                "authorization header is valid."}, 401)
            if path == "bot/info":
                return JSONResponse({"userId": BOT, "basicId": "@123hermes", "displayName": "Hermes"})
            body = await request.json() if request.method == "POST" else {}
            if path == "bot/message/reply":
                chat = self.tokens.pop(body.get("replyToken"), None)
                if chat is None or self.stale:
                    return JSONResponse({"message": "Invalid reply token"}, 400)
                return out(chat, "reply", body["messages"])
            if path == "bot/message/push":
                return out(body["to"], "push", body["messages"])
            if path == "bot/chat/loading/start":
                self.loading.append(body["chatId"])
                return JSONResponse({}, 202)
            if path.startswith("bot/message/") and path.endswith("/content"):
                return Response(self.contents[path.split("/")[2]], media_type="image/png")
            return JSONResponse({"message": "Not found"}, 404)

        return Starlette(routes=[Route("/v2/{path:path}", api, methods=["GET", "POST"])])
