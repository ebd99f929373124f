"""LINE (hermes-agent's ``line`` platform): LINE POSTs each event to this gateway's webhook, signed with the channel
secret, and the answers go through the Messaging API: as the reply to the user's message while its reply token is
fresh (free), else pushed (counted against the channel's messages of the month). hermes-agent's variables:
``LINE_CHANNEL_ACCESS_TOKEN``, ``LINE_CHANNEL_SECRET`` (every POST's signature is checked with it: required),
``LINE_HOST``/``LINE_PORT`` (127.0.0.1, 8646; the path /line/webhook: behind the public HTTPS address that is the
channel's webhook URL), ``LINE_PUBLIC_URL`` (that address: the pictures and files an answer names are served from it,
as LINE takes them only by a public HTTPS address), ``LINE_ALLOWED_USERS`` (user ids, ``U...``),
``LINE_ALLOWED_GROUPS``/``LINE_ALLOWED_ROOMS`` (groups and rooms where anybody may talk, as hermes-agent's, and every
message is answered, not only one that mentions the bot),
``LINE_HOME_CHANNEL``.

A chat with a user is one conversation, a group or a room another, where the bot answers a message that mentions it.
Answers go as plain text (LINE shows no Markdown), whole (LINE edits no message), in parts of 5000 characters; a
picture or a voice message sent is read, a sticker or a place said in words; a picture an answer names is sent as
one, another file as its link (LINE bots send no files), each served for a day at an address nobody can guess, and
neither without ``LINE_PUBLIC_URL``. LINE delivers an event again when it was not taken in time: a message is answered
once."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import mimetypes
import secrets
import time
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote

from plugins.gateway.hookspecs import Incoming, PlatformError, body_of
from plugins.gateway.listening import Listened, listen
from plugins.gateway.markup import to_styled

log = logging.getLogger("hermes.gateway")
API, DATA = "https://api.line.me", "https://api-data.line.me"  # the Messaging API; what users sent, by id
REPLY_FRESH = 50.0  # seconds a reply token is used for (LINE takes one for about a minute, once)
LOADING = 20  # seconds of the "..." LINE shows in a chat with a user, shown again while the turn runs
SERVED = 86400.0  # seconds a file sent stays at its address (LINE fetches it when the chat shows it)
PICTURE = {".png", ".jpg", ".jpeg"}  # what LINE shows as a picture, at most 10 MB


def signature(secret: str, body: bytes) -> str:
    """LINE's ``X-Line-Signature``: the body's HMAC-SHA256 with the channel secret, base64."""
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


class Line(Listened):
    name = "line"
    most = 5000  # LINE's longest text message

    def __init__(self, token: str, secret: str, host: str = "127.0.0.1", port: int = 8646, api: str = API,
                 data: str = DATA, everything: frozenset = frozenset(), public: str = ""):
        import httpx2 as httpx

        super().__init__()
        self.secret, self.host, self.port, self.api, self.data = secret, host, port, api.rstrip("/"), data.rstrip("/")
        self.everything, self.public = everything, public.rstrip("/")  # groups and rooms answered without a mention
        self.client = httpx.Client(timeout=30, headers={"Authorization": f"Bearer {token}"})
        self.replies: dict = {}  # chat -> (the reply token of its last message, until when it is used)
        self.shown: dict = {}  # chat -> when its loading "..." was last asked for
        self.served: dict = {}  # the secret part of a file's address -> (its path, until when it is served)
        self.bot_id = ""

    def _call(self, method: str, url: str, **kwargs: Any) -> Any:
        import httpx2 as httpx

        try:
            answer = self.client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise PlatformError(f"line: cannot reach {url.partition('/v2/')[0]} ({exc or type(exc).__name__})") \
                from None
        if answer.is_success:
            return answer
        body = body_of(answer)
        said = str(body.get("message") or "") if isinstance(body, dict) else answer.reason_phrase
        details = body.get("details") if isinstance(body, dict) and isinstance(body.get("details"), list) else []
        said += "".join(f"; {d.get('property', '')}: {d.get('message', '')}" for d in details if isinstance(d, dict))
        if answer.status_code == 401:
            raise PlatformError(f"line: LINE refused LINE_CHANNEL_ACCESS_TOKEN ({said})", lasting=True, status=401)
        raise PlatformError(f"line: {said or answer.reason_phrase} ({answer.status_code})", status=answer.status_code)

    # -- receiving
    def start(self) -> str:
        info = body_of(self._call("GET", f"{self.api}/v2/bot/info")) or {}
        self.bot_id = str(info.get("userId") or "")
        self.server = listen("line", self.host, self.port, self._request)
        return f"{info.get('displayName') or 'the LINE bot'} ({info.get('basicId') or self.bot_id})"

    def _request(self, method: str, path: str, headers: Any, body: bytes) -> tuple:
        if path.startswith("/line/media/") and method == "GET":
            return self._served(path.split("/")[3])  # /line/media/KEY/NAME
        if path.partition("?")[0] != "/line/webhook":
            return 404, {"error": "not found"}
        if method != "POST":
            return 405, {"error": "POST only"}
        if not hmac.compare_digest(str(headers.get("X-Line-Signature") or "").encode(),
                                   signature(self.secret, body).encode()):
            log.warning("line: a POST without LINE's signature was refused")
            return 401, {"error": "invalid signature"}
        try:
            events = json.loads(body).get("events")
        except (ValueError, AttributeError):
            return 400, {"error": "the body is no JSON object"}
        for event in events if isinstance(events, list) else []:  # none: the console's "Verify"
            if isinstance(event, dict) and event.get("type") == "message":
                try:
                    self._message(event)
                except Exception:  # noqa: BLE001 - one message that cannot be read never fails the others
                    log.exception("line: a message could not be read")
        return 200, {}

    def _message(self, event: dict) -> None:
        message, source = event.get("message") or {}, event.get("source") or {}
        kind, user = source.get("type"), str(source.get("userId") or "")
        chat = str(source.get({"group": "groupId", "room": "roomId"}.get(kind, "userId")) or "")
        message_id = str(message.get("id") or "")
        if not chat or not user or user == self.bot_id or not self.first(message_id):
            return
        text, mentioned = str(message.get("text") or ""), False
        mentions = (message.get("mention") or {}).get("mentionees") or []
        for mention in sorted((m for m in mentions if isinstance(m, dict)), key=lambda m: -int(m.get("index") or 0)):
            if mention.get("isSelf") or mention.get("userId") == self.bot_id:  # the bot's own "@name" left out
                mentioned, at = True, int(mention.get("index") or 0)
                text = text[:at] + text[at + int(mention.get("length") or 0):]
        what = message.get("type")
        if what == "sticker":
            text = "[a sticker" + (f": {', '.join(map(str, message.get('keywords') or []))}]"
                                   if message.get("keywords") else "]")
        elif what == "location":
            text = (f"[a place: {message.get('title') or ''} {message.get('address') or ''} "
                    f"({message.get('latitude')}, {message.get('longitude')})]")
        incoming = Incoming(chat=chat, user=user, name=user, text=" ".join(text.split()), message=message_id,
                            addressed=kind == "user" or mentioned or chat in self.everything,
                            admitted=chat in self.everything)
        if what in ("image", "audio"):
            incoming.attach(f"{what}/", "voice.m4a" if what == "audio" else "", lambda: self._call(
                "GET", f"{self.data}/v2/bot/message/{message_id}/content").content)
        elif what in ("video", "file"):
            named = f": {message['fileName']}" if message.get("fileName") else ""
            incoming.missed = f"[the user sent a {what}{named}, which is not read here]"
        if incoming.addressed and event.get("replyToken"):
            self.replies[chat] = (str(event["replyToken"]), time.monotonic() + REPLY_FRESH)
        self.inbox.put(incoming)

    def _served(self, key: str) -> tuple:
        path, until = self.served.get(key, ("", 0.0))
        if time.monotonic() > until:
            self.served.pop(key, None)
            return 404, {"error": "not found"}
        try:
            return 200, Path(path).read_bytes(), mimetypes.guess_type(path)[0] or "application/octet-stream"
        except OSError:
            return 404, {"error": "gone"}

    # -- answers
    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        message = {"type": "text", "text": to_styled(text)[0] if final else text}
        if buttons:  # LINE's quick replies: a tap sends the command as the user's message
            message["quickReply"] = {"items": [{"type": "action", "action": {
                "type": "message", "label": label[:20], "text": command}} for label, command in buttons[:13]]}
        return self._deliver(chat, [message])

    def _deliver(self, chat: str, messages: list) -> Optional[str]:
        """``messages`` as the reply to the chat's last message while its token is fresh, else pushed."""
        token, until = self.replies.pop(chat, ("", 0.0))
        sent = None
        if token and time.monotonic() < until:
            try:
                sent = self._call("POST", f"{self.api}/v2/bot/message/reply",
                                  json={"replyToken": token, "messages": messages})
            except PlatformError as exc:
                if exc.status != 400:  # 400: the token was taken or is stale: pushed instead
                    raise
        if sent is None:
            sent = self._call("POST", f"{self.api}/v2/bot/message/push", json={"to": chat, "messages": messages})
        found = (body_of(sent) or {}).get("sentMessages") or [{}]
        return str(found[0].get("id") or "") or None

    def send_file(self, chat: str, path: str, kind: str) -> None:
        file = Path(path)
        if not self.public:
            raise PlatformError("LINE takes pictures and files only from a public HTTPS address: set LINE_PUBLIC_URL "
                                "(this machine's port 8646 behind it)")
        if self.server is None:  # `hermes send`, a cron job's process: the gateway's listener would not know the file
            raise PlatformError("a file goes to LINE from the running gateway only (it serves it): not sent")
        key = secrets.token_urlsafe(18)
        self.served[key] = (str(file), time.monotonic() + SERVED)
        url = f"{self.public}/line/media/{key}/{quote(file.name)}"
        picture = file.suffix.lower() in PICTURE and file.stat().st_size <= 10 * 2**20
        self._deliver(chat, [{"type": "image", "originalContentUrl": url, "previewImageUrl": url} if picture
                             else {"type": "text", "text": f"{file.name}: {url}"}])

    def typing(self, chat: str) -> None:
        """LINE's loading "..." (in a chat with a user only: ids ``U...``), asked for again when it runs out."""
        now = time.monotonic()
        if not chat.startswith("U") or now - self.shown.get(chat, -LOADING) < LOADING - 5:
            return
        self.shown[chat] = now
        try:
            self._call("POST", f"{self.api}/v2/bot/chat/loading/start",
                       json={"chatId": chat, "loadingSeconds": LOADING})
        except PlatformError as exc:
            log.debug("line: no loading shown: %s", exc)

    def close(self) -> None:
        super().close()
        self.client.close()
