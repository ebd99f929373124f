"""Signal, through a signal-cli daemon in HTTP mode (``signal-cli -a +NUMBER daemon --http 127.0.0.1:8080``, on this
machine or another): its events stream (server-sent events) brings the messages, its JSON-RPC takes the answers.
hermes-agent's variables: ``SIGNAL_HTTP_URL``, ``SIGNAL_ACCOUNT`` (the bot's number), ``SIGNAL_ALLOWED_USERS``;
groups are read only when ``SIGNAL_GROUP_ALLOWED_USERS`` lists them (``*``: any), and then every message, or only
those that mention the bot with ``SIGNAL_REQUIRE_MENTION=true``. Answers go as plain text with Signal's styles (bold,
italics, monospace, strikethrough), pictures and voice notes are read, files sent; no drafts (Signal allows only a
few edits of a message). What is sent while the gateway is stopped is not answered."""

from __future__ import annotations

import base64
import json
import logging
import mimetypes
from pathlib import Path
from typing import Any, Optional

from plugins.gateway.hookspecs import Incoming, PlatformError
from plugins.gateway.socketed import Socketed

log = logging.getLogger("hermes.gateway")
MAX_FILE = 20 * 2**20  # the largest picture or voice note fetched
REACTIONS = {"working": "👀", "done": "✅", "failed": "❌"}  # hermes-agent's
MENTION = "\ufffc"  # where Signal's text holds a mention (its ``mentions`` say whose)


class Signal(Socketed):
    name = "signal"
    most = 8000  # hermes-agent's

    def __init__(self, url: str, account: str, groups: "set | None" = None, require_mention: bool = False):
        import httpx2 as httpx

        super().__init__()
        self.url, self.account = url.rstrip("/"), account
        self.groups = groups if groups is not None else set()  # the groups read ("*": any)
        self.require_mention = require_mention
        self.client = httpx.Client(timeout=httpx.Timeout(30, connect=10))
        self.rpc_id = 0

    def _rpc(self, method: str, **params: Any) -> Any:
        import httpx2 as httpx

        self.rpc_id += 1
        try:
            answer = self.client.post(f"{self.url}/api/v1/rpc", json={
                "jsonrpc": "2.0", "method": method, "params": {"account": self.account, **params}, "id": self.rpc_id})
            body = answer.json() if answer.content else {}
        except (httpx.HTTPError, ValueError) as exc:
            raise PlatformError(f"signal: cannot reach signal-cli at {self.url} ({exc or type(exc).__name__})") \
                from None
        error = body.get("error") if isinstance(body, dict) else None
        if error or not answer.is_success:
            said = (error or {}).get("message") if isinstance(error, dict) else answer.reason_phrase
            raise PlatformError(f"signal: {method}: {said}", status=answer.status_code)
        return body.get("result")

    def start(self) -> str:
        import httpx2 as httpx

        try:
            self.client.get(f"{self.url}/api/v1/check").raise_for_status()
        except httpx.HTTPError as exc:
            raise PlatformError(f"signal: no signal-cli daemon answers at {self.url} ({exc or type(exc).__name__}): "
                                f"start one with `signal-cli -a {self.account} daemon --http HOST:PORT`",
                                lasting=True) from None
        try:
            self._rpc("listContacts")  # the account is one the daemon knows
        except PlatformError as exc:
            raise PlatformError(f"signal: signal-cli does not take SIGNAL_ACCOUNT {self.account} "
                                f"({str(exc).partition(': ')[2].partition(': ')[2]})", lasting=True) from None
        self.connect("the events stream")
        return self.account

    def _session(self) -> None:
        import httpx2 as httpx

        try:
            with self.client.stream("GET", f"{self.url}/api/v1/events", params={"account": self.account},
                                    headers={"Accept": "text/event-stream"},
                                    timeout=httpx.Timeout(None, connect=10)) as stream:
                if not stream.is_success:
                    raise PlatformError(f"signal: the events stream answered {stream.status_code}")
                self.ws = stream  # close() ends it
                self.ready.set()
                self.settled.set()
                for line in stream.iter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        try:
                            self._envelope(json.loads(line[5:]))
                        except Exception:  # noqa: BLE001 - one event that cannot be read never ends the stream
                            log.exception("signal: an event could not be read")
        except httpx.HTTPError as exc:
            if self.stopping.is_set():
                return
            raise PlatformError(f"signal: the events stream ended ({exc or type(exc).__name__})") from None
        if not self.stopping.is_set():
            raise PlatformError("signal: signal-cli closed the events stream")

    def _envelope(self, event: dict) -> None:
        envelope = event.get("envelope") if isinstance(event.get("envelope"), dict) else {}
        data = envelope.get("dataMessage") or (envelope.get("editMessage") or {}).get("dataMessage")
        sender = str(envelope.get("sourceNumber") or envelope.get("sourceUuid") or envelope.get("source") or "")
        if not isinstance(data, dict) or not sender or sender == self.account:
            return  # a receipt, typing, a sync of the bot's own messages
        group = str((data.get("groupInfo") or {}).get("groupId") or "")
        if group and "*" not in self.groups and group not in self.groups:
            return
        text, named, mentions = str(data.get("message") or ""), False, data.get("mentions") or []
        for mention in sorted(mentions, key=lambda m: -int(m.get("start") or 0)):  # the last first: starts hold
            start, length = int(mention.get("start") or 0), int(mention.get("length") or 1)
            mine = self.account in (mention.get("number"), mention.get("uuid"))
            named = named or mine
            text = text[:start] + ("" if mine else f"@{mention.get('name') or mention.get('number') or ''}") + \
                text[start + length:]
        incoming = Incoming(chat=f"group:{group}" if group else sender, user=sender,
                            name=str(envelope.get("sourceName") or sender), text=" ".join(text.split()),
                            addressed=not group or named or not self.require_mention,
                            message=f"{data.get('timestamp') or envelope.get('timestamp')}:{sender}")
        for attached in data.get("attachments") or [] if incoming.addressed else []:
            incoming.attach(str(attached.get("contentType") or ""), str(attached.get("filename") or "voice.m4a"),
                            lambda attached=attached: self._fetch(attached))
        self.inbox.put(incoming)

    def _fetch(self, attached: dict) -> bytes:
        if int(attached.get("size") or 0) > MAX_FILE:
            raise PlatformError(f"over {MAX_FILE // 2**20} MB")
        found = self._rpc("getAttachment", id=attached.get("id"))
        try:
            return base64.b64decode((found or {}).get("data") if isinstance(found, dict) else found or "")
        except ValueError:
            raise PlatformError("signal-cli's answer is no base64") from None

    # -- answers
    @staticmethod
    def _to(chat: str) -> dict:
        return {"groupId": chat.removeprefix("group:")} if chat.startswith("group:") else {"recipient": [chat]}

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        from plugins.gateway.markup import to_styled

        plain, styles = to_styled(text) if final else (text, [])
        sent = self._rpc("send", message=plain, **({"textStyle": styles} if styles else {}), **self._to(chat))
        return str(sent["timestamp"]) if isinstance(sent, dict) and sent.get("timestamp") else None

    def react(self, chat: str, message: str, outcome: str) -> None:
        when, _, author = message.partition(":")
        target = {"targetAuthor": author, "targetTimestamp": int(when), **self._to(chat)}
        if outcome in REACTIONS:  # one reaction per person: it takes the place of the one before
            self._rpc("sendReaction", emoji=REACTIONS[outcome], **target)
        else:
            self._rpc("sendReaction", emoji=REACTIONS["working"], remove=True, **target)

    def send_file(self, chat: str, path: str, kind: str) -> None:
        file = Path(path)
        if file.stat().st_size > 95 * 2**20:
            raise PlatformError(f"{file.name}: {file.stat().st_size / 2**20:.0f} MB, over Signal's 100 MB")
        mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        data = base64.b64encode(file.read_bytes()).decode()  # in the call: signal-cli may run on another machine
        self._rpc("send", message="", attachments=[f"data:{mime};filename={file.name};base64,{data}"],
                  **self._to(chat))

    def typing(self, chat: str) -> None:
        try:
            self._rpc("sendTyping", **self._to(chat))
        except PlatformError:
            pass
