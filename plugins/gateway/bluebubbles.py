"""iMessage through BlueBubbles (hermes-agent's ``bluebubbles`` platform): the BlueBubbles server on a Mac sends each
new message to this gateway's webhook, registered with it at the start (the password in the webhook's address, as
BlueBubbles sends no header of its own), and the answers go through its REST API. hermes-agent's variables:
``BLUEBUBBLES_SERVER_URL``, ``BLUEBUBBLES_PASSWORD``, ``BLUEBUBBLES_WEBHOOK_HOST``/``_PORT``/``_PATH`` (127.0.0.1,
8645, /bluebubbles-webhook: an address the server reaches), ``BLUEBUBBLES_ALLOWED_USERS`` (phone numbers, emails),
``BLUEBUBBLES_REQUIRE_MENTION`` (true: in a group, only a message that says "hermes" is answered; else every one),
``BLUEBUBBLES_HOME_CHANNEL``.

A chat is one conversation (its GUID: ``iMessage;-;+15551234567`` a direct one, ``iMessage;+;chat...`` a group); a
phone number or an email as a target is its direct chat. Answers go as plain text (a message shows no Markdown),
whole (iMessage edits no message here), in parts of 4000 characters; pictures and voice messages sent are read, the
files an answer names sent as attachments; the messages of the Mac's own account and tapbacks are not answered, a
message delivered twice once."""

from __future__ import annotations

import hmac
import json
import logging
import re
import uuid
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs, quote, urlsplit

from plugins.gateway.hookspecs import Incoming, PlatformError, body_of, said_by
from plugins.gateway.listening import Listened, listen
from plugins.gateway.markup import to_styled

log = logging.getLogger("hermes.gateway")
NAMED = re.compile(r"(?<![\w@])@?hermes\b[,:\-]?\s*", re.IGNORECASE)  # what names the bot in a group


def chat_of(target: str) -> str:
    """The chat GUID of a target: itself, or a phone number's or an email's direct iMessage chat."""
    return target if ";" in target else f"iMessage;-;{target}"


class BlueBubbles(Listened):
    name = "bluebubbles"
    most = 4000

    def __init__(self, server: str, password: str, host: str = "127.0.0.1", port: int = 8645,
                 path: str = "/bluebubbles-webhook", require_mention: bool = False):
        import httpx2 as httpx

        super().__init__()
        server = server.strip().rstrip("/")
        self.base = server if re.match(r"https?://", server, re.IGNORECASE) else f"http://{server}"
        self.password, self.host, self.port, self.path = password, host, port, "/" + path.strip("/")
        self.require_mention, self.private_api, self.hooked = require_mention, False, False
        self.client = httpx.Client(timeout=60)

    @property
    def webhook(self) -> str:
        """The address the server is told to post to, with the password (BlueBubbles sends no header)."""
        host = "localhost" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}{self.path}?password={quote(self.password, safe='')}"

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx2 as httpx

        try:
            answer = self.client.request(method, self.base + path, params={"password": self.password}, **kwargs)
        except httpx.HTTPError as exc:
            raise PlatformError(f"bluebubbles: cannot reach {self.base} ({exc or type(exc).__name__})") from None
        if answer.is_success:
            return answer
        said = said_by(answer)
        if answer.status_code == 401:
            raise PlatformError(f"bluebubbles: the server refused BLUEBUBBLES_PASSWORD ({said})", lasting=True,
                                status=401)
        raise PlatformError(f"bluebubbles: {said} ({answer.status_code})", status=answer.status_code)

    def _data(self, method: str, path: str, **kwargs: Any) -> Any:
        return (body_of(self._call(method, path, **kwargs)) or {}).get("data")

    # -- receiving
    def start(self) -> str:
        info = self._data("GET", "/api/v1/server/info") or {}
        self.private_api = bool(info.get("private_api"))
        self.server = listen("bluebubbles", self.host, self.port, self._request)
        hooks = self._data("GET", "/api/v1/webhook") or []
        if not any(isinstance(h, dict) and h.get("url") == self.webhook for h in hooks):  # (one left by a kill)
            self._call("POST", "/api/v1/webhook", json={"url": self.webhook, "events": ["new-message"]})
        self.hooked = True
        return f"{info.get('detected_icloud') or 'iMessage'} (BlueBubbles {info.get('server_version') or ''})".strip()

    def _request(self, method: str, path: str, headers: Any, body: bytes) -> tuple:
        where = urlsplit(path)
        if where.path != self.path:
            return 404, {"error": "not found"}
        if method != "POST":
            return 405, {"error": "POST only"}
        given = (parse_qs(where.query).get("password") or [str(headers.get("X-Password") or "")])[0]
        if not hmac.compare_digest(given.encode(), self.password.encode()):
            log.warning("bluebubbles: a POST without the server's password was refused")
            return 401, {"error": "unauthorized"}
        try:
            event = json.loads(body)
        except ValueError:
            return 400, {"error": "the body is no JSON"}
        if isinstance(event, dict) and event.get("type") == "new-message" and isinstance(event.get("data"), dict):
            try:
                self._message(event["data"])
            except Exception:  # noqa: BLE001 - one message that cannot be read never fails the others
                log.exception("bluebubbles: a message could not be read")
        return 200, {"ok": True}

    def _message(self, data: dict) -> None:
        chats = [c for c in data.get("chats") or [] if isinstance(c, dict)]
        chat = str(data.get("chatGuid") or (chats[0].get("guid") if chats else "") or "")
        user = str((data.get("handle") or {}).get("address") or "")
        guid = str(data.get("guid") or "")
        if data.get("isFromMe") or data.get("associatedMessageType") or not chat or not user or not self.first(guid):
            return  # the Mac's own account (the answers too), a tapback
        text, group = str(data.get("text") or "").replace("\ufffc", ""), ";+;" in chat  # (an attachment's mark)
        addressed = not group or not self.require_mention or bool(NAMED.search(text))
        if group and self.require_mention:
            text = NAMED.sub("", text, count=1)
        incoming = Incoming(chat=chat, user=user, name=user, text=" ".join(text.split()), addressed=addressed,
                            message=guid)
        for attachment in data.get("attachments") or []:
            if isinstance(attachment, dict) and attachment.get("guid"):
                incoming.attach(str(attachment.get("mimeType") or ""), str(attachment.get("transferName") or ""),
                                lambda a=attachment: self._call(
                                    "GET", f"/api/v1/attachment/{quote(str(a['guid']), safe='')}/download").content)
        self.inbox.put(incoming)

    # -- answers
    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        sent = self._data("POST", "/api/v1/message/text", json={
            "chatGuid": chat_of(chat), "tempGuid": str(uuid.uuid4()), "message": to_styled(text)[0] if final else text})
        return str((sent or {}).get("guid") or "") or None

    def send_file(self, chat: str, path: str, kind: str) -> None:
        file = Path(path)
        self._call("POST", "/api/v1/message/attachment", timeout=300, data={
            "chatGuid": chat_of(chat), "tempGuid": str(uuid.uuid4()), "name": file.name},
            files={"attachment": (file.name, file.read_bytes(), "application/octet-stream")})

    def typing(self, chat: str) -> None:
        if self.private_api:  # BlueBubbles shows typing through its Private API only
            try:
                self._call("POST", f"/api/v1/chat/{quote(chat_of(chat), safe='')}/typing")
            except PlatformError as exc:
                log.debug("bluebubbles: no typing shown: %s", exc)

    def close(self) -> None:
        super().close()
        try:  # the server would post to a gateway that is gone
            for hook in (self._data("GET", "/api/v1/webhook") or []) if self.hooked else []:
                if isinstance(hook, dict) and hook.get("url") == self.webhook and hook.get("id") is not None:
                    self._call("DELETE", f"/api/v1/webhook/{hook['id']}")
        except PlatformError as exc:
            log.warning("%s", exc)
        self.client.close()
