"""Discord: its gateway (a websocket, through websocket-client: ``pip install 'hermes-kernel[discord]'``) brings the
messages, its REST API (httpx2) takes the answers. ``DISCORD_BOT_TOKEN`` and ``DISCORD_ALLOWED_USERS`` are
hermes-agent's variables; the bot needs Discord's Message Content intent (its developer portal) to read a server's
messages. Direct messages are always read; in a server's channel only those that mention the bot
(``discord.require_mention``, true), or any in ``discord.free_response_channels``, and only in
``discord.allowed_channels`` when it lists any. Discord shows Markdown itself: answers go as the model wrote them, in
parts of 2000 characters. A picture or a voice message is fetched as Telegram's are; an approval question has
buttons. Discord replays nothing to a bot: at each connection the last 50 conversations' messages after the last one
read are fetched, so what is sent while the gateway is stopped is answered."""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from typing import Any, Optional

from plugins.gateway.hookspecs import Incoming, PlatformError, body_of, channel_of, earlier, in_thread
from plugins.gateway.socketed import Socketed

log = logging.getLogger("hermes.gateway")
API = "https://discord.com/api/v10"
REACTIONS = {"working": "👀", "done": "✅", "failed": "❌"}  # hermes-agent's
GATEWAY = "wss://gateway.discord.gg/?v=10&encoding=json"
INTENTS = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15)  # guilds, their messages, direct messages, message content
LASTING = {4004: "the gateway refused DISCORD_BOT_TOKEN", 4013: "invalid intents",
           4014: "the bot lacks the Message Content intent: turn it on in Discord's developer portal"}


class Discord(Socketed):
    name = "discord"
    most = 2000

    def __init__(self, token: str, api: str = API, gateway: str = GATEWAY, require_mention: bool = True,
                 free: frozenset = (), allowed: frozenset = (), auto_thread: bool = True, thread_mention: bool = False,
                 backfill: int = 50, trusted: "set | None" = None):
        import httpx2 as httpx  # the SDKs' HTTP client (openai and anthropic depend on it)

        super().__init__()
        self.token, self.api, self.gateway = token, api.rstrip("/"), gateway
        self.require_mention, self.free, self.allowed = require_mention, set(free), set(allowed)
        self.client = httpx.Client(timeout=30, headers={"Authorization": f"Bot {token}",
                                                        "User-Agent": "DiscordBot (hermes, 1)"})
        self.me: dict = {}
        self.auto_thread, self.thread_mention = auto_thread, thread_mention
        self.parents: dict = {}  # channel -> the channel it is a thread in ("": none)
        self.backfill, self.trusted = backfill, trusted  # recent messages read with a mention; who is allowed

    # -- REST
    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx2 as httpx

        for _ in range(3):
            try:
                answer = self.client.request(method, self.api + path, **kwargs)
            except httpx.HTTPError as exc:
                raise PlatformError(f"discord: {method} {path}: cannot reach the API "
                                    f"({str(exc).replace(self.token, '<token>') or type(exc).__name__})") from None
            if answer.status_code == 429:  # its rate limit says how long
                time.sleep(min(float((body_of(answer) or {}).get("retry_after") or 1), 60))
                continue
            if answer.status_code == 204:
                return None
            body = body_of(answer)
            if answer.is_success:
                return body
            said = (body or {}).get("message") if isinstance(body, dict) else answer.reason_phrase
            if answer.status_code == 401:
                raise PlatformError(f"discord: the API refused DISCORD_BOT_TOKEN ({said}): check it in Discord's "
                                    "developer portal", lasting=True, status=401)
            raise PlatformError(f"discord: {method} {path}: {answer.status_code} {said}", status=answer.status_code)
        raise PlatformError(f"discord: {method} {path}: still rate limited after three waits")

    # -- the gateway
    def start(self) -> str:
        import importlib.util

        if importlib.util.find_spec("websocket") is None:  # websocket-client: checked before anything starts
            raise PlatformError("discord needs websocket-client: pip install 'hermes-kernel[discord]'", lasting=True)
        self.me = self._call("GET", "/users/@me") or {}
        self.connect("the gateway")
        return "@" + str(self.me.get("username") or self.me.get("id"))

    def _session(self) -> None:
        import websocket

        try:
            self.ws = ws = websocket.create_connection(self.gateway, timeout=30)
        except (OSError, websocket.WebSocketException) as exc:
            raise PlatformError(f"discord: cannot reach the gateway ({exc})") from None
        try:
            hello = json.loads(ws.recv())
            every = float(hello["d"]["heartbeat_interval"]) / 1000
            ws.send(json.dumps({"op": 2, "d": {"token": self.token, "intents": INTENTS, "properties": {
                "os": "linux", "browser": "hermes", "device": "hermes"}}}))
            seq: list = [None]
            beating = threading.Thread(target=self._beat, args=(ws, every, seq), daemon=True)
            beating.start()
            ws.settimeout(every + 10)
            while not self.stopping.is_set():
                opcode, frame = ws.recv_data(control_frame=True)
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    code = int.from_bytes(frame[:2], "big") if len(frame) >= 2 else None
                    raise PlatformError(f"discord: {LASTING.get(code, f'the gateway closed the connection ({code})')}",
                                        lasting=code in LASTING)
                if opcode != websocket.ABNF.OPCODE_TEXT:
                    continue
                event = json.loads(frame)
                seq[0] = event.get("s") if event.get("s") is not None else seq[0]
                if event.get("op") == 0:
                    try:
                        self._dispatch(event.get("t"), event.get("d") or {})
                    except Exception:  # noqa: BLE001 - one event that cannot be read never ends the connection
                        log.exception("discord: a %s event could not be read", event.get("t"))
                elif event.get("op") == 1:
                    ws.send(json.dumps({"op": 1, "d": seq[0]}))
                elif event.get("op") in (7, 9):  # reconnect, or a session to identify again
                    return
        except (OSError, ValueError, KeyError, websocket.WebSocketException) as exc:
            if self.stopping.is_set():
                return
            raise PlatformError(f"discord: the gateway connection failed ({type(exc).__name__}: {exc})") from None
        finally:
            ws.close()

    def _beat(self, ws, every: float, seq: list) -> None:
        time.sleep(every * random.random())  # as Discord asks: the first beat at a random point of the interval
        while ws.connected and not self.stopping.is_set():
            try:
                ws.send(json.dumps({"op": 1, "d": seq[0]}))
            except Exception:  # noqa: BLE001 - the reader sees the connection end
                return
            self.stopping.wait(every)

    def _dispatch(self, kind: str, data: dict) -> None:
        if kind == "READY":
            self.me = dict(self.me, **(data.get("user") or {}))
            self._replay()
            self.ready.set()
            self.settled.set()
        elif kind == "MESSAGE_CREATE" and not (data.get("author") or {}).get("bot"):
            self._read(data)
        elif kind == "INTERACTION_CREATE" and data.get("type") == 3:  # a button of send()'s pressed
            self.inbox.put(self._pressed(data))

    def _read(self, data: dict) -> None:
        incoming = self._incoming(data)
        if incoming.addressed:  # where to go on from after a stop (a REST message names no server: kept)
            self.mark_read(str(data.get("channel_id")), str(data.get("id")), str(data.get("guild_id") or ""))
        self.inbox.put(incoming)

    def _replay(self) -> None:
        """What was sent in the conversations read before, after their last message read (while it was stopped)."""
        for channel, (last, guild) in list(self.read.items()):
            try:
                found = self._call("GET", f"/channels/{channel}/messages", params={"after": last, "limit": 50})
            except PlatformError as exc:
                log.info("discord: what %s said while the gateway was stopped could not be read (%s)", channel, exc)
                continue
            for message in sorted(found if isinstance(found, list) else [], key=lambda m: int(m.get("id") or 0)):
                if not (message.get("author") or {}).get("bot"):
                    self._read({**message, "channel_id": channel, **({"guild_id": guild} if guild else {})})

    def _pressed(self, data: dict) -> Incoming:
        """The button's command, as if typed by whoever pressed it; the question's buttons go (answered once)."""
        who = (data.get("member") or {}).get("user") or data.get("user") or {}
        try:
            self._call("POST", f"/interactions/{data.get('id')}/{data.get('token')}/callback",
                       json={"type": 7, "data": {"components": []}})  # the message, without its buttons
        except PlatformError:  # the command counts all the same
            pass
        return Incoming(chat=str(data.get("channel_id")), user=str(who.get("id", "")),
                        name=str(who.get("username") or ""), text=str((data.get("data") or {}).get("custom_id")))

    def _incoming(self, data: dict) -> Incoming:
        author, channel, mine = data.get("author") or {}, str(data.get("channel_id")), str(self.me.get("id"))
        text = str(data.get("content") or "")
        named = any(str(m.get("id")) == mine for m in data.get("mentions") or []) or f"<@{mine}>" in text \
            or f"<@!{mine}>" in text
        text = " ".join(text.replace(f"<@{mine}>", " ").replace(f"<@!{mine}>", " ").split())
        posted, direct = channel, not data.get("guild_id")
        known = self.threads.get(channel)  # a thread it is in: its channel
        parent = known or ("" if direct else self._parent(channel))  # a thread's channel
        where = parent or channel  # what the channel lists name
        addressed = direct or known and not self.thread_mention or (not self.allowed or where in self.allowed) and (
            named or not self.require_mention or where in self.free)
        if addressed and parent:  # a thread: answered there, and then read whole (discord.thread_require_mention)
            self.threads[channel] = parent
            channel = in_thread(parent, channel)
        elif addressed and not direct and self.auto_thread:
            channel = self._thread(channel, str(data.get("id")), text)
        if addressed and named and not direct and self.backfill and (self.trusted is None or str(
                author.get("id")) in self.trusted):  # what was said before the mention (a stranger is only told)
            text = self._recent(posted, str(data.get("id"))) + text
        incoming = Incoming(chat=channel, user=str(author.get("id", "")), name=str(author.get("username") or ""),
                            text=text, addressed=addressed, message=str(data.get("id") or ""))
        for attached in data.get("attachments") or [] if addressed else []:
            incoming.attach(str(attached.get("content_type") or ""), str(attached.get("filename") or ""),
                            lambda attached=attached: self._fetch(attached))
        return incoming

    def _recent(self, channel: str, before: str) -> str:
        """The messages before ``before`` in ``channel`` since the bot's last (``discord.history_backfill_limit`` at
        most), as :func:`earlier` shows them."""
        try:
            found = self._call("GET", f"/channels/{channel}/messages", params={"before": before,
                                                                                "limit": min(self.backfill, 100)})
        except PlatformError as exc:
            log.info("discord: the messages before a mention in %s could not be read (%s)", channel, exc)
            return ""
        lines = []
        for message in found if isinstance(found, list) else []:  # the newest first
            author = message.get("author") or {}
            if str(author.get("id")) == str(self.me.get("id")):
                break  # its own last answer: what came before it is in the conversation, or was not for it
            said = " ".join(str(message.get("content") or "").split()) or "(attachment)" * bool(
                message.get("attachments"))
            if said and not author.get("bot"):
                lines.append((author.get("username") or author.get("id"), said,
                              self.trusted is None or str(author.get("id")) in self.trusted))
        return earlier(lines[::-1], "channel")

    def _parent(self, channel: str) -> str:
        """The channel a thread is in ("" for a channel that is no thread), asked of Discord once per channel."""
        if channel not in self.parents:
            try:
                found = self._call("GET", f"/channels/{channel}")
            except PlatformError:  # asked again at its next message
                return ""
            self.parents[channel] = str(found.get("parent_id") or "") if found.get("type") in (10, 11, 12) else ""
        return self.parents[channel]

    def _thread(self, channel: str, message: str, text: str) -> str:
        """The chat ``CHANNEL/THREAD`` of a thread started from the message (``discord.auto_thread``, hermes-agent's),
        where the answer goes; the channel itself when Discord refuses one (the message is in a thread already, no
        permission)."""
        name = " ".join(text.split()) or "hermes"
        name = name if len(name) <= 80 else name[:77] + "..."
        try:
            made = self._call("POST", f"/channels/{channel}/messages/{message}/threads",
                              json={"name": name, "auto_archive_duration": 1440})
        except PlatformError as exc:
            log.info("discord: no thread for a message in %s (%s): answered there", channel, exc)
            return channel
        self.threads[str(made.get("id"))] = channel
        return in_thread(channel, str(made.get("id")))

    @staticmethod
    def _channel(chat: str, message: str = "") -> str:
        """The channel a chat's messages go to (a thread's own); with ``message``, the one that message is in (a
        thread's first message, whose id is the thread's, is in its parent)."""
        parent, thread = channel_of(chat)
        return parent if message and message == thread else thread or parent

    def _fetch(self, attached: dict) -> bytes:
        import httpx2 as httpx

        if int(attached.get("size") or 0) > 25 * 2**20:
            raise PlatformError(f"{attached.get('filename')}: over 25 MB")
        try:
            return httpx.get(str(attached.get("url")), timeout=60, follow_redirects=True).raise_for_status().content
        except httpx.HTTPError as exc:
            raise PlatformError(str(exc) or type(exc).__name__) from None

    # -- answers
    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        rows = [{"type": 1, "components": [{"type": 2, "style": 2, "label": label, "custom_id": command[:100]}
                                           for label, command in buttons[:5]]}] if buttons else []
        sent = self._call("POST", f"/channels/{self._channel(chat)}/messages", json={
            "content": text, "allowed_mentions": {"parse": []}, **({"components": rows} if rows else {})})
        return str(sent.get("id")) if isinstance(sent, dict) else None

    def edit(self, chat: str, message: str, text: str, final: bool = True) -> None:
        self._call("PATCH", f"/channels/{self._channel(chat)}/messages/{message}", json={"content": text})

    def send_file(self, chat: str, path: str, kind: str) -> None:
        from pathlib import Path

        file = Path(path)
        if file.stat().st_size > 25 * 2**20:
            raise PlatformError(f"{file.name}: {file.stat().st_size / 2**20:.0f} MB, over Discord's 25 MB")
        self._call("POST", f"/channels/{self._channel(chat)}/messages", data={"payload_json": json.dumps({
            "content": ""})},
                   files={"files[0]": (file.name, file.read_bytes())})

    def react(self, chat: str, message: str, outcome: str) -> None:
        from urllib.parse import quote

        mine = f"/channels/{self._channel(chat, message)}/messages/{message}/reactions/{{}}/@me"
        if outcome != "working":
            self._call("DELETE", mine.format(quote(REACTIONS["working"])))
        if outcome in REACTIONS:
            self._call("PUT", mine.format(quote(REACTIONS[outcome])))

    def typing(self, chat: str) -> None:
        try:
            self._call("POST", f"/channels/{self._channel(chat)}/typing")
        except PlatformError:
            pass


