"""Microsoft Teams (hermes-agent's ``teams`` platform), through the Bot Framework: Teams POSTs each activity to this
gateway's messaging endpoint with a token the Bot Framework signed (checked against its published keys: issuer,
audience, expiry, the service it names), and the answers go to the conversation's Bot Connector service with the
bot's own token from Microsoft Entra ID. hermes-agent's variables: ``TEAMS_CLIENT_ID``, ``TEAMS_CLIENT_SECRET``,
``TEAMS_TENANT_ID`` (the Azure bot's app registration), ``TEAMS_PORT`` (3978; ``TEAMS_HOST`` 127.0.0.1; the path
/api/messages: behind the public HTTPS address that is the bot's messaging endpoint), ``TEAMS_ALLOWED_USERS`` (Entra
object ids, or the ids Teams gives, ``29:...``), ``TEAMS_HOME_CHANNEL``; ``TEAMS_SERVICE_URL`` for a message outside
any conversation the gateway heard (a cron job's; the global service by default).

A personal chat is one conversation, a group chat or a channel's another, where the bot answers a message that
@-mentions it (its own mention taken out of the text). Answers go in Teams' Markdown, whole; pictures sent are read
(with the bot's token), and pictures an answer names sent inline; other files are not sent (a bot needs the user's
consent card for each). Teams delivers an activity again when it was not taken in time: a message is answered once."""

from __future__ import annotations

import base64
import html
import json
import logging
import mimetypes
import re
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote

from plugins.gateway.hookspecs import Incoming, PlatformError, Token, body_of, said_by
from plugins.gateway.listening import Listened, bearer_claims, listen

log = logging.getLogger("hermes.gateway")
LOGIN = "https://login.microsoftonline.com"  # where the bot's own token comes from
OPENID = "https://login.botframework.com"  # the keys that sign what the Bot Framework posts
ISSUER = "https://api.botframework.com"
SERVICE = "https://smba.trafficmanager.net/teams/"  # the global Bot Connector service
INLINE = 1 << 20  # bytes of a picture sent inline (as a data URI) at most
TAG = re.compile(r"<[^>]+>")


class Teams(Listened):
    name = "teams"
    most = 20000  # Teams takes about 28 KB a message

    def __init__(self, client_id: str, secret: str, tenant: str, host: str = "127.0.0.1", port: int = 3978,
                 login: str = LOGIN, openid: str = OPENID, service: str = SERVICE):
        import httpx2 as httpx

        super().__init__()
        self.client_id, self.secret, self.tenant, self.host, self.port = client_id, secret, tenant, host, port
        self.login, self.openid, self.service = login.rstrip("/"), openid.rstrip("/"), service
        self.client = httpx.Client(timeout=30)
        self.token = Token(self._fetch_token, early=300, least=60)  # asked for again five minutes early
        self.keys: Any = None  # the Bot Framework's signing keys (PyJWT's client: fetched, kept, fetched on a new id)
        self.services: dict = {}  # conversation -> the service its activities came from

    @property
    def offset(self) -> dict:
        """What the gateway keeps across restarts: each conversation's service (a copy: the server's thread adds)."""
        return dict(self.services)

    @offset.setter
    def offset(self, kept: Any) -> None:
        self.services.update(kept if isinstance(kept, dict) else {})

    def _fetch_token(self) -> tuple:
        """The bot's token for the Bot Connector (its client credentials exchanged) and its lifetime."""
        import httpx2 as httpx

        try:
            answer = self.client.post(f"{self.login}/{self.tenant}/oauth2/v2.0/token", data={
                "grant_type": "client_credentials", "client_id": self.client_id,
                "client_secret": self.secret, "scope": "https://api.botframework.com/.default"})
        except httpx.HTTPError as exc:
            raise PlatformError(f"teams: cannot reach {self.login} ({exc or type(exc).__name__})") from None
        found = found if isinstance(found := body_of(answer), dict) else {}
        if not answer.is_success or not found.get("access_token"):
            said = str(found.get("error_description") or answer.reason_phrase).splitlines()[0]
            raise PlatformError(f"teams: Microsoft refused TEAMS_CLIENT_ID, TEAMS_CLIENT_SECRET and "
                                f"TEAMS_TENANT_ID ({said})", lasting=answer.status_code in (400, 401),
                                status=answer.status_code)
        return str(found["access_token"]), int(found.get("expires_in") or 0)

    def _call(self, method: str, chat: str, path: str = "", **kwargs: Any) -> Any:
        import httpx2 as httpx

        url = f"{self.services.get(chat) or self.service}v3/conversations/{quote(chat, safe='')}/activities{path}"
        try:
            answer = self.client.request(method, url, headers={"Authorization": f"Bearer {self.token.get()}"}, **kwargs)
        except httpx.HTTPError as exc:
            raise PlatformError(f"teams: cannot reach the Bot Connector ({exc or type(exc).__name__})") from None
        if answer.is_success:
            return body_of(answer) or {}
        raise PlatformError(f"teams: {said_by(answer)} ({answer.status_code})", status=answer.status_code)

    # -- receiving
    def start(self) -> str:
        from jwt import PyJWKClient

        self.token.get()  # the credentials, checked before anything listens
        try:
            config = self.client.get(f"{self.openid}/v1/.well-known/openidconfiguration").json()
            self.keys = PyJWKClient(str(config["jwks_uri"]), timeout=30)
        except (ValueError, KeyError, OSError) as exc:
            raise PlatformError(f"teams: the Bot Framework's keys could not be had ({exc})") from None
        self.server = listen("teams", self.host, self.port, self._request)
        return f"the bot {self.client_id}"

    def _signed(self, headers: Any, activity: dict) -> bool:
        """Whether the Bot Framework signed the request's token for this bot and the service it names."""
        claims = bearer_claims(self.keys, headers, self.client_id, ISSUER, "teams")
        if claims is not None and claims.get("serviceurl", activity.get("serviceUrl")) != activity.get("serviceUrl"):
            log.warning("teams: a POST naming another service than its token's was refused")
            return False
        return claims is not None

    def _request(self, method: str, path: str, headers: Any, body: bytes) -> tuple:
        if path.partition("?")[0] != "/api/messages":
            return 404, {"error": "not found"}
        if method != "POST":
            return 405, {"error": "POST only"}
        try:
            activity = json.loads(body)
        except ValueError:
            return 400, {"error": "the body is no JSON"}
        if not isinstance(activity, dict):
            return 400, {"error": "the body is no activity"}
        if not self._signed(headers, activity):
            return 401, {"error": "unauthorized"}
        if activity.get("type") == "message":
            try:
                self._message(activity)
            except Exception:  # noqa: BLE001 - one message that cannot be read never fails the others
                log.exception("teams: a message could not be read")
        return 200, {}

    def _message(self, activity: dict) -> None:
        sender, conversation = activity.get("from") or {}, activity.get("conversation") or {}
        chat, bot = str(conversation.get("id") or ""), (activity.get("recipient") or {}).get("id")
        user = str(sender.get("aadObjectId") or sender.get("id") or "")
        if not chat or not user or sender.get("id") == bot or not self.first(str(activity.get("id") or "")):
            return
        if activity.get("serviceUrl"):
            self.services[chat] = str(activity["serviceUrl"]).rstrip("/") + "/"
        text, mentioned = str(activity.get("text") or ""), False
        for entity in activity.get("entities") or []:
            if isinstance(entity, dict) and entity.get("type") == "mention" and \
                    (entity.get("mentioned") or {}).get("id") == bot:
                mentioned, text = True, text.replace(str(entity.get("text") or "\0"), "")
        text = html.unescape(TAG.sub("", text))
        incoming = Incoming(chat=chat, user=user, name=str(sender.get("name") or user), text=" ".join(text.split()),
                            addressed=conversation.get("conversationType") in (None, "personal") or mentioned,
                            message=str(activity.get("id") or ""))
        for attachment in activity.get("attachments") or []:
            kind, url = str(attachment.get("contentType") or ""), str(attachment.get("contentUrl") or "")
            download = (attachment.get("content") or {}).get("downloadUrl") if isinstance(
                attachment.get("content"), dict) else None
            if kind.startswith("image/") and url:  # pasted in: fetched with the bot's token
                incoming.attach(kind, str(attachment.get("name") or ""), lambda url=url: self._fetch(url, True))
            elif download:  # a file shared: its address is signed
                name = str(attachment.get("name") or "")
                incoming.attach(mimetypes.guess_type(name)[0] or "", name, lambda url=download: self._fetch(url))
        self.inbox.put(incoming)

    def _fetch(self, url: str, signed: bool = False) -> bytes:
        import httpx2 as httpx

        try:
            answer = self.client.get(url, headers={"Authorization": f"Bearer {self.token.get()}"} if signed else {})
        except httpx.HTTPError as exc:
            raise PlatformError(f"cannot reach it ({exc or type(exc).__name__})") from None
        if not answer.is_success:
            raise PlatformError(f"{answer.status_code} {answer.reason_phrase}")
        return answer.content

    # -- answers
    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        card = [{"contentType": "application/vnd.microsoft.card.hero", "content": {"buttons": [
            {"type": "imBack", "title": label, "value": command} for label, command in buttons]}}] if buttons else []
        sent = self._call("POST", chat, json={"type": "message", "text": text, "textFormat": "markdown",  # a press:
                                              **({"attachments": card} if card else {})})  # the command, as typed
        return str(sent.get("id") or "") or None

    def edit(self, chat: str, message: str, text: str, final: bool = True) -> None:
        self._call("PUT", chat, f"/{quote(message, safe='')}", json={
            "type": "message", "id": message, "text": text, "textFormat": "markdown"})

    def send_file(self, chat: str, path: str, kind: str) -> None:
        file = Path(path)
        mime = mimetypes.guess_type(file.name)[0] or ""
        if kind != "photo" or not mime.startswith("image/") or file.stat().st_size > INLINE:
            raise PlatformError("Teams takes a file from a bot only after the user accepts it in a consent card: "
                                "not sent")
        self._call("POST", chat, json={"type": "message", "attachments": [{
            "contentType": mime, "name": file.name,
            "contentUrl": f"data:{mime};base64,{base64.b64encode(file.read_bytes()).decode()}"}]})

    def typing(self, chat: str) -> None:
        try:
            self._call("POST", chat, json={"type": "typing"})
        except PlatformError as exc:
            log.debug("teams: no typing shown: %s", exc)

    def close(self) -> None:
        super().close()
        self.client.close()
