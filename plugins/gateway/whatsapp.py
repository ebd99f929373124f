"""WhatsApp, through Meta's Cloud API (a WhatsApp Business number; hermes-agent's ``whatsapp_cloud`` platform): Meta
POSTs each message to this gateway's webhook, the answers go through the Graph API. hermes-agent's variables:
``WHATSAPP_CLOUD_PHONE_NUMBER_ID``, ``WHATSAPP_CLOUD_ACCESS_TOKEN`` (a system user's), ``WHATSAPP_CLOUD_APP_SECRET``
(Meta signs every POST with it: required, but for a webhook on this machine), ``WHATSAPP_CLOUD_VERIFY_TOKEN`` (the
handshake's, chosen by you in Meta's settings), ``WHATSAPP_CLOUD_WEBHOOK_HOST``/``_PORT``/``_PATH`` (0.0.0.0, 8090,
/whatsapp/webhook: behind the public HTTPS address Meta is given), ``WHATSAPP_CLOUD_API_VERSION`` (v20.0),
``WHATSAPP_CLOUD_ALLOWED_USERS`` (numbers as WhatsApp writes them: 15551234567).

Each number is one conversation. Answers go with WhatsApp's own marks (*bold*, _italic_, ~struck~, monospace),
marked 👀 then ✅ or ❌; pictures and voice notes are read, files sent. No drafts: the Cloud API edits nothing.
Meta delivers a message again when the gateway did not answer its POST; a message is answered once."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs

from plugins.gateway.hookspecs import Incoming, PlatformError, body_of
from plugins.gateway.listening import Listened, listen
from plugins.gateway.markup import to_starred

log = logging.getLogger("hermes.gateway")
GRAPH = "https://graph.facebook.com"
REACTIONS = {"working": "👀", "done": "✅", "failed": "❌", "": ""}  # hermes-agent's; "": the mark taken away
KINDS = {"photo": "image", "audio": "audio", "document": "document"}
MAX_FILE = 20 * 2**20


class WhatsAppCloud(Listened):
    name = "whatsapp_cloud"
    most = 4096  # a text message's body

    def __init__(self, number_id: str, token: str, app_secret: str = "", verify_token: str = "",
                 host: str = "0.0.0.0", port: int = 8090, path: str = "/whatsapp/webhook", api: str = GRAPH,
                 version: str = "v20.0"):
        import httpx2 as httpx

        super().__init__()
        self.number_id, self.token, self.app_secret, self.verify_token = number_id, token, app_secret, verify_token
        self.host, self.port, self.path = host, port, "/" + path.strip("/")
        self.api = f"{api.rstrip('/')}/{version}"
        self.client = httpx.Client(timeout=30, headers={"Authorization": f"Bearer {token}"})

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx2 as httpx

        try:
            answer = self.client.request(method, path if path.startswith("http") else self.api + path, **kwargs)
        except httpx.HTTPError as exc:
            raise PlatformError(f"whatsapp_cloud: cannot reach the Graph API ({exc or type(exc).__name__})") from None
        body = body_of(answer)
        if answer.is_success:
            return body if body is not None else answer.content
        error = (body or {}).get("error") if isinstance(body, dict) else None
        said = (error or {}).get("message") if isinstance(error, dict) else answer.reason_phrase
        if answer.status_code == 401:
            raise PlatformError(f"whatsapp_cloud: the Graph API refused WHATSAPP_CLOUD_ACCESS_TOKEN ({said})",
                                lasting=True, status=401)
        if isinstance(error, dict) and error.get("code") == 131047:  # more than 24 hours since their last message
            said = "more than 24 hours since their last message: WhatsApp takes only template messages then"
        raise PlatformError(f"whatsapp_cloud: {said}", status=answer.status_code)

    # -- receiving
    def start(self) -> str:
        if not self.app_secret and self.host not in ("127.0.0.1", "localhost", "::1"):
            raise PlatformError("whatsapp_cloud: WHATSAPP_CLOUD_APP_SECRET is needed (Meta signs every message with "
                                "it; without it anybody could post messages as anybody)", lasting=True)
        found = self._call("GET", f"/{self.number_id}", params={"fields": "display_phone_number,verified_name"})
        self.server = listen("whatsapp_cloud", self.host, self.port, self._request)
        return f"{found.get('verified_name') or ''} {found.get('display_phone_number') or self.number_id}".strip()

    def _request(self, method: str, path: str, headers: Any, body: bytes) -> tuple:
        where, _, query = path.partition("?")
        if where != self.path:
            return 404, {"error": "not found"}
        if method == "GET":  # Meta's handshake when the webhook is set
            asked = {k: v[0] for k, v in parse_qs(query).items()}
            if asked.get("hub.mode") == "subscribe" and self.verify_token and hmac.compare_digest(
                    asked.get("hub.verify_token", ""), self.verify_token):
                return 200, asked.get("hub.challenge", "")
            return 403, {"error": "wrong verify token"}
        signature = "sha256=" + hmac.new(self.app_secret.encode(), body, hashlib.sha256).hexdigest()
        if self.app_secret and not hmac.compare_digest(str(headers.get("X-Hub-Signature-256") or ""), signature):
            log.warning("whatsapp_cloud: a POST without Meta's signature was refused")
            return 401, {"error": "invalid signature"}
        try:
            event = json.loads(body)
        except ValueError:
            return 400, {"error": "the body is no JSON"}
        for entry in event.get("entry") or [] if isinstance(event, dict) else []:
            for change in entry.get("changes") or []:
                value = change.get("value") or {}
                names = {c.get("wa_id"): (c.get("profile") or {}).get("name") for c in value.get("contacts") or []}
                for message in value.get("messages") or []:  # statuses (sent, read) are not read
                    try:
                        self._message(message, names)
                    except Exception:  # noqa: BLE001 - one message that cannot be read never fails the others
                        log.exception("whatsapp_cloud: a message could not be read")
        return 200, {"status": "ok"}

    def _message(self, message: dict, names: dict) -> None:
        wamid, sender = str(message.get("id") or ""), str(message.get("from") or "")
        if not sender or not self.first(wamid):
            return
        kind = str(message.get("type") or "")
        part = message.get(kind) if isinstance(message.get(kind), dict) else {}
        text = str(part.get("body") or part.get("caption") or "")  # a text's words, a picture's caption
        if kind == "interactive":  # a reply button pressed: its id
            text = str(((message.get("interactive") or {}).get("button_reply") or {}).get("id") or "")
        incoming = Incoming(chat=sender, user=sender, name=str(names.get(sender) or sender), text=text,
                            message=wamid)
        if kind in ("image", "audio", "sticker") and part.get("id"):
            incoming.attach(str(part.get("mime_type") or "").partition(";")[0], "voice.ogg" if kind == "audio"
                            else "", lambda: self._fetch(str(part["id"])))
        self.inbox.put(incoming)

    def _fetch(self, media: str) -> bytes:
        found = self._call("GET", f"/{media}")
        if int(found.get("file_size") or 0) > MAX_FILE:
            raise PlatformError(f"over {MAX_FILE // 2**20} MB")
        return self._call("GET", str(found.get("url")))

    # -- answers
    def _send(self, chat: str, kind: str, content: dict) -> Optional[str]:
        sent = self._call("POST", f"/{self.number_id}/messages", json={
            "messaging_product": "whatsapp", "recipient_type": "individual", "to": chat, "type": kind, kind: content})
        return str(((sent or {}).get("messages") or [{}])[0].get("id") or "") or None

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        return self._send(chat, "text", {"body": to_starred(text, r"\1 (\2)") if final else text,
                                         "preview_url": False})

    def react(self, chat: str, message: str, outcome: str) -> None:
        if outcome in REACTIONS:
            self._send(chat, "reaction", {"message_id": message, "emoji": REACTIONS[outcome]})

    def send_file(self, chat: str, path: str, kind: str) -> None:
        file = Path(path)
        if file.stat().st_size > MAX_FILE:
            raise PlatformError(f"{file.name}: {file.stat().st_size / 2**20:.0f} MB, over the 20 MB sent here")
        import mimetypes

        mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        uploaded = self._call("POST", f"/{self.number_id}/media", files={"file": (file.name, file.read_bytes(), mime)},
                              data={"messaging_product": "whatsapp", "type": mime})
        kind = KINDS.get(kind, "document")
        self._send(chat, kind, {"id": str(uploaded.get("id")), **({"filename": file.name} if kind == "document"
                                                                    else {})})

    def close(self) -> None:
        super().close()
        self.client.close()
