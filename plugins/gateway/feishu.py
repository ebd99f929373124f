"""Feishu and Lark (hermes-agent's ``feishu`` platform), in its webhook mode: Feishu POSTs each event to this gateway,
the answers go through the Open Platform's REST API. hermes-agent's variables: ``FEISHU_APP_ID``,
``FEISHU_APP_SECRET``, ``FEISHU_DOMAIN`` (``feishu``, open.feishu.cn, or ``lark``, open.larksuite.com),
``FEISHU_VERIFICATION_TOKEN`` (the event subscription's, checked on every event: required, but for a webhook on this
machine), ``FEISHU_ENCRYPT_KEY`` (then each POST's signature is checked too), ``FEISHU_WEBHOOK_HOST``/``_PORT``/
``_PATH`` (127.0.0.1, 8765, /feishu/webhook: behind the public HTTPS address the subscription is given),
``FEISHU_ALLOWED_USERS`` (open ids, ``ou_...``). hermes-agent's other mode, its SDK's long connection
(``FEISHU_CONNECTION_MODE=websocket``), is not here; a subscription that encrypts its events is not taken.

A private chat is one conversation, a group another; in a group the bot answers a message that @-mentions it.
Answers go as text (a text message shows no Markdown), edited as they are written when streaming is on; pictures
are read and files sent. Feishu delivers an event again when it was not answered in time: a message is answered
once."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import mimetypes
from pathlib import Path
from typing import Any, Optional

from plugins.gateway.hookspecs import Incoming, PlatformError, Token, body_of
from plugins.gateway.listening import Listened, listen

log = logging.getLogger("hermes.gateway")
DOMAINS = {"feishu": "https://open.feishu.cn", "lark": "https://open.larksuite.com"}
STALE_TOKEN = {99991661, 99991663, 99991668}  # Feishu's codes for a tenant token missing, invalid or expired
MAX_FILE = 30 * 2**20  # Feishu's limit for a file a bot sends


class Feishu(Listened):
    name = "feishu"
    most = 4000

    def __init__(self, app_id: str, secret: str, verification_token: str = "", encrypt_key: str = "",
                 host: str = "127.0.0.1", port: int = 8765, path: str = "/feishu/webhook",
                 api: str = DOMAINS["feishu"]):
        import httpx2 as httpx

        super().__init__()
        self.app_id, self.secret, self.verification_token, self.encrypt_key = app_id, secret, verification_token, \
            encrypt_key
        self.host, self.port, self.path, self.api = host, port, "/" + path.strip("/"), api.rstrip("/")
        self.client = httpx.Client(timeout=30)
        self.bot_id = ""
        self.token = Token(self._tenant_token, early=60, least=30)  # asked again a minute early, or when Feishu says

    def _tenant_token(self) -> tuple:
        """The app's tenant access token and its lifetime."""
        found = self._request_json("POST", "/open-apis/auth/v3/tenant_access_token/internal", token=False,
                                   json={"app_id": self.app_id, "app_secret": self.secret})
        return str(found.get("tenant_access_token") or ""), int(found.get("expire") or 0)

    def _request_json(self, method: str, path: str, token: bool = True, raw: bool = False, **kwargs: Any) -> Any:
        import httpx2 as httpx

        for attempt in (1, 2):
            headers = {"Authorization": f"Bearer {self.token.get(fresh=attempt == 2)}"} if token else {}
            try:
                answer = self.client.request(method, self.api + path, headers=headers, **kwargs)
            except httpx.HTTPError as exc:
                raise PlatformError(f"feishu: cannot reach {self.api} ({exc or type(exc).__name__})") from None
            if raw and answer.is_success and "json" not in answer.headers.get("content-type", ""):
                return answer.content
            body = body_of(answer)
            code = body.get("code") if isinstance(body, dict) else None
            if answer.is_success and code == 0:
                return body.get("data", body)  # (the token's and the bot's answers hold no "data")
            if token and code in STALE_TOKEN and attempt == 1:
                continue
            said = (body or {}).get("msg") if isinstance(body, dict) else answer.reason_phrase
            if not token and code or code in STALE_TOKEN or answer.status_code in (401, 403) and not code:
                raise PlatformError(f"feishu: Feishu refused FEISHU_APP_ID and FEISHU_APP_SECRET ({said}, code "
                                    f"{code})", lasting=True, status=401)
            raise PlatformError(f"feishu: {said} (code {code})", status=answer.status_code)
        raise PlatformError("feishu: the tenant token was refused twice")

    # -- receiving
    def start(self) -> str:
        if not self.verification_token and self.host not in ("127.0.0.1", "localhost", "::1"):
            raise PlatformError("feishu: FEISHU_VERIFICATION_TOKEN is needed (the event subscription's: without it "
                                "anybody could post messages as anybody)", lasting=True)
        found = self._request_json("GET", "/open-apis/bot/v3/info")
        bot = found.get("bot") if isinstance(found.get("bot"), dict) else found
        self.bot_id = str(bot.get("open_id") or "")
        self.server = listen("feishu", self.host, self.port, self._request)
        return str(bot.get("app_name") or self.app_id)

    def _request(self, method: str, path: str, headers: Any, body: bytes) -> tuple:
        if path.partition("?")[0] != self.path:
            return 404, {"error": "not found"}
        if method != "POST":
            return 405, {"error": "POST only"}
        if self.encrypt_key and not self._signed(headers, body):
            log.warning("feishu: a POST without Feishu's signature was refused")
            return 401, {"error": "invalid signature"}
        try:
            event = json.loads(body)
        except ValueError:
            return 400, {"error": "the body is no JSON"}
        if not isinstance(event, dict):
            return 400, {"error": "the body is no event"}
        if event.get("encrypt"):
            log.warning("feishu: an encrypted event was refused: turn encryption off in the event subscription")
            return 400, {"code": 400, "msg": "encrypted events are not taken: turn encryption off"}
        given = str((event.get("header") or {}).get("token") or event.get("token") or "")
        if self.verification_token and not hmac.compare_digest(given.encode(), self.verification_token.encode()):
            log.warning("feishu: an event without the verification token was refused")
            return 401, {"error": "invalid verification token"}
        if event.get("type") == "url_verification":  # the subscription's handshake, after the token's check
            return 200, {"challenge": event.get("challenge", "")}
        if (event.get("header") or {}).get("event_type") == "im.message.receive_v1":
            try:
                self._message(event.get("event") or {})
            except Exception:  # noqa: BLE001 - one message that cannot be read never fails the others
                log.exception("feishu: a message could not be read")
        return 200, {"code": 0, "msg": "ok"}

    def _signed(self, headers: Any, body: bytes) -> bool:
        """Feishu's signature: SHA-256 of the timestamp, the nonce, the encrypt key and the body."""
        stamp = str(headers.get("X-Lark-Request-Timestamp") or "")
        nonce = str(headers.get("X-Lark-Request-Nonce") or "")
        wanted = hashlib.sha256(stamp.encode() + nonce.encode() + self.encrypt_key.encode() + body).hexdigest()
        return bool(stamp and nonce) and hmac.compare_digest(str(headers.get("X-Lark-Signature") or "").encode(),
                                                            wanted.encode())

    def _message(self, event: dict) -> None:
        message, sender = event.get("message") or {}, event.get("sender") or {}
        user = str((sender.get("sender_id") or {}).get("open_id") or "")
        message_id, chat = str(message.get("message_id") or ""), str(message.get("chat_id") or "")
        if sender.get("sender_type") == "app" or not user or not chat or not self.first(message_id):
            return  # a bot's (its own answers too)
        try:
            content = json.loads(message.get("content") or "{}")
        except ValueError:
            content = {}
        mentions = [m for m in message.get("mentions") or [] if isinstance(m, dict)]
        kind, text = str(message.get("message_type") or ""), ""
        if kind == "text":
            text = str(content.get("text") or "")
        elif kind == "post":  # rich text: its title and the words of its paragraphs
            post = content.get("content") if isinstance(content.get("content"), list) else []
            text = "\n".join([str(content.get("title") or "")] + ["".join(
                str(part.get("text") or part.get("user_name") or "") for part in line if isinstance(part, dict))
                for line in post if isinstance(line, list)]).strip()
        for mention in mentions:  # @_user_1 placeholders: the bot's own left out, others by name
            own = (mention.get("id") or {}).get("open_id") == self.bot_id
            text = text.replace(str(mention.get("key") or "\0"), "" if own else f"@{mention.get('name') or ''}")
        addressed = message.get("chat_type") == "p2p" or any(
            (m.get("id") or {}).get("open_id") == self.bot_id for m in mentions)
        incoming = Incoming(chat=chat, user=user, name=user, text=" ".join(text.split()), addressed=addressed,
                            message=message_id)
        if kind == "image" and content.get("image_key"):
            key = str(content["image_key"])
            incoming.attach("image/", "", lambda: self._request_json(
                "GET", f"/open-apis/im/v1/messages/{message_id}/resources/{key}", raw=True, params={"type": "image"}))
        self.inbox.put(incoming)

    # -- answers
    def _send(self, chat: str, kind: str, content: dict) -> Optional[str]:
        sent = self._request_json("POST", "/open-apis/im/v1/messages", params={"receive_id_type": "chat_id"},
                                  json={"receive_id": chat, "msg_type": kind, "content": json.dumps(content)})
        return str((sent or {}).get("message_id") or "") or None

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        return self._send(chat, "text", {"text": text})

    def edit(self, chat: str, message: str, text: str, final: bool = True) -> None:
        self._request_json("PUT", f"/open-apis/im/v1/messages/{message}",
                           json={"msg_type": "text", "content": json.dumps({"text": text})})

    def send_file(self, chat: str, path: str, kind: str) -> None:
        file = Path(path)
        if file.stat().st_size > MAX_FILE:
            raise PlatformError(f"{file.name}: {file.stat().st_size / 2**20:.0f} MB, over the 30 MB Feishu takes")
        data = file.read_bytes()
        if kind == "photo":
            found = self._request_json("POST", "/open-apis/im/v1/images", data={"image_type": "message"},
                                       files={"image": (file.name, data, mimetypes.guess_type(file.name)[0] or "")})
            self._send(chat, "image", {"image_key": str(found.get("image_key") or "")})
            return
        found = self._request_json("POST", "/open-apis/im/v1/files", data={"file_type": "stream",
                                                                           "file_name": file.name},
                                   files={"file": (file.name, data, "application/octet-stream")})
        self._send(chat, "file", {"file_key": str(found.get("file_key") or "")})

    def close(self) -> None:
        super().close()
        self.client.close()
