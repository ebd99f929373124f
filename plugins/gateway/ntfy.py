"""ntfy: a topic on ntfy.sh or a server of one's own, its messages streamed (``/TOPIC/json``), the answers published
to it. hermes-agent's variables: ``NTFY_TOPIC``, ``NTFY_SERVER_URL`` (https://ntfy.sh), ``NTFY_TOKEN`` (an access
token, or USER:PASSWORD), ``NTFY_PUBLISH_TOPIC`` (where answers go; the topic itself by default), ``NTFY_MARKDOWN``
(answers shown as Markdown), ``NTFY_ALLOWED_USERS`` (topics).

ntfy knows no users: a topic is one conversation, and its user is the topic (whoever may publish to it: a topic
behind an access token is what keeps strangers out). Answers are tagged ``hermes-agent``, as hermes-agent's are, and
a message so tagged is never answered: the bot would answer itself. What is published while the gateway is stopped
is answered when it starts (the server keeps messages for hours: 12 on ntfy.sh)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Optional

from plugins.gateway.hookspecs import Incoming, PlatformError
from plugins.gateway.socketed import Socketed

log = logging.getLogger("hermes.gateway")
SERVER = "https://ntfy.sh"
MINE = "hermes-agent"  # the tag on answers: never answered, by this gateway or hermes-agent's


class Ntfy(Socketed):
    name = "ntfy"
    most = 4096  # ntfy's largest message

    def __init__(self, topic: str, server: str = SERVER, token: str = "", publish: str = "", markdown: bool = False):
        import base64

        import httpx2 as httpx

        super().__init__()
        self.topic, self.server, self.publish, self.markdown = topic, server.rstrip("/"), publish or topic, markdown
        token = token.strip()
        auth = {} if not token else {"Authorization": f"Basic {base64.b64encode(token.encode()).decode()}"
                                     if ":" in token else f"Bearer {token}"}
        self.token = token
        self.client = httpx.Client(timeout=httpx.Timeout(30, connect=10), headers=auth)
        self.last = ""  # the id of the last message the gateway took (what it keeps)
        self.streamed = ""  # the id of the last message the stream brought (where a new stream goes on)

    @property
    def offset(self) -> str:
        """What the gateway keeps for it: the id of the last message it took; after a restart the stream brings what
        came after it."""
        return self.last

    @offset.setter
    def offset(self, kept: Any) -> None:
        self.last = kept if isinstance(kept, str) else ""

    def _failed(self, status: int, what: str) -> PlatformError:
        if status in (401, 403):
            whom = "NTFY_TOKEN" if self.token else "a reader without NTFY_TOKEN"
            return PlatformError(f"ntfy: {self.server} refused {whom} for the topic {self.topic} ({status})",
                                 lasting=True, status=status)
        return PlatformError(f"ntfy: {what} answered {status}", status=status)

    def start(self) -> str:
        import httpx2 as httpx

        try:
            answer = self.client.get(f"{self.server}/{self.topic}/auth")
        except httpx.HTTPError as exc:
            raise PlatformError(f"ntfy: cannot reach {self.server} ({exc or type(exc).__name__})", lasting=True) \
                from None
        if not answer.is_success:
            raise self._failed(answer.status_code, f"{self.server}/{self.topic}/auth")
        self.connect("the message stream")
        return f"{self.server}/{self.topic}"

    def _session(self) -> None:
        import httpx2 as httpx

        try:
            with self.client.stream("GET", f"{self.server}/{self.topic}/json",
                                    params={"since": self.streamed or self.last} if self.streamed or self.last
                                    else None,
                                    timeout=httpx.Timeout(90, connect=10)) as stream:  # keepalives every 45 s
                if not stream.is_success:
                    raise self._failed(stream.status_code, "the message stream")
                self.ws = stream  # close() ends it
                for line in stream.iter_lines():
                    try:
                        event = json.loads(line) if line.strip() else {}
                    except ValueError:
                        continue
                    if event.get("event") == "open":
                        self.ready.set()
                        self.settled.set()
                    elif event.get("event") == "message" and event.get("id"):
                        self._message(event)
        except httpx.HTTPError as exc:
            if self.stopping.is_set():
                return
            raise PlatformError(f"ntfy: the message stream ended ({exc or type(exc).__name__})") from None

    def _message(self, event: dict) -> None:
        self.streamed = str(event["id"])
        if MINE in (event.get("tags") or []):
            return
        title, text = str(event.get("title") or "").strip(), str(event.get("message") or "").strip()
        topic = str(event.get("topic") or self.topic)
        incoming = Incoming(chat=topic, user=topic, name=topic, text=f"{title}\n\n{text}" if title else text,
                            message=self.streamed)
        attached = event.get("attachment") if isinstance(event.get("attachment"), dict) else {}
        if attached.get("url"):
            incoming.attach(str(attached.get("type") or ""), str(attached.get("name") or ""),
                            lambda: self._fetch(str(attached["url"])))
        self.inbox.put(incoming)

    def receive(self, wait: "float | None" = None) -> list:
        found = super().receive(wait)
        self.last = found[-1].message if found else self.last  # taken: the gateway keeps them, then this offset
        return found

    def _fetch(self, url: str) -> bytes:
        import httpx2 as httpx

        try:
            return self.client.get(url, follow_redirects=True, timeout=60).raise_for_status().content
        except httpx.HTTPError as exc:
            raise PlatformError(f"ntfy: the attachment could not be fetched ({exc or type(exc).__name__})") from None

    def _publish(self, chat: str, body: bytes, **headers: str) -> Optional[str]:
        import httpx2 as httpx

        topic = self.publish if chat == self.topic else chat  # a cron job's "ntfy:TOPIC" goes where it says
        try:
            answer = self.client.put(f"{self.server}/{topic}", content=body, headers={"Tags": MINE, **headers})
        except httpx.HTTPError as exc:
            raise PlatformError(f"ntfy: cannot reach {self.server} ({exc or type(exc).__name__})") from None
        if not answer.is_success:
            raise self._failed(answer.status_code, f"publishing to {topic}")
        try:
            return str(answer.json().get("id") or "") or None
        except ValueError:
            return None

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        return self._publish(chat, text.encode(), **({"Markdown": "yes"} if self.markdown else {}))

    def send_file(self, chat: str, path: str, kind: str) -> None:
        file = Path(path)
        self._publish(chat, file.read_bytes(), Filename=file.name)

    def typing(self, chat: str) -> None:
        pass  # ntfy shows none
