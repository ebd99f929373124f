"""Matrix, through a homeserver's client-server API over HTTPS (httpx2): long polling (``/sync``), so no public
address is needed. hermes-agent's variables: ``MATRIX_HOMESERVER`` and ``MATRIX_ACCESS_TOKEN``, or
``MATRIX_USER_ID`` with ``MATRIX_PASSWORD`` (logged in at the start and out at the end: no device is left behind).

An invitation from an allowed user is accepted (a stranger's declined); a room of two, the bot and one person, is
a direct chat, read whole; in another, a message that mentions the bot or answers it (``matrix.require_mention``),
or any in ``matrix.free_response_rooms``, and only in ``matrix.allowed_rooms`` when it lists any. Unencrypted rooms
only: an encrypted one is told so, once (hermes-agent's end-to-end encryption is not here). Answers go as Matrix's
HTML (:mod:`plugins.gateway.markup`), drafts are edited (``m.replace``), reactions are annotations."""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from typing import Any, Optional
from urllib.parse import quote

from plugins.gateway.hookspecs import Incoming, PlatformError, body_of

log = logging.getLogger("hermes.gateway")
CLIENT = "/_matrix/client/v3"
POLL_SECONDS = 25  # a /sync waits this long for an event
MAX_FILE = 20 * 2**20  # the largest picture or voice message fetched
REACTIONS = {"working": "👀", "done": "✅", "failed": "❌"}  # hermes-agent's
KINDS = {"photo": "m.image", "audio": "m.audio"}  # what send_file sends (else m.file)
FILTER = json.dumps({"presence": {"not_types": ["*"]}, "account_data": {"not_types": ["*"]},
                     "room": {"ephemeral": {"not_types": ["*"]}, "state": {"lazy_load_members": True}}})
ENCRYPTED = ("This room is encrypted, and I read only unencrypted Matrix rooms (end-to-end encryption is not "
             "supported here): talk to me in a room without it.")


def _room(room: str) -> str:
    return quote(room, safe="")


class Matrix:
    name = "matrix"
    most = 16000  # hermes-agent's: an event holds 64 KB, its HTML included

    def __init__(self, homeserver: str, token: str = "", user: str = "", password: str = "",
                 inviters: "set | None" = None, require_mention: bool = True, free: frozenset = (),
                 allowed: frozenset = (), poll_seconds: float = POLL_SECONDS):
        import httpx2 as httpx  # the SDKs' HTTP client (openai and anthropic depend on it)

        self.base, self.token, self.user, self.password = homeserver.rstrip("/"), token, user, password
        self.logged_in = False  # by password: logged out at close
        self.inviters = inviters  # whose invitations are accepted (None: anybody's)
        self.require_mention, self.free, self.allowed = require_mention, set(free), set(allowed)
        self.poll_seconds = poll_seconds
        self.client = httpx.Client(timeout=httpx.Timeout(poll_seconds + 15, connect=15))
        self.since = ""  # the sync token receiving goes on from
        self.me = ""
        self.members: dict = {}  # room -> how many joined it
        self.mine: deque = deque(maxlen=500)  # the bot's recent messages: an answer to one is addressed to it
        self.marks: dict = {}  # (room, message) -> the bot's reaction on it (redacted when it changes)
        self.told: set = set()  # the encrypted rooms told so
        self.txn = 0

    def _call(self, method: str, path: str, refused: str = "MATRIX_ACCESS_TOKEN", headers: Optional[dict] = None,
              **kwargs: Any) -> Any:
        """The homeserver's answer; ``refused``: what a 401 (a login's 403 too) says was refused."""
        import httpx2 as httpx

        for _ in range(3):
            sent = {**({"Authorization": f"Bearer {self.token}"} if self.token else {}), **(headers or {})}
            try:
                answer = self.client.request(method, self.base + path, headers=sent, **kwargs)
            except httpx.HTTPError as exc:
                said = (str(exc).replace(self.token, "<token>") if self.token else str(exc)) or type(exc).__name__
                raise PlatformError(f"matrix: cannot reach the homeserver {self.base} ({said})") from None
            body = body_of(answer)
            body = body if isinstance(body, dict) else {}
            if answer.status_code == 429:  # its rate limit says how long
                time.sleep(min(float(body.get("retry_after_ms") or 1000) / 1000, 60))
                continue
            if answer.is_success:
                return body
            said = f"{body.get('errcode') or answer.status_code}: {body.get('error') or answer.reason_phrase}"
            if answer.status_code == 401 or answer.status_code == 403 and path.endswith("/login"):
                raise PlatformError(f"matrix: the homeserver refused {refused} ({said})", lasting=True,
                                    status=answer.status_code)
            raise PlatformError(f"matrix: {method} {path.split('?')[0]}: {said}", status=answer.status_code)
        raise PlatformError(f"matrix: {method} {path}: still rate limited after three waits")

    def start(self) -> str:
        if not self.token:
            found = self._call("POST", f"{CLIENT}/login", refused="MATRIX_USER_ID and MATRIX_PASSWORD", json={
                "type": "m.login.password", "identifier": {"type": "m.id.user", "user": self.user},
                "password": self.password, "initial_device_display_name": "hermes gateway"})
            self.token, self.logged_in = str(found.get("access_token") or ""), True
        self.me = str(self._call("GET", f"{CLIENT}/account/whoami").get("user_id") or "")
        return self.me

    @property
    def offset(self) -> dict:
        """What the gateway keeps for it: the sync token, and the bot's recent messages (an answer to one is
        addressed to it after a restart too)."""
        return {"since": self.since, "mine": list(self.mine)}

    @offset.setter
    def offset(self, kept: Any) -> None:
        kept = kept if isinstance(kept, dict) else {"since": kept}  # a sync token alone: a gateway before
        self.since = str(kept.get("since") or "")
        self.mine.extend(str(m) for m in kept.get("mine") or [] if isinstance(kept.get("mine"), list))

    # -- receiving
    def receive(self, wait: Optional[float] = None) -> list:
        """The next messages, waiting ``wait`` seconds at most (default: the long poll's). The first sync of a
        gateway that never ran only learns where the rooms are: their history is not answered."""
        first = not self.since
        params = {"filter": FILTER,
                  "timeout": 0 if first else int(1000 * (self.poll_seconds if wait is None else wait))}
        body = self._call("GET", f"{CLIENT}/sync", params={**params, **({} if first else {"since": self.since})})
        self.since = str(body.get("next_batch") or self.since)
        rooms = body.get("rooms") if isinstance(body.get("rooms"), dict) else {}
        for room, data in (rooms.get("invite") or {}).items():
            self._invited(room, data if isinstance(data, dict) else {})
        found = []
        for room, data in (rooms.get("join") or {}).items():
            data = data if isinstance(data, dict) else {}
            count = (data.get("summary") or {}).get("m.joined_member_count")
            if isinstance(count, int):
                self.members[room] = count
            for event in [] if first else (data.get("timeline") or {}).get("events") or []:
                if not isinstance(event, dict) or event.get("sender") == self.me:
                    continue
                try:
                    if event.get("type") == "m.room.encrypted":
                        self._encrypted(room)
                    elif event.get("type") == "m.room.message" and isinstance(event.get("content"), dict):
                        found.extend(filter(None, [self._incoming(room, event)]))
                except Exception:  # noqa: BLE001 - one event that cannot be read must not lose the others
                    log.exception("matrix: an event in %s could not be read", room)
        return found

    def _invited(self, room: str, data: dict) -> None:
        """Accept an allowed user's invitation, decline a stranger's."""
        events = (data.get("invite_state") or {}).get("events") or []
        inviter = next((e.get("sender") for e in events if isinstance(e, dict) and e.get("type") == "m.room.member"
                        and e.get("state_key") == self.me), "")
        accepted = self.inviters is None or str(inviter).lower() in {i.lower() for i in self.inviters}
        try:
            self._call("POST", f"{CLIENT}/rooms/{_room(room)}/{'join' if accepted else 'leave'}", json={})
        except PlatformError:  # asked again at the next sync while it is still an invitation
            pass

    def _encrypted(self, room: str) -> None:
        if room not in self.told:
            self.told.add(room)
            try:
                self.send(room, ENCRYPTED, final=False)
            except PlatformError:
                pass

    def _members(self, room: str) -> int:
        if room not in self.members:
            try:
                joined = self._call("GET", f"{CLIENT}/rooms/{_room(room)}/joined_members").get("joined")
                self.members[room] = len(joined) if isinstance(joined, dict) else 3
            except PlatformError:
                return 3  # not known: a room, where a mention is wanted
        return self.members[room]

    def _incoming(self, room: str, event: dict) -> "Incoming | None":
        content = event["content"]
        relates = content.get("m.relates_to") if isinstance(content.get("m.relates_to"), dict) else {}
        kind = content.get("msgtype")
        if relates.get("rel_type") == "m.replace" or kind == "m.notice":  # an edit, or a bot's notice
            return None
        text, localpart = str(content.get("body") or ""), self.me.partition(":")[0].lstrip("@")
        answered = (relates.get("m.in_reply_to") or {}).get("event_id") in self.mine
        if relates.get("m.in_reply_to"):  # the quoted message a client puts first ("> <@bot:server> ...")
            lines = text.split("\n")
            while lines and lines[0].startswith(">"):
                lines.pop(0)
            text = "\n".join(lines).strip()
        named = self.me in ((content.get("m.mentions") or {}).get("user_ids") or []) or self.me in text or \
            text.lower().startswith(f"{localpart.lower()}:")
        if named:  # "hermes: what is..." and the id itself are not part of the message
            text = text.replace(self.me, " ")
            text = text[len(localpart) + 1:] if text.lower().startswith(f"{localpart.lower()}:") else text
            text = " ".join(text.split())
        addressed = self._members(room) <= 2 or (not self.allowed or room in self.allowed) and (
            named or answered or not self.require_mention or room in self.free)
        media = kind in ("m.image", "m.audio", "m.file", "m.video")
        caption = text if media and content.get("filename") and text != content.get("filename") else ""
        incoming = Incoming(chat=room, user=str(event.get("sender") or ""), name=str(event.get("sender") or ""),
                            text=caption if media else text, addressed=addressed,
                            message=str(event.get("event_id") or ""))
        if addressed and kind in ("m.image", "m.audio"):
            incoming.attach(kind.replace("m.", "") + "/", str(content.get("filename") or content.get("body") or ""),
                            lambda: self._fetch(content))
        return incoming

    def _fetch(self, content: dict) -> bytes:
        """The file an ``mxc://`` URL names: through the authenticated media API, or an older homeserver's."""
        url = str(content.get("url") or "")
        if not url.startswith("mxc://"):
            raise PlatformError("no mxc:// address (an encrypted file?)")
        if int((content.get("info") or {}).get("size") or 0) > MAX_FILE:
            raise PlatformError(f"over {MAX_FILE // 2**20} MB")
        server, _, media = url.removeprefix("mxc://").partition("/")
        for path in (f"/_matrix/client/v1/media/download/{server}/{media}",
                     f"/_matrix/media/v3/download/{server}/{media}"):
            answer = self.client.get(self.base + path, headers={"Authorization": f"Bearer {self.token}"},
                                     follow_redirects=True, timeout=60)
            if answer.is_success:
                return answer.content
            if answer.status_code not in (400, 404):  # 404: a homeserver without authenticated media
                break
        raise PlatformError(f"{answer.status_code} {answer.reason_phrase}")

    # -- answers
    def _send_event(self, room: str, kind: str, content: dict) -> str:
        self.txn += 1
        sent = self._call("PUT", f"{CLIENT}/rooms/{_room(room)}/send/{kind}/hermes{time.time_ns()}.{self.txn}",
                          json=content)
        return str(sent.get("event_id") or "")

    @staticmethod
    def _text(text: str, final: bool) -> dict:
        from plugins.gateway.markup import to_html

        return {"msgtype": "m.text", "body": text,
                **({"format": "org.matrix.custom.html", "formatted_body": to_html(text)} if final else {})}

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        sent = self._send_event(chat, "m.room.message", self._text(text, final))  # no buttons: the text says
        self.mine.append(sent)
        return sent or None

    def edit(self, chat: str, message: str, text: str, final: bool = True) -> None:
        new = self._text(text, final)
        self._send_event(chat, "m.room.message", {**new, "body": "* " + text, "m.new_content": new,
                                                  "m.relates_to": {"rel_type": "m.replace", "event_id": message}})

    def react(self, chat: str, message: str, outcome: str) -> None:
        before = self.marks.pop((chat, message), None)
        if before:
            self.txn += 1
            self._call("PUT", f"{CLIENT}/rooms/{_room(chat)}/redact/{quote(before, safe='')}/hermes{time.time_ns()}."
                              f"{self.txn}", json={})
        if outcome in REACTIONS:
            self.marks[(chat, message)] = self._send_event(chat, "m.reaction", {"m.relates_to": {
                "rel_type": "m.annotation", "event_id": message, "key": REACTIONS[outcome]}})

    def send_file(self, chat: str, path: str, kind: str) -> None:
        import mimetypes
        from pathlib import Path

        file = Path(path)
        if file.stat().st_size > 50 * 2**20:
            raise PlatformError(f"{file.name}: {file.stat().st_size / 2**20:.0f} MB, over the 50 MB sent here")
        mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        uploaded = self._call("POST", "/_matrix/media/v3/upload", params={"filename": file.name},
                              content=file.read_bytes(), headers={"Content-Type": mime})
        self._send_event(chat, "m.room.message", {"msgtype": KINDS.get(kind, "m.file"), "body": file.name,
                                                  "url": uploaded.get("content_uri"),
                                                  "info": {"mimetype": mime, "size": file.stat().st_size}})

    def typing(self, chat: str) -> None:
        try:
            self._call("PUT", f"{CLIENT}/rooms/{_room(chat)}/typing/{quote(self.me, safe='')}",
                       json={"typing": True, "timeout": 6000})
        except PlatformError:
            pass

    def close(self) -> None:
        if self.logged_in:  # the device the login made goes with it
            try:
                self._call("POST", f"{CLIENT}/logout", json={})
            except PlatformError:
                pass
        self.client.close()
