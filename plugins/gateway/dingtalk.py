"""DingTalk (hermes-agent's ``dingtalk`` platform), in Stream mode as there: the gateway opens a connection to
DingTalk (no public address needed), takes the robot's messages on its websocket, acknowledges each, and answers
through the session webhook each message brings. hermes-agent's variables: ``DINGTALK_CLIENT_ID`` and
``DINGTALK_CLIENT_SECRET`` (the app's AppKey and AppSecret), ``DINGTALK_ALLOWED_USERS`` (staff ids),
``DINGTALK_WEBHOOK_URL`` (a robot's own webhook: where a message goes that answers none, a cron job's), and
``DINGTALK_HOME_CHANNEL``.

A private chat is one conversation and a group another, where the robot answers a message that @-mentions it.
Answers are DingTalk's Markdown; a picture or file sent is said to the model, not read; none is sent. DingTalk
delivers a message again that was not acknowledged in time: it is answered once."""

from __future__ import annotations

import json
import logging
import time
from typing import Optional
from urllib.parse import quote_plus

from plugins.gateway.hookspecs import Incoming, PlatformError, body_of
from plugins.gateway.socketed import Socketed

log = logging.getLogger("hermes.gateway")
API = "https://api.dingtalk.com"
TOPIC = "/v1.0/im/bot/messages/get"  # the robot's messages, in Stream mode


class DingTalk(Socketed):
    name = "dingtalk"
    most = 4000  # a Markdown message's text (DingTalk takes 5000)

    def __init__(self, client_id: str, secret: str, api: str = API, webhook: str = ""):
        import httpx2 as httpx

        super().__init__()
        self.client_id, self.secret, self.api, self.webhook = client_id, secret, api.rstrip("/"), webhook
        self.client = httpx.Client(timeout=30)
        self.replies: dict = {}  # conversation -> (its session webhook, when that expires, in ms)
        self.seen: dict = {}  # message id -> when it came: a redelivery is answered once

    def start(self) -> str:
        import importlib.util

        if importlib.util.find_spec("websocket") is None:
            raise PlatformError("dingtalk needs websocket-client: pip install 'hermes-kernel[discord]'", lasting=True)
        self.connect("the Stream connection")
        return self.client_id

    def _open(self) -> str:
        """The Stream connection's address, from DingTalk's gateway (a ticket for the app's credentials)."""
        import httpx2 as httpx

        try:
            answer = self.client.post(f"{self.api}/v1.0/gateway/connections/open", json={
                "clientId": self.client_id, "clientSecret": self.secret, "ua": "hermes",
                "subscriptions": [{"type": "CALLBACK", "topic": TOPIC}]})
        except httpx.HTTPError as exc:
            raise PlatformError(f"dingtalk: cannot reach {self.api} ({exc or type(exc).__name__})") from None
        body = body_of(answer) or {}
        if answer.is_success and body.get("endpoint") and body.get("ticket"):
            return f"{body['endpoint']}?ticket={quote_plus(str(body['ticket']))}"
        said = body.get("message") or answer.reason_phrase
        if answer.status_code in (400, 401, 403):
            raise PlatformError(f"dingtalk: DingTalk refused DINGTALK_CLIENT_ID and DINGTALK_CLIENT_SECRET ({said})",
                                lasting=True, status=401)
        raise PlatformError(f"dingtalk: the Stream connection was not opened ({said})", status=answer.status_code)

    def _session(self) -> None:
        import websocket

        url = self._open()
        try:
            self.ws = ws = websocket.create_connection(url, timeout=30)
        except (OSError, websocket.WebSocketException) as exc:
            raise PlatformError(f"dingtalk: cannot reach the Stream connection ({exc})") from None
        self.ready.set()  # DingTalk says nothing when it takes a connection: open, it is ready
        self.settled.set()
        try:
            for frame in self.frames(ws, "dingtalk: DingTalk closed the Stream connection"):
                headers = frame.get("headers") if isinstance(frame.get("headers"), dict) else {}
                kind, topic = frame.get("type"), headers.get("topic")
                if kind == "SYSTEM" and topic == "disconnect":  # DingTalk moves the connection: another one
                    return
                if kind == "SYSTEM" or kind == "CALLBACK" and topic == TOPIC:  # acknowledged, or it comes again
                    ws.send(json.dumps({"code": 200, "message": "OK", "headers": {
                        "contentType": "application/json", "messageId": headers.get("messageId")},
                        "data": frame.get("data") if kind == "SYSTEM" else json.dumps({"response": None})}))
                if kind == "CALLBACK" and topic == TOPIC:
                    try:
                        self._message(json.loads(frame.get("data") or "{}"))
                    except Exception:  # noqa: BLE001 - one message that cannot be read never ends the connection
                        log.exception("dingtalk: a message could not be read")
        except (OSError, ValueError, websocket.WebSocketException) as exc:
            if self.stopping.is_set():
                return
            raise PlatformError(f"dingtalk: the Stream connection failed ({type(exc).__name__}: {exc})") from None
        finally:
            ws.close()

    def _message(self, data: dict) -> None:
        chat, message = str(data.get("conversationId") or ""), str(data.get("msgId") or "")
        user = str(data.get("senderStaffId") or data.get("senderId") or "")
        if not chat or not user or message in self.seen:
            return
        now = time.monotonic()
        self.seen = {m: at for m, at in self.seen.items() if now - at < 3600}
        self.seen[message] = now
        if data.get("sessionWebhook"):
            self.replies[chat] = (str(data["sessionWebhook"]), int(data.get("sessionWebhookExpiredTime") or 0))
        kind, text, missed = str(data.get("msgtype") or ""), "", ""
        if kind == "text":
            text = str((data.get("text") or {}).get("content") or "")
        elif kind == "richText":
            parts = ((data.get("content") or {}).get("richText") or [])
            text = "".join(str(p.get("text") or "") for p in parts if isinstance(p, dict))
        if kind in ("picture", "file", "audio", "video") or kind == "richText" and "downloadCode" in json.dumps(data):
            missed = f"[the user sent a {'picture' if kind in ('picture', 'richText') else kind}, which is not read " \
                     "here]"
        self.inbox.put(Incoming(chat=chat, user=user, name=str(data.get("senderNick") or user),
                                text=" ".join(text.split()), missed=missed, message=message,
                                addressed=str(data.get("conversationType")) == "1" or bool(data.get("isInAtList"))))

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        """To the conversation's session webhook while it lasts, else to ``DINGTALK_WEBHOOK_URL``'s robot."""
        import httpx2 as httpx

        webhook, expires = self.replies.get(chat, ("", 0))
        if not webhook or expires and expires < time.time() * 1000:
            webhook = self.webhook
        if not webhook:
            raise PlatformError(f"dingtalk: nothing to write to {chat} with: the robot answers a message while its "
                                "session lasts (DINGTALK_WEBHOOK_URL names a robot for the others)")
        title = " ".join(text.split())[:20] or "hermes"
        try:
            answer = self.client.post(webhook, json={"msgtype": "markdown",
                                                     "markdown": {"title": title, "text": text}})
        except httpx.HTTPError as exc:
            raise PlatformError(f"dingtalk: cannot reach DingTalk ({exc or type(exc).__name__})") from None
        body = body_of(answer) or {}
        if not answer.is_success or body.get("errcode") not in (0, None):
            raise PlatformError(f"dingtalk: {body.get('errmsg') or answer.reason_phrase} (errcode "
                                f"{body.get('errcode')})", status=answer.status_code)
        return None

    def send_file(self, chat: str, path: str, kind: str) -> None:
        raise PlatformError("files are not sent to DingTalk here")

    def typing(self, chat: str) -> None:
        pass  # DingTalk shows none
