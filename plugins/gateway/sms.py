"""SMS, through Twilio (hermes-agent's ``sms`` platform): Twilio POSTs each text to this gateway's webhook, the answers
go through its REST API. hermes-agent's variables: ``TWILIO_ACCOUNT_SID``, ``TWILIO_AUTH_TOKEN``,
``TWILIO_PHONE_NUMBER`` (the bot's, +15551234567), ``SMS_WEBHOOK_URL`` (the public address Twilio is given: its
signature covers it, so it is required, unless ``SMS_INSECURE_NO_SIGNATURE=true`` on a test bench),
``SMS_WEBHOOK_HOST``/``SMS_WEBHOOK_PORT`` (127.0.0.1, 8080: behind that address), ``SMS_ALLOWED_USERS`` (numbers,
+15551234567).

Each number is one conversation. Answers go as plain text (a text message shows no Markdown), in parts of 1600
characters; a picture sent by MMS is read. A text Twilio delivers twice is answered once."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
from typing import Any, Optional
from urllib.parse import parse_qsl

from plugins.gateway.hookspecs import Incoming, PlatformError, body_of
from plugins.gateway.listening import Listened, listen
from plugins.gateway.markup import to_styled

log = logging.getLogger("hermes.gateway")
API = "https://api.twilio.com"
NO_ANSWER = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'  # TwiML: the answer comes by the API


def twilio_signature(token: str, url: str, params: dict) -> str:
    """Twilio's ``X-Twilio-Signature``: the URL and the sorted form fields, HMAC-SHA1 with the auth token, base64."""
    signed = url + "".join(f"{key}{params[key]}" for key in sorted(params))
    return base64.b64encode(hmac.new(token.encode(), signed.encode(), hashlib.sha1).digest()).decode()


class Sms(Listened):
    name = "sms"
    most = 1600  # Twilio's longest message

    def __init__(self, sid: str, token: str, number: str, url: str = "", host: str = "127.0.0.1", port: int = 8080,
                 api: str = API, unsigned: bool = False):
        import httpx2 as httpx

        super().__init__()
        self.sid, self.token, self.number, self.url, self.unsigned = sid, token, number, url, unsigned
        self.host, self.port, self.api = host, port, f"{api.rstrip('/')}/2010-04-01/Accounts/{sid}"
        self.client = httpx.Client(timeout=30, auth=(sid, token))

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx2 as httpx

        try:
            answer = self.client.request(method, path if path.startswith("http") else self.api + path, **kwargs)
        except httpx.HTTPError as exc:
            raise PlatformError(f"sms: cannot reach Twilio ({exc or type(exc).__name__})") from None
        if answer.is_success:
            return body_of(answer) if path.endswith(".json") else answer.content
        body = body_of(answer)
        said = body.get("message") if isinstance(body, dict) else answer.reason_phrase
        if answer.status_code == 401:
            raise PlatformError(f"sms: Twilio refused TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN ({said})", lasting=True,
                                status=401)
        raise PlatformError(f"sms: Twilio: {said}", status=answer.status_code)

    # -- receiving
    def start(self) -> str:
        if not self.url and not self.unsigned:
            raise PlatformError("sms: SMS_WEBHOOK_URL is needed: the public address Twilio POSTs to, which its "
                                "signature covers (without the check anybody could text as anybody)", lasting=True)
        found = self._call("GET", ".json")
        self.server = listen("sms", self.host, self.port, self._request)
        return f"{self.number} ({found.get('friendly_name') or self.sid})"

    def _request(self, method: str, path: str, headers: Any, body: bytes) -> tuple:
        if method != "POST":
            return 405, {"error": "POST only"}
        form = dict(parse_qsl(body.decode(errors="replace"), keep_blank_values=True))
        if not self.unsigned and not hmac.compare_digest(str(headers.get("X-Twilio-Signature") or ""),
                                                         twilio_signature(self.token, self.url, form)):
            log.warning("sms: a POST without Twilio's signature was refused")
            return 403, NO_ANSWER, "application/xml"
        sender, sid = form.get("From", "").strip(), form.get("MessageSid", "")
        if sender and sender != self.number and self.first(sid):
            incoming = Incoming(chat=sender, user=sender, name=sender, text=form.get("Body", "").strip(),
                                message=sid)
            for n in range(int(form.get("NumMedia") or 0) if str(form.get("NumMedia") or "").isdigit() else 0):
                media = form.get(f"MediaUrl{n}", "")
                incoming.attach(form.get(f"MediaContentType{n}", ""), "", lambda media=media: self._call(
                    "GET", media))
            self.inbox.put(incoming)
        return 200, NO_ANSWER, "application/xml"

    # -- answers
    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        sent = self._call("POST", "/Messages.json", data={"From": self.number, "To": chat,
                                                           "Body": to_styled(text)[0] if final else text})
        return str((sent or {}).get("sid") or "") or None

    def send_file(self, chat: str, path: str, kind: str) -> None:
        raise PlatformError("files are not sent by text message")

    def close(self) -> None:
        super().close()
        self.client.close()
