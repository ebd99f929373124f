"""Telegram, through its Bot API over HTTPS (httpx2, the SDKs' HTTP client): long polling
(``getUpdates``), so no public address or webhook is needed. ``TELEGRAM_BOT_TOKEN`` (from @BotFather) is hermes-agent's
variable; ``telegram.extra.base_url`` its key for another Bot API server (a local telegram-bot-api, or a test's).
Text, pictures (a photo, or an image sent as a file, with its caption) and voice notes (heard as
:mod:`plugins.tts.listen` says); another file gets a one-line answer saying so. Answers are sent as Telegram's
HTML (:mod:`plugins.gateway.markup`)."""

from __future__ import annotations

import re
import time
from typing import Any, Optional

from plugins.gateway.hookspecs import Incoming, PlatformError, channel_of, in_thread

POLL_SECONDS = 25  # a getUpdates call waits this long for a message (Telegram's long polling)
MAX_FILE = 20 * 2**20  # the largest file the Bot API lets a bot download
MAX_UPLOAD = 50 * 2**20  # and upload
REACTIONS = {"working": "👀", "done": "👍", "failed": "👎"}  # hermes-agent's (Telegram takes only its own set)


class Telegram:
    name = "telegram"
    most = 4096

    def __init__(self, token: str, base_url: str, poll_seconds: float = POLL_SECONDS, allowed_chats: frozenset = ()):
        import httpx2 as httpx  # the SDKs' HTTP client (openai and anthropic depend on it)

        self.token, self.poll_seconds = token, poll_seconds
        self.url = f"{base_url.rstrip('/')}/bot{token}/"
        self.files = f"{base_url.rstrip('/')}/file/bot{token}/"
        self.client = httpx.Client(timeout=httpx.Timeout(poll_seconds + 15, connect=15))
        self.offset = 0  # the next update wanted (kept by the gateway): those before it are confirmed and forgotten
        self.me: dict = {}
        self.allowed_chats = set(allowed_chats)  # the groups it answers in (empty: any)

    def _call(self, method: str, **params: Any) -> Any:
        import httpx2 as httpx  # the SDKs' HTTP client (openai and anthropic depend on it)

        for _ in range(3):
            try:
                answer = self.client.post(self.url + method, json=params)
                body = answer.json()
            except httpx.HTTPError as exc:  # the token is in the URL: never in what is said
                said = str(exc).replace(self.token, "<token>") or type(exc).__name__
                raise PlatformError(f"telegram: {method}: cannot reach the Bot API ({said})") from None
            except ValueError:
                raise PlatformError(f"telegram: {method}: the Bot API answered {answer.status_code}, not JSON") \
                    from None
            if isinstance(body, dict) and body.get("ok"):
                return body.get("result")
            body = body if isinstance(body, dict) else {}
            wait = (body.get("parameters") or {}).get("retry_after")
            if answer.status_code == 429 and isinstance(wait, (int, float)) and wait <= 60:
                time.sleep(wait)  # Telegram's flood control says how long
                continue
            said = str(body.get("description") or answer.reason_phrase)
            if answer.status_code in (401, 404) and method == "getMe":
                raise PlatformError("telegram: the Bot API refused TELEGRAM_BOT_TOKEN ({}): check it with "
                                    "@BotFather".format(said), lasting=True)
            if answer.status_code == 409:
                raise PlatformError("telegram: another program takes this bot's messages (a second gateway, or a "
                                    f"webhook set for it): {said}", lasting=True)
            raise PlatformError(f"telegram: {method}: {answer.status_code} {said}", status=answer.status_code)
        raise PlatformError(f"telegram: {method}: flood control still refuses after three waits")

    def start(self) -> str:
        self.me = self._call("getMe") or {}
        return "@" + str(self.me.get("username") or self.me.get("id"))

    def receive(self, wait: "float | None" = None) -> list:
        """The next messages, waiting ``wait`` seconds at most (default: the long poll's)."""
        updates = self._call("getUpdates", offset=self.offset, timeout=int(self.poll_seconds if wait is None else wait),
                             allowed_updates=["message", "callback_query"]) or []
        found = []
        for update in updates:
            self.offset = max(self.offset, int(update.get("update_id", 0)) + 1)
            message, pressed = update.get("message"), update.get("callback_query")
            if isinstance(message, dict) and isinstance(message.get("chat"), dict):
                found.append(self._incoming(message))
            elif isinstance(pressed, dict) and isinstance((pressed.get("message") or {}).get("chat"), dict):
                found.append(self._pressed(pressed))
        return found

    def _pressed(self, pressed: dict) -> Incoming:
        """A button of :meth:`send`'s pressed: its command, as if typed; its buttons go (one answer per question)."""
        question, sender = pressed["message"], pressed.get("from") or {}
        try:
            self._call("answerCallbackQuery", callback_query_id=pressed.get("id"), text=str(pressed.get("data"))[:200])
            self._call("editMessageReplyMarkup", chat_id=question["chat"]["id"], message_id=question.get("message_id"),
                       reply_markup={"inline_keyboard": []})
        except PlatformError:  # the command counts all the same
            pass
        return Incoming(chat=self._chat(question), user=str(sender.get("id", "")),
                        name=str(sender.get("username") or sender.get("id", "")), text=str(pressed.get("data") or ""))

    def _incoming(self, message: dict) -> Incoming:
        sender, chat = message.get("from") or {}, message["chat"]
        text = str(message.get("text") or message.get("caption") or "")
        mine = str(self.me.get("username") or "")
        answered = ((message.get("reply_to_message") or {}).get("from") or {}).get("id") == self.me.get("id")
        named = bool(mine) and f"@{mine.lower()}" in text.lower()
        if named:  # "@hermes_bot what is..." and "/new@hermes_bot": the name is not part of the message
            text = " ".join(re.sub(rf"@{re.escape(mine)}\b", " ", text, flags=re.IGNORECASE).split())
        private = chat.get("type") == "private"
        incoming = Incoming(chat=self._chat(message), user=str(sender.get("id", "")),
                            name=str(sender.get("username") or sender.get("first_name") or sender.get("id", "")),
                            text=text, addressed=private or (named or answered) and (
                                not self.allowed_chats or str(chat.get("id")) in self.allowed_chats),
                            message=str(message.get("message_id") or ""))
        document = message.get("document") if isinstance(message.get("document"), dict) else {}
        photo = message.get("photo")[-1] if isinstance(message.get("photo"), list) and message["photo"] else \
            document if str(document.get("mime_type", "")).startswith("image/") else None  # the largest size
        voice = next((message[k] for k in ("voice", "audio") if isinstance(message.get(k), dict)), None)
        if incoming.addressed and isinstance(photo, dict):
            incoming.attach("image/", str(photo.get("file_name") or "a picture"), lambda: self._download(photo))
        elif incoming.addressed and voice is not None:
            incoming.attach("audio/", str(voice.get("file_name") or ""), lambda: self._download(voice))
        return incoming

    @staticmethod
    def _chat(message: dict) -> str:
        """A message's chat: a forum group's topic is one of its own, ``CHAT/TOPIC`` (its answers go there too)."""
        chat = str(message["chat"].get("id"))
        return in_thread(chat, str(message["message_thread_id"]) if message.get("is_topic_message") else "")

    @staticmethod
    def _to(chat: str) -> dict:
        """The parameters that send to a chat (and its topic)."""
        chat, topic = channel_of(chat)
        return {"chat_id": chat, **({"message_thread_id": int(topic)} if topic else {})}

    def _download(self, file: dict) -> bytes:
        import httpx2 as httpx

        if int(file.get("file_size") or 0) > MAX_FILE:
            raise PlatformError(f"{int(file['file_size']) / 2**20:.0f} MB, over the Bot API's 20 MB")
        where = (self._call("getFile", file_id=file.get("file_id")) or {}).get("file_path")
        try:
            return self.client.get(self.files + str(where)).raise_for_status().content
        except httpx.HTTPError as exc:
            raise PlatformError(str(exc).replace(self.token, "<token>") or type(exc).__name__) from None

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        """``text`` (the model's Markdown) as Telegram's HTML; as it is when Telegram refuses that, or for a draft.
        ``buttons`` (label, command) under it: a press comes back as the command, sent by whoever pressed."""
        keyboard = {"reply_markup": {"inline_keyboard": [[{"text": label, "callback_data": command[:64]}
                                                          for label, command in buttons]]}} if buttons else {}
        sent = self._marked("sendMessage", {**self._to(chat), "text": text, **keyboard,
                                            "link_preview_options": {"is_disabled": True}}, final)
        return str(sent.get("message_id")) if isinstance(sent, dict) else None

    def edit(self, chat: str, message: str, text: str, final: bool = True) -> None:
        try:
            self._marked("editMessageText", {"chat_id": channel_of(chat)[0], "message_id": int(message),
                                             "text": text, "link_preview_options": {"is_disabled": True}}, final)
        except PlatformError as exc:
            if "message is not modified" not in str(exc):  # the same words again: nothing to do
                raise

    def _marked(self, method: str, params: dict, final: bool) -> Any:
        from plugins.gateway.markup import to_html

        if not final:
            return self._call(method, **params)
        try:
            return self._call(method, **dict(params, text=to_html(params["text"]), parse_mode="HTML"))
        except PlatformError as exc:
            if exc.status != 400 or "message is not modified" in str(exc):  # 400: markup it cannot parse, or too long
                raise
            return self._call(method, **params)

    def send_file(self, chat: str, path: str, kind: str) -> None:
        import httpx2 as httpx

        from pathlib import Path

        file = Path(path)
        if file.stat().st_size > MAX_UPLOAD:
            raise PlatformError(f"{file.name}: {file.stat().st_size / 2**20:.0f} MB, over the Bot API's 50 MB")
        method, field = {"photo": ("sendPhoto", "photo"), "audio": (
            ("sendVoice", "voice") if file.suffix.lower() in (".ogg", ".opus", ".oga") else ("sendAudio", "audio"))
                         }.get(kind, ("sendDocument", "document"))
        try:
            answer = self.client.post(self.url + method, data=self._to(chat),
                                      files={field: (file.name, file.read_bytes())})
            body = answer.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise PlatformError(f"telegram: {method}: " + (str(exc).replace(self.token, "<token>") or
                                                            type(exc).__name__)) from None
        if not (isinstance(body, dict) and body.get("ok")):
            said = body.get("description") if isinstance(body, dict) else answer.reason_phrase
            raise PlatformError(f"telegram: {method}: {answer.status_code} {said}", status=answer.status_code)

    def react(self, chat: str, message: str, outcome: str) -> None:
        emoji = REACTIONS.get(outcome)
        self._call("setMessageReaction", chat_id=channel_of(chat)[0], message_id=int(message),
                   reaction=[{"type": "emoji", "emoji": emoji}] if emoji else [])  # it replaces the one before

    def typing(self, chat: str) -> None:
        try:
            self._call("sendChatAction", **self._to(chat), action="typing")
        except PlatformError:
            pass

    def close(self) -> None:
        self.client.close()
