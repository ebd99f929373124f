"""Mattermost: its websocket (through websocket-client: ``pip install 'hermes-kernel[mattermost]'``) brings the posts,
its REST API v4 (httpx2) takes the answers. hermes-agent's variables: ``MATTERMOST_URL``, ``MATTERMOST_TOKEN`` (a bot
account's, or a personal access token), ``MATTERMOST_ALLOWED_USERS`` (user ids). A direct message is always read;
in a channel, one that mentions the bot (``mattermost.require_mention``), or any in
``mattermost.free_response_channels``, and only in ``mattermost.allowed_channels`` when it lists any; with
``MATTERMOST_REPLY_MODE=thread`` the answer goes in the post's thread, each thread a conversation read without
mentions (the threads it answers in remembered across restarts). Mattermost
shows Markdown itself; answers are drafts edited as they are written, reactions mark the user's post, pictures and
voice are fetched, files uploaded. What is posted in the last 50 conversations while the gateway is stopped is
fetched at its next start and answered."""

from __future__ import annotations

import json
import logging
from typing import Any, Optional

from plugins.gateway.hookspecs import Incoming, PlatformError, body_of, channel_of, in_thread
from plugins.gateway.socketed import Socketed

log = logging.getLogger("hermes.gateway")
REACTIONS = {"working": "eyes", "done": "white_check_mark", "failed": "x"}  # hermes-agent's, by Mattermost's names
MAX_FILE = 20 * 2**20


class Mattermost(Socketed):
    name = "mattermost"
    most = 16000  # a post holds 16383 characters

    def __init__(self, url: str, token: str, require_mention: bool = True, free: frozenset = (),
                 allowed: frozenset = (), in_threads: bool = False):
        import httpx2 as httpx

        super().__init__()
        self.url, self.token = url.rstrip("/"), token
        self.require_mention, self.free, self.allowed = require_mention, set(free), set(allowed)
        self.client = httpx.Client(timeout=30, headers={"Authorization": f"Bearer {token}"})
        self.me: dict = {}
        self.in_threads = in_threads

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx2 as httpx

        try:
            answer = self.client.request(method, f"{self.url}/api/v4{path}", **kwargs)
        except httpx.HTTPError as exc:
            raise PlatformError(f"mattermost: cannot reach {self.url} ({exc or type(exc).__name__})") from None
        body = (body_of(answer) if answer.content else None) or {}
        if answer.is_success:
            return body
        said = body.get("message") if isinstance(body, dict) and body.get("message") else answer.reason_phrase
        if answer.status_code == 401:
            raise PlatformError(f"mattermost: the server refused MATTERMOST_TOKEN ({said})", lasting=True, status=401)
        raise PlatformError(f"mattermost: {method} {path}: {answer.status_code} {said}", status=answer.status_code)

    # -- the websocket
    def start(self) -> str:
        import importlib.util

        if importlib.util.find_spec("websocket") is None:
            raise PlatformError("mattermost needs websocket-client: pip install 'hermes-kernel[mattermost]'",
                                lasting=True)
        self.me = self._call("GET", "/users/me")
        self.connect("the websocket")
        return "@" + str(self.me.get("username") or self.me.get("id"))

    def _session(self) -> None:
        import websocket

        where = "ws" + self.url.removeprefix("http") + "/api/v4/websocket"
        try:
            self.ws = ws = websocket.create_connection(where, timeout=30, header=[f"Authorization: Bearer "
                                                                                  f"{self.token}"])
        except (OSError, websocket.WebSocketException) as exc:
            raise PlatformError(f"mattermost: cannot reach the websocket ({exc})") from None
        try:
            ws.send(json.dumps({"seq": 1, "action": "authentication_challenge", "data": {"token": self.token}}))
            for event in self.frames(ws, "mattermost: the server closed the websocket"):
                if event.get("event") == "hello":
                    self._replay()
                    self.ready.set()
                    self.settled.set()
                elif event.get("event") == "posted":
                    try:
                        self._posted(event.get("data") or {})
                    except Exception:  # noqa: BLE001 - one post that cannot be read never ends the connection
                        log.exception("mattermost: a post could not be read")
        except (OSError, ValueError, websocket.WebSocketException) as exc:
            if self.stopping.is_set():
                return
            raise PlatformError(f"mattermost: the websocket failed ({type(exc).__name__}: {exc})") from None
        finally:
            ws.close()

    def _posted(self, data: dict) -> None:
        post = json.loads(data.get("post") or "{}")
        if post.get("user_id") == self.me.get("id") or post.get("type"):  # its own, or a system message
            return
        channel, mine = str(post.get("channel_id") or ""), str(self.me.get("username") or "")
        text = str(post.get("message") or "")
        named = self.me.get("id") in json.loads(data.get("mentions") or "[]") or f"@{mine}" in text
        text = " ".join(text.replace(f"@{mine}", " ").split()) if mine else text
        direct, root = data.get("channel_type") == "D", str(post.get("root_id") or "")
        addressed = direct or (not self.allowed or channel in self.allowed) and (
            named or not self.require_mention or channel in self.free or self.threads.get(root) == channel)
        thread = root or str(post.get("id") or "") if addressed and not direct and self.in_threads else ""
        incoming = Incoming(chat=in_thread(channel, thread), user=str(post.get("user_id") or ""),
                            name=str(data.get("sender_name") or "").lstrip("@"), text=text, addressed=addressed,
                            message=str(post.get("id") or ""))
        for info in (post.get("metadata") or {}).get("files") or [] if addressed else []:
            incoming.attach(str(info.get("mime_type") or ""), str(info.get("name") or ""),
                            lambda info=info: self._fetch(info))
        if addressed:  # where to go on from after a stop
            self.mark_read(channel, str(post.get("create_at") or 0), str(data.get("channel_type") or ""))
        self.inbox.put(incoming)

    def _replay(self) -> None:
        """The posts sent in the conversations read before, after their last post read (while it was stopped)."""
        for channel, (since, kind) in list(self.read.items()):
            try:
                found = self._call("GET", f"/channels/{channel}/posts", params={"since": int(since) + 1})
            except (PlatformError, ValueError) as exc:
                log.info("mattermost: what %s said while the gateway was stopped could not be read (%s)", channel, exc)
                continue
            posts = (found.get("posts") or {}).values() if isinstance(found, dict) else []
            for post in sorted(posts, key=lambda p: int(p.get("create_at") or 0)):
                if int(post.get("create_at") or 0) <= int(since):  # `since` brings edits of older posts too
                    continue
                try:
                    self._posted({"post": json.dumps(post), "channel_type": kind})
                except Exception:  # noqa: BLE001 - one post that cannot be read never stops the others
                    log.exception("mattermost: a post could not be read")

    def _fetch(self, info: dict) -> bytes:
        import httpx2 as httpx

        if int(info.get("size") or 0) > MAX_FILE:
            raise PlatformError(f"over {MAX_FILE // 2**20} MB")
        try:
            return self.client.get(f"{self.url}/api/v4/files/{info.get('id')}").raise_for_status().content
        except httpx.HTTPError as exc:
            raise PlatformError(str(exc) or type(exc).__name__) from None

    # -- answers
    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        channel, thread = channel_of(chat)
        if thread:  # read without a mention from now on
            self.threads[thread] = channel
        sent = self._call("POST", "/posts", json={"channel_id": channel, "message": text,
                                                   **({"root_id": thread} if thread else {})})
        return str(sent.get("id")) if isinstance(sent, dict) and sent.get("id") else None

    def edit(self, chat: str, message: str, text: str, final: bool = True) -> None:
        self._call("PUT", f"/posts/{message}/patch", json={"message": text})

    def react(self, chat: str, message: str, outcome: str) -> None:
        me = self.me.get("id")
        if outcome != "working":
            try:
                self._call("DELETE", f"/users/{me}/posts/{message}/reactions/{REACTIONS['working']}")
            except PlatformError:  # not there (its adding failed): the outcome is shown all the same
                pass
        if outcome in REACTIONS:
            self._call("POST", "/reactions", json={"user_id": me, "post_id": message,
                                                  "emoji_name": REACTIONS[outcome]})

    def send_file(self, chat: str, path: str, kind: str) -> None:
        from pathlib import Path

        file = Path(path)
        if file.stat().st_size > 50 * 2**20:
            raise PlatformError(f"{file.name}: {file.stat().st_size / 2**20:.0f} MB, over the 50 MB sent here")
        channel, thread = channel_of(chat)
        uploaded = self._call("POST", "/files", data={"channel_id": channel},
                              files={"files": (file.name, file.read_bytes())})
        ids = [info.get("id") for info in uploaded.get("file_infos") or []]
        self._call("POST", "/posts", json={"channel_id": channel, "message": "", "file_ids": ids,
                                           **({"root_id": thread} if thread else {})})

    def typing(self, chat: str) -> None:
        try:
            channel, thread = channel_of(chat)
            self._call("POST", f"/users/{self.me.get('id')}/typing", json={"channel_id": channel,
                                                                          "parent_id": thread})
        except PlatformError:
            pass
