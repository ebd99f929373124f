"""Slack, in Socket Mode: a websocket (websocket-client, ``pip install 'hermes-kernel[slack]'``) brings the events, so
no public address is needed; its Web API (httpx2) takes the answers. hermes-agent's variables: ``SLACK_BOT_TOKEN``
(``xoxb-``), ``SLACK_APP_TOKEN`` (``xapp-``, with ``connections:write``), ``SLACK_ALLOWED_USERS``. The app subscribes
to ``message.im`` and ``app_mention`` (and ``message.channels`` for ``slack.free_response_channels``). A direct
message is always read; in a channel, one that mentions the bot (``slack.require_mention``, true) or any in
``slack.free_response_channels``, and only in ``slack.allowed_channels`` when it lists any; there the answer goes in a
thread under the message (``slack.reply_in_thread``, as hermes-agent does), each thread a conversation of its own,
whose later messages need no mention (its chat is ``CHANNEL/THREAD``). The model's Markdown is sent as Slack's
mrkdwn; a picture is fetched with the bot's token, a file uploaded (``files:write``). What is sent in the last 50
conversations while the gateway is stopped is fetched at its next start and answered (``im:history``,
``channels:history``)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Optional

from plugins.gateway.hookspecs import Incoming, PlatformError, channel_of, earlier, in_thread
from plugins.gateway.markup import to_starred
from plugins.gateway.socketed import Socketed

log = logging.getLogger("hermes.gateway")
API = "https://slack.com/api"
REACTIONS = {"working": "eyes", "done": "white_check_mark", "failed": "x"}  # hermes-agent's, by Slack's names
MAX_FILE = 50 * 2**20  # bytes uploaded


def to_mrkdwn(text: str) -> str:
    """The model's Markdown as Slack shows it (:func:`markup.to_starred`), a link as <url|label>."""
    return to_starred(text, r"<\2|\1>")


class Slack(Socketed):
    name = "slack"
    most = 3900  # Slack's advice for one message's text (it takes more, and cuts it)

    def __init__(self, bot_token: str, app_token: str, api: str = API, require_mention: bool = True,
                 free: frozenset = (), allowed: frozenset = (), in_threads: bool = True, trusted: "set | None" = None):
        import httpx2 as httpx  # the SDKs' HTTP client (openai and anthropic depend on it)

        super().__init__()
        self.tokens, self.api = (bot_token, app_token), api.rstrip("/")
        self.require_mention, self.free, self.allowed = require_mention, set(free), set(allowed)
        self.client = httpx.Client(timeout=30)
        self.me: dict = {}
        self.seen: dict = {}  # (channel, ts) of the messages read lately: a mention comes as two events
        self.in_threads, self.trusted = in_threads, trusted  # who is allowed (None: anybody)

    def _call(self, method: str, token: Optional[str] = None, form: bool = False, **payload: Any) -> dict:
        import httpx2 as httpx

        for _ in range(3):
            try:  # form: the methods that read take no JSON
                answer = self.client.post(f"{self.api}/{method}", **{"data" if form else "json": payload},
                                          headers={"Authorization": f"Bearer {token or self.tokens[0]}"})
                body = answer.json()
            except (httpx.HTTPError, ValueError) as exc:
                said = str(exc)
                for secret in self.tokens:
                    said = said.replace(secret, "<token>")
                raise PlatformError(f"slack: {method}: cannot reach the Web API ({said or type(exc).__name__})") \
                    from None
            if answer.status_code == 429:
                time.sleep(min(float(answer.headers.get("retry-after") or 1), 60))
                continue
            if isinstance(body, dict) and body.get("ok"):
                return body
            error = body.get("error") if isinstance(body, dict) else answer.reason_phrase
            if error in ("invalid_auth", "not_authed", "account_inactive", "token_revoked"):
                which = "SLACK_APP_TOKEN" if token == self.tokens[1] else "SLACK_BOT_TOKEN"
                raise PlatformError(f"slack: the Web API refused {which} ({error})", lasting=True)
            raise PlatformError(f"slack: {method}: {error}", status=answer.status_code)
        raise PlatformError(f"slack: {method}: still rate limited after three waits")

    # -- Socket Mode
    def start(self) -> str:
        import importlib.util

        if importlib.util.find_spec("websocket") is None:
            raise PlatformError("slack needs websocket-client: pip install 'hermes-kernel[slack]'", lasting=True)
        self.me = self._call("auth.test")
        self.connect("Socket Mode")
        return "@" + str(self.me.get("user") or self.me.get("user_id"))

    def _session(self) -> None:
        import websocket

        url = self._call("apps.connections.open", token=self.tokens[1])["url"]
        try:
            self.ws = ws = websocket.create_connection(url, timeout=30)
        except (OSError, websocket.WebSocketException) as exc:
            raise PlatformError(f"slack: cannot reach Socket Mode ({exc})") from None
        try:
            for envelope in self.frames(ws, "slack: Socket Mode closed the connection"):
                if envelope.get("envelope_id"):  # acknowledged at once, or Slack sends it again
                    ws.send(json.dumps({"envelope_id": envelope["envelope_id"]}))
                kind = envelope.get("type")
                if kind == "hello":
                    self._replay()
                    self.ready.set()
                    self.settled.set()
                elif kind == "disconnect":  # Slack moves the connection: another one
                    return
                elif kind in ("events_api", "interactive"):
                    try:
                        self._event(kind, envelope.get("payload") or {})
                    except Exception:  # noqa: BLE001 - one event that cannot be read never ends the connection
                        log.exception("slack: an event could not be read")
        except (OSError, ValueError, websocket.WebSocketException) as exc:
            if self.stopping.is_set():
                return
            raise PlatformError(f"slack: the Socket Mode connection failed ({type(exc).__name__}: {exc})") from None
        finally:
            ws.close()

    def _event(self, kind: str, payload: dict) -> None:
        if kind == "interactive":  # a button of send()'s pressed
            action = (payload.get("actions") or [{}])[0]
            channel, question = (payload.get("channel") or {}).get("id"), (payload.get("message") or {})
            try:
                self._call("chat.update", channel=channel, ts=question.get("ts"), text=question.get("text") or "",
                           blocks=[])  # answered once: its buttons go
            except PlatformError:
                pass
            where = in_thread(str(channel), str(question.get("thread_ts") or ""))
            self.inbox.put(Incoming(chat=where, user=str((payload.get("user") or {}).get("id", "")),
                                    name=str((payload.get("user") or {}).get("username") or ""),
                                    text=str(action.get("value") or "")))
            return
        event = payload.get("event") or {}
        if event.get("type") not in ("message", "app_mention") or event.get("bot_id") or \
                event.get("subtype") not in (None, "file_share"):
            return
        key = (event.get("channel"), event.get("ts"))
        if key in self.seen:
            return
        self.seen[key] = time.monotonic()
        for old in [k for k, at in self.seen.items() if time.monotonic() - at > 300]:
            del self.seen[old]
        incoming = self._incoming(event)
        if incoming.addressed:  # where to go on from after a stop (a thread's replies are read apart)
            self.mark_read(in_thread(str(event.get("channel")), str(event.get("thread_ts") or "")),
                           str(event.get("ts")), str(event.get("channel_type") or ""))
        self.inbox.put(incoming)

    def _replay(self) -> None:
        """What was sent in the conversations read before, after their last message read (while no connection was
        open: Slack retries an event a few minutes at most); needs the scopes im:history and channels:history."""
        for key, (last, kind) in list(self.read.items()):
            channel, thread = channel_of(key)
            try:
                found = self._call("conversations.replies" if thread else "conversations.history", form=True,
                                   channel=channel, oldest=last, limit=50, **({"ts": thread} if thread else {}))
            except PlatformError as exc:
                log.info("slack: what %s said while the gateway was stopped could not be read (%s)", key, exc)
                continue
            for message in sorted(found.get("messages") or [], key=lambda m: float(m.get("ts") or 0)):
                if float(message.get("ts") or 0) > float(last):  # a thread's replies bring its first message too
                    self._event("events_api", {"event": {"type": "message", **message, "channel": channel,
                                                         "channel_type": kind}})

    def _incoming(self, event: dict) -> Incoming:
        mine, channel = str(self.me.get("user_id")), str(event.get("channel"))
        text = str(event.get("text") or "")
        named = event.get("type") == "app_mention" or f"<@{mine}>" in text
        text = " ".join(text.replace(f"<@{mine}>", " ").split())
        direct = event.get("channel_type") == "im" or channel.startswith("D")
        thread = str(event.get("thread_ts") or "")
        addressed = direct or (not self.allowed or channel in self.allowed) and (
            named or not self.require_mention or channel in self.free or self.threads.get(thread) == channel)
        if addressed and named and thread and self.threads.get(thread) != channel and (
                self.trusted is None or str(event.get("user")) in self.trusted):  # a thread it is named in first
            text = self._before(channel, thread, str(event.get("ts"))) + text
        if addressed and not direct and not thread and self.in_threads:
            thread = str(event.get("ts") or "")  # the answer starts a thread under the message
        incoming = Incoming(chat=in_thread(channel, thread), user=str(event.get("user") or ""),
                            name=str(event.get("user") or ""), text=text, addressed=addressed,
                            message=str(event.get("ts") or ""))
        for file in event.get("files") or [] if addressed else []:
            kind = str(file.get("mimetype") or "")
            if kind.startswith("image/"):  # Slack's voice clips are not read here
                incoming.attach(kind, str(file.get("name") or ""), lambda file=file: self._fetch(file))
        return incoming

    def _before(self, channel: str, thread: str, current: str) -> str:
        """A thread's messages before the bot was named in it (hermes-agent's thread context), as
        :func:`earlier` shows them."""
        mine = str(self.me.get("user_id"))
        try:
            found = self._call("conversations.replies", form=True, channel=channel, ts=thread, limit=30)
        except PlatformError as exc:
            log.info("slack: the thread %s could not be read (%s)", thread, exc)
            return ""
        lines = []
        for message in found.get("messages") or []:  # the oldest first
            said = " ".join(str(message.get("text") or "").replace(f"<@{mine}>", " ").split())
            who = str(message.get("user") or message.get("username") or "bot")
            if said and message.get("ts") != current and who != mine:
                lines.append((who, said, self.trusted is None or bool(message.get("bot_id")) or who in self.trusted))
        return earlier(lines, "thread")

    def _fetch(self, file: dict) -> bytes:
        import httpx2 as httpx

        try:
            return self.client.get(str(file.get("url_private")), follow_redirects=True, timeout=60,
                                   headers={"Authorization": f"Bearer {self.tokens[0]}"}).raise_for_status().content
        except httpx.HTTPError as exc:
            raise PlatformError(str(exc).replace(self.tokens[0], "<token>") or type(exc).__name__) from None

    # -- answers
    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        shown = to_mrkdwn(text) if final else text
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": shown[:3000]}},
                  {"type": "actions", "elements": [{"type": "button", "text": {"type": "plain_text", "text": label},
                                                    "action_id": f"hermes-{i}", "value": command}
                                                   for i, (label, command) in enumerate(buttons)]}] if buttons else None
        channel, thread = channel_of(chat)
        if thread:  # before it is posted: an answer to it may come before the post's own answer
            self.threads[thread] = channel
        sent = self._call("chat.postMessage", channel=channel, text=shown, unfurl_links=False,
                          **({"blocks": blocks} if blocks else {}), **({"thread_ts": thread} if thread else {}))
        return str(sent.get("ts") or "") or None

    def edit(self, chat: str, message: str, text: str, final: bool = True) -> None:
        self._call("chat.update", channel=channel_of(chat)[0], ts=message, text=to_mrkdwn(text) if final else text)

    def send_file(self, chat: str, path: str, kind: str) -> None:
        """Slack's upload in three steps: an upload address asked for, the bytes sent there, the file shared in the
        chat (the scope ``files:write``)."""
        import httpx2 as httpx
        from pathlib import Path

        file = Path(path)
        data = file.read_bytes()
        if len(data) > MAX_FILE:
            raise PlatformError(f"{file.name}: {len(data) / 2**20:.0f} MB, over the {MAX_FILE // 2**20} MB sent here")
        asked = self._call("files.getUploadURLExternal", form=True, filename=file.name, length=len(data))
        try:
            self.client.post(str(asked.get("upload_url")), files={"file": (file.name, data)}).raise_for_status()
        except httpx.HTTPError as exc:
            raise PlatformError(f"slack: the upload of {file.name} failed ({exc or type(exc).__name__})") from None
        channel, thread = channel_of(chat)
        self._call("files.completeUploadExternal", files=[{"id": asked.get("file_id"), "title": file.name}],
                   channel_id=channel, **({"thread_ts": thread} if thread else {}))

    def react(self, chat: str, message: str, outcome: str) -> None:
        channel = channel_of(chat)[0]
        if outcome != "working":
            try:
                self._call("reactions.remove", channel=channel, timestamp=message, name=REACTIONS["working"])
            except PlatformError:  # not there (its adding failed): the outcome is shown all the same
                pass
        if outcome in REACTIONS:
            self._call("reactions.add", channel=channel, timestamp=message, name=REACTIONS[outcome])

    def typing(self, chat: str) -> None:
        pass  # Slack shows no typing for a bot
