"""A loopback Telegram Bot API server for the gateway's tests: the methods the gateway calls (getMe, getUpdates with
long polling and confirmation by offset, sendMessage, sendChatAction), in the Bot API's own JSON, each call recorded.
Standard library only, so the gateway's real HTTP client talks to it over a real socket.

    with BotAPI() as api:                       # api.base_url goes in telegram.extra.base_url, api.token in
        api.say("hello", user=42)               # TELEGRAM_BOT_TOKEN
        api.wait_sent(1)                        # -> [(chat_id, text)]
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.asgiserver import wait_sent

BOT = {"id": 999, "is_bot": True, "first_name": "Hermes", "username": "hermes_test_bot"}


TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "pre", "a", "blockquote", "tg-spoiler",
        "span"}


def unparsable(text: str) -> str:
    """Why Telegram would refuse ``text`` as HTML ("" when it would not): a tag it does not know, or one not closed."""
    from html.parser import HTMLParser

    why, stack = [], []

    class Check(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag not in TAGS:
                why.append(f"unsupported start tag \"{tag}\"")
            stack.append(tag)

        def handle_endtag(self, tag):
            if not stack or stack.pop() != tag:
                why.append(f"unexpected end tag \"{tag}\"")

    Check(convert_charrefs=True).feed(text)
    return (why or [f"can't find end tag corresponding to start tag \"{stack[-1]}\""] if stack else why or [""])[0]


def form(content_type: str, raw: bytes) -> dict:
    """A multipart/form-data body as ``{field: value}``, a file as ``{"filename": ..., "data": bytes}``."""
    from email.parser import BytesParser

    message = BytesParser().parsebytes(f"content-type: {content_type}\r\n\r\n".encode() + raw)
    found = {}
    for part in message.get_payload() if message.is_multipart() else []:
        name, data = part.get_param("name", header="content-disposition"), part.get_payload(decode=True) or b""
        found[name] = {"filename": part.get_filename(), "data": data} if part.get_filename() else data.decode()
    return found


def shown(text: str) -> str:
    """An HTML message as its reader sees it: without tags, entities as the characters."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", text))


class BotAPI:
    def __init__(self, token: str = "999:test-token"):
        self.token, self.updates, self.calls, self.failures = token, [], [], {}
        self.files: dict = {}  # file_id -> bytes, for getFile and the download
        self.messages: list = []  # each message sent: {chat_id, message_id, text, parse_mode}, as edited since
        self.reactions: dict = {}  # message id -> the bot's reaction emoji on it
        self.next_id, self.message_id = 100, 0
        self.changed = threading.Condition()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # a file's download: /file/bot<token>/<file_path>
                _, _, rest = self.path.partition("/file/bot")
                token, _, path = rest.partition("/")
                data = owner.files.get(path.rpartition("/")[2]) if token == owner.token else None
                self.send_response(200 if data is not None else 404)
                self.send_header("content-length", str(len(data or b"")))
                self.end_headers()
                self.wfile.write(data or b"")

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                _, _, rest = self.path.partition("/bot")
                token, _, method = rest.partition("/")
                kind = self.headers.get("content-type", "")
                params = form(kind, body) if kind.startswith("multipart/") else json.loads(body or b"{}")
                status, answer = owner.answer(token, method, params)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the gateway stopped while it waited
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "BotAPI":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- what a user does
    def say(self, text: str = "", user: int = 42, chat: int = 0, chat_type: str = "private", username: str = "alice",
            **message) -> int:
        """A message from ``user`` in ``chat`` (default: their private chat); its message_id."""
        with self.changed:
            self.next_id += 1
            self.message_id += 1
            chat_id = chat or user
            self.updates.append({"update_id": self.next_id, "message": {
                "message_id": self.message_id, "date": int(time.time()), "text": text, **message,
                "from": {"id": user, "is_bot": False, "first_name": username.title(), "username": username},
                "chat": {"id": chat_id, "type": chat_type,
                         **({"username": username} if chat_type == "private" else {"title": "a group"})}}})
            if not text:
                del self.updates[-1]["message"]["text"]
            self.changed.notify_all()
            return self.message_id

    def press(self, data: str, user: int = 42, username: str = "alice") -> int:
        """The user presses the button of ``data`` under the last message showing it; its update_id."""
        with self.changed:
            shown = next(m for m in reversed(self.messages) if data in m.get("buttons", []))
            self.next_id += 1
            self.updates.append({"update_id": self.next_id, "callback_query": {
                "id": f"cb{self.next_id}", "data": data, "chat_instance": "x",
                "from": {"id": user, "is_bot": False, "first_name": username.title(), "username": username},
                "message": {"message_id": shown["message_id"], "date": int(time.time()), "text": shown["text"],
                            "chat": {"id": int(shown["chat_id"]), "type": "private"},
                            **({"message_thread_id": shown["topic"], "is_topic_message": True} if shown["topic"]
                               else {})}}})
            self.changed.notify_all()
            return self.next_id

    def buttons(self) -> list:
        """The buttons each message shows now."""
        with self.changed:
            return [m.get("buttons", []) for m in self.messages]

    def picture(self, data: bytes, caption: str = "", **kw) -> int:
        """A photo from the user (Telegram's sizes: a thumbnail, then the picture), with ``caption``."""
        big, small = f"file-{len(self.files) + 1}", f"thumb-{len(self.files) + 1}"
        self.files.update({big: data, small: data[:10]})
        sizes = [{"file_id": small, "width": 90, "height": 90}, {"file_id": big, "width": 800, "height": 600,
                                                                 "file_size": len(data)}]
        return self.say("", photo=sizes, **({"caption": caption} if caption else {}), **kw)

    def fail(self, method: str, status: int, description: str, times: int = 1, **parameters) -> None:
        """The next ``times`` calls of ``method`` fail so."""
        self.failures[method] = [status, description, parameters, times]

    # -- what the test reads
    def sent(self, chat=None) -> list:
        """``(chat_id, text)`` of each message sent, as a user reads it now (edited, an HTML one without its tags)."""
        return [(chat_id, shown(text) if mode == "HTML" else text) for chat_id, text, mode in self.sent_raw(chat)]

    def sent_raw(self, chat=None) -> list:
        """``(chat_id, text, parse_mode)`` of each message Telegram took, as it is now (after its edits)."""
        with self.changed:
            return [(m["chat_id"], m["text"], m.get("parse_mode")) for m in self.messages
                    if chat is None or str(m["chat_id"]) == str(chat)]

    def wait_sent(self, count: int, timeout: float = 30, chat=None) -> list:
        """The messages once there are ``count`` of them and none is a draft still being written."""
        return wait_sent(self.changed, lambda: self.sent(chat), count, timeout)

    def sent_files(self) -> list:
        """``(chat_id, method, file name, bytes)`` of each file sent."""
        return [(c["chat_id"], m, f["filename"], f["data"]) for m, c, ok in list(self.calls) if ok
                for f in c.values() if isinstance(f, dict) and "filename" in f]

    def pending(self) -> list:
        """The updates not confirmed yet."""
        with self.changed:
            return list(self.updates)

    # -- the server's side
    def answer(self, token: str, method: str, params: dict):
        status, body = self._answer(token, method, params)
        with self.changed:
            self.calls.append((method, params, status == 200))
            self.changed.notify_all()
        return status, body

    def _answer(self, token: str, method: str, params: dict):
        with self.changed:
            failure = self.failures.get(method)
            if failure and failure[3] > 0:
                failure[3] -= 1
                return failure[0], {"ok": False, "error_code": failure[0], "description": failure[1],
                                    **({"parameters": failure[2]} if failure[2] else {})}
        if token != self.token:
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        if method == "getMe":
            return 200, {"ok": True, "result": BOT}
        if method == "getUpdates":
            return 200, {"ok": True, "result": self._updates(int(params.get("offset") or 0),
                                                             min(float(params.get("timeout") or 0), 0.5))}
        if method == "sendMessage":
            text = params.get("text") or ""
            if params.get("parse_mode") == "HTML" and (why := unparsable(text)):
                return 400, {"ok": False, "error_code": 400, "description": f"Bad Request: can't parse entities: {why}"}
            if len(shown(text) if params.get("parse_mode") == "HTML" else text) > 4096:
                return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message is too long"}
            with self.changed:
                self.message_id += 1
                self.messages.append({"chat_id": params.get("chat_id"), "message_id": self.message_id,
                                      "text": text, "parse_mode": params.get("parse_mode"),
                                      "topic": params.get("message_thread_id"),
                                      "buttons": [b["callback_data"] for row in (params.get("reply_markup") or {})
                                                  .get("inline_keyboard", []) for b in row]})
                return 200, {"ok": True, "result": {"message_id": self.message_id, "date": int(time.time()),
                                                    "chat": {"id": params.get("chat_id")}, "text": params.get("text"),
                                                    "from": BOT}}
        if method == "editMessageText":
            text = params.get("text") or ""
            if params.get("parse_mode") == "HTML" and (why := unparsable(text)):
                return 400, {"ok": False, "error_code": 400, "description": f"Bad Request: can't parse entities: {why}"}
            with self.changed:
                found = next((m for m in self.messages if m["message_id"] == params.get("message_id")
                              and str(m["chat_id"]) == str(params.get("chat_id"))), None)
                if found is None:
                    return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message to edit not found"}
                if (found["text"], found["parse_mode"]) == (text, params.get("parse_mode")):
                    return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message is not "
                                 "modified: specified new message content and reply markup are exactly the same"}
                found.update(text=text, parse_mode=params.get("parse_mode"), edits=found.get("edits", 0) + 1)
                return 200, {"ok": True, "result": {"message_id": found["message_id"], "text": text}}
        if method == "getFile":
            file_id = str(params.get("file_id"))
            if file_id not in self.files:
                return 400, {"ok": False, "error_code": 400, "description": "Bad Request: invalid file_id"}
            return 200, {"ok": True, "result": {"file_id": file_id, "file_size": len(self.files[file_id]),
                                                "file_path": f"photos/{file_id}"}}
        if method in ("sendPhoto", "sendAudio", "sendVoice", "sendDocument"):
            return 200, {"ok": True, "result": {"message_id": 1, "date": int(time.time()), "chat": {
                "id": params.get("chat_id")}}}
        if method == "answerCallbackQuery":
            return 200, {"ok": True, "result": True}
        if method == "editMessageReplyMarkup":
            with self.changed:
                for m in self.messages:
                    if m["message_id"] == params.get("message_id"):
                        m["buttons"] = [b["callback_data"] for row in (params.get("reply_markup") or {})
                                        .get("inline_keyboard", []) for b in row]
            return 200, {"ok": True, "result": True}
        if method == "setMessageReaction":
            emoji = [r.get("emoji") for r in params.get("reaction") or []]
            if not set(emoji) <= {"👀", "👍", "👎", "❤", "🔥", "🎉", "🤔", "👌"}:  # a few of the emoji Telegram takes
                return 400, {"ok": False, "error_code": 400, "description": "Bad Request: REACTION_INVALID"}
            with self.changed:
                self.reactions[params.get("message_id")] = emoji
            return 200, {"ok": True, "result": True}
        if method == "sendChatAction":
            return 200, {"ok": True, "result": True}
        return 404, {"ok": False, "error_code": 404, "description": "Not Found"}

    def _updates(self, offset: int, wait: float) -> list:
        deadline = time.monotonic() + wait
        with self.changed:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]  # confirmed: forgotten
            while not self.updates and time.monotonic() < deadline:
                self.changed.wait(deadline - time.monotonic())
            return list(self.updates)
