"""A loopback DingTalk for the gateway's DingTalk tests: Stream mode's gateway (the connection's address and ticket
for the app's credentials), its websocket (the robot's messages as CALLBACK frames, their acknowledgements recorded,
a ping), and the session webhooks the answers are posted to; on Starlette and uvicorn.

    with DingTalkAPI() as api:             # api.url -> dingtalk.api_url; api.client_id, api.secret
        api.say("hello")                   # -> the message's id
        api.wait_sent(1)                   # -> [(conversation, markdown text)]
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

from tests.asgiserver import Served, wait_sent

ALICE, DM, GROUP = "staff_alice", "cid_dm_alice", "cid_group"


class DingTalkAPI(Served):
    def __init__(self):
        self.client_id, self.secret = "ding_app", "ding-secret"
        self.frames, self.acks, self.messages, self.opened = [], [], [], 0
        self.changed, self.next, self.connected = threading.Condition(), 0, False
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    def _frame(self, kind: str, topic: str, data: dict) -> str:
        with self.changed:
            self.next += 1
            frame_id = f"frame-{self.next}"
            self.frames.append({"specVersion": "1.0", "type": kind, "headers": {
                "topic": topic, "messageId": frame_id, "contentType": "application/json", "appId": self.client_id,
                "time": str(int(time.time() * 1000))}, "data": json.dumps(data)})
            self.changed.notify_all()
        return frame_id

    # -- what users do
    def say(self, text: str = "", user: str = ALICE, chat: str = DM, group: bool = False, mention: bool = False,
            kind: str = "text", message_id: str = "", **more) -> str:
        with self.changed:
            self.next += 1
            message_id = message_id or f"msg{self.next}"
        self._frame("CALLBACK", "/v1.0/im/bot/messages/get", {
            "conversationId": chat, "conversationType": "2" if group else "1", "msgId": message_id,
            "senderStaffId": user, "senderNick": user.removeprefix("staff_").title(), "chatbotUserId": "bot",
            "msgtype": kind, **({"text": {"content": f" {text}"}} if kind == "text" else {}), **more,
            "isInAtList": mention, "sessionWebhook": f"{self.url}/robot/sendBySession?session={chat}",
            "sessionWebhookExpiredTime": int(time.time() * 1000) + 3600_000})
        return message_id

    def ping(self) -> str:
        return self._frame("SYSTEM", "ping", {"opaque": "p-1"})

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(m["session"], m["markdown"]["text"]) for m in self.messages]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- DingTalk's side
    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route, WebSocketRoute

        async def open_connection(request: Request):
            body = await request.json()
            if (body.get("clientId"), body.get("clientSecret")) != (self.client_id, self.secret):
                return JSONResponse({"code": "InvalidAuthentication", "message": "clientId or clientSecret is "
                                     "invalid"}, 401)
            self.opened += 1
            return JSONResponse({"endpoint": f"ws://127.0.0.1:{self.port}/stream", "ticket": f"t {self.opened}"})

        async def stream(websocket):
            if websocket.query_params.get("ticket") != f"t {self.opened}":
                await websocket.close(code=4001)
                return
            await websocket.accept()
            with self.changed:
                self.connected = True
            while True:
                try:
                    ack = json.loads(await asyncio.wait_for(websocket.receive_text(), 0.05))
                    with self.changed:
                        self.acks.append(ack)
                        self.changed.notify_all()
                except asyncio.TimeoutError:
                    pass
                except Exception:  # noqa: BLE001 - the client went away
                    with self.changed:
                        self.connected = False
                    return
                with self.changed:
                    waiting, self.frames = self.frames, []
                for frame in waiting:
                    await websocket.send_text(json.dumps(frame))

        async def session_webhook(request: Request):
            body = await request.json()
            with self.changed:
                self.messages.append({**body, "session": request.query_params.get("session")})
                self.changed.notify_all()
            return JSONResponse({"errcode": 0, "errmsg": "ok"})

        return Starlette(routes=[Route("/v1.0/gateway/connections/open", open_connection, methods=["POST"]),
                                 Route("/robot/sendBySession", session_webhook, methods=["POST"]),
                                 WebSocketRoute("/stream", stream)])
