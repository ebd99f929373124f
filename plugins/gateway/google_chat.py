"""Google Chat (hermes-agent's ``google_chat`` platform), in its HTTP mode: Google Chat POSTs each event to the app's
HTTP endpoint with an ID token Google signed (checked against Google's published keys: issuer, the endpoint as
audience, expiry, Chat's own account as its email), and the answers go through the Chat API as the app, with a token
its service account key signs for. hermes-agent's variables: ``GOOGLE_CHAT_SERVICE_ACCOUNT_JSON`` (the key file's path,
or the key itself; else ``GOOGLE_APPLICATION_CREDENTIALS``), ``GOOGLE_CHAT_HTTP_EVENTS_URL`` (the public HTTPS address
the Chat app is given; its path is where this gateway listens, on ``GOOGLE_CHAT_HTTP_EVENTS_HOST``/``_PORT``,
127.0.0.1:8642, hermes-agent's API server's), ``GOOGLE_CHAT_HTTP_EVENTS_AUDIENCE`` (default: that address),
``GOOGLE_CHAT_HTTP_EVENTS_SERVICE_ACCOUNT_EMAIL`` (default: chat@system.gserviceaccount.com),
``GOOGLE_CHAT_ALLOWED_USERS`` (emails), ``GOOGLE_CHAT_HOME_CHANNEL`` (``spaces/...``). Its other mode, a Pub/Sub
subscription, is not here.

A space (a direct message, a group chat, a named space) is one conversation, its chat the space's id (``AAAA...`` of
``spaces/AAAA...``; a target takes either); in a space Google Chat sends only the
messages that @-mention the app, read without the mention. Answers go as Google Chat shows text (*bold*, _italic_,
<url|links>), edited as they are written when streaming is on; pictures sent are read; the files an answer names are
not sent (an app uploads a file only with a user's sign-in). An event delivered again is answered once."""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any, Optional
from urllib.parse import quote, urlsplit

from plugins.gateway.hookspecs import Incoming, PlatformError, Token, body_of, said_by
from plugins.gateway.listening import Listened, bearer_claims, listen
from plugins.gateway.markup import to_starred

log = logging.getLogger("hermes.gateway")
API, CERTS = "https://chat.googleapis.com", "https://www.googleapis.com/oauth2/v3/certs"
CHAT_ACCOUNT = "chat@system.gserviceaccount.com"  # the account Google Chat's ID tokens name
SCOPE = "https://www.googleapis.com/auth/chat.bot"
EVENTS_PATH = "/api/platforms/google_chat/events"  # hermes-agent's, behind GOOGLE_CHAT_HTTP_EVENTS_URL


def service_account(value: str) -> dict:
    """The service account key: ``value`` is its JSON or its file's path; ValueError (one line) when it is neither."""
    try:
        text = value if value.lstrip().startswith("{") else open(os.path.expanduser(value), encoding="utf-8").read()
        key = json.loads(text)
    except (OSError, ValueError) as exc:
        raise ValueError(f"GOOGLE_CHAT_SERVICE_ACCOUNT_JSON: no service account key there ({exc})") from None
    if not isinstance(key, dict) or not key.get("client_email") or not key.get("private_key"):
        raise ValueError("GOOGLE_CHAT_SERVICE_ACCOUNT_JSON: not a service account key (no client_email, private_key)")
    return key


class GoogleChat(Listened):
    name = "google_chat"
    most = 4000  # Google Chat's longest text is 4096 bytes

    def __init__(self, key: dict, events_url: str, audience: str = "", accounts: frozenset = frozenset({CHAT_ACCOUNT}),
                 host: str = "127.0.0.1", port: int = 8642, api: str = API, certs: str = CERTS):
        import httpx2 as httpx

        super().__init__()
        self.key, self.audience, self.accounts = key, audience or events_url, accounts
        self.path = urlsplit(events_url).path or EVENTS_PATH
        self.host, self.port, self.api, self.certs = host, port, api.rstrip("/"), certs
        self.client = httpx.Client(timeout=30)
        self.token = Token(self._fetch_token, early=300, least=60)  # asked for again five minutes early
        self.keys: Any = None  # Google's signing keys (PyJWT's client: fetched, kept, fetched again on a new id)

    def _fetch_token(self) -> tuple:
        """The app's token for the Chat API (its service account's signed assertion exchanged) and its lifetime."""
        import httpx2 as httpx
        import jwt

        uri, now = str(self.key.get("token_uri") or "https://oauth2.googleapis.com/token"), int(time.time())
        try:
            assertion = jwt.encode({"iss": self.key["client_email"], "scope": SCOPE, "aud": uri, "iat": now,
                                    "exp": now + 3600}, self.key["private_key"], algorithm="RS256",
                                   headers={"kid": str(self.key.get("private_key_id") or "")})
        except (ValueError, TypeError, jwt.PyJWTError) as exc:
            raise PlatformError(f"google_chat: the service account's private_key cannot sign ({exc})",
                                lasting=True) from None
        try:
            answer = self.client.post(uri, data={"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                                                 "assertion": assertion})
        except httpx.HTTPError as exc:
            raise PlatformError(f"google_chat: cannot reach {uri} ({exc or type(exc).__name__})") from None
        found = found if isinstance(found := body_of(answer), dict) else {}
        if not answer.is_success or not found.get("access_token"):
            said = found.get("error_description") or found.get("error") or answer.reason_phrase
            raise PlatformError(f"google_chat: Google refused the service account {self.key['client_email']} "
                                f"({said})", lasting=answer.status_code in (400, 401), status=answer.status_code)
        return str(found["access_token"]), int(found.get("expires_in") or 0)

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx2 as httpx

        try:
            answer = self.client.request(method, self.api + path,
                                         headers={"Authorization": f"Bearer {self.token.get()}"}, **kwargs)
        except httpx.HTTPError as exc:
            raise PlatformError(f"google_chat: cannot reach {self.api} ({exc or type(exc).__name__})") from None
        if answer.is_success:
            return answer
        raise PlatformError(f"google_chat: {said_by(answer)} ({answer.status_code})", status=answer.status_code)

    # -- receiving
    def start(self) -> str:
        from jwt import PyJWKClient

        self.token.get()  # the key, checked before anything listens
        self.keys = PyJWKClient(self.certs, timeout=30)
        self.server = listen("google_chat", self.host, self.port, self._request)
        return f"the app of {self.key['client_email']}"

    def _signed(self, headers: Any) -> bool:
        """Whether Google signed the request's ID token for this endpoint, as Chat's own account."""
        claims = bearer_claims(self.keys, headers, self.audience, ["https://accounts.google.com",
                                                                    "accounts.google.com"], "google_chat")
        if claims is not None and str(claims.get("email") or "").lower() not in self.accounts:
            log.warning("google_chat: a POST signed for another account than Google Chat's was refused")
            return False
        return claims is not None

    def _request(self, method: str, path: str, headers: Any, body: bytes) -> tuple:
        if urlsplit(path).path != self.path:
            return 404, {"error": "not found"}
        if method != "POST":
            return 405, {"error": "POST only"}
        if not self._signed(headers):
            return 401, {"error": "unauthorized"}
        try:
            event = json.loads(body)
        except ValueError:
            return 400, {"error": "the body is no JSON"}
        payload = ((event.get("chat") or {}).get("messagePayload") or event) if isinstance(event, dict) else {}
        if isinstance(payload.get("message"), dict) and (payload is not event or event.get("type") == "MESSAGE"):
            try:
                self._message(payload["message"], payload.get("space") or {})
            except Exception:  # noqa: BLE001 - one message that cannot be read never fails the others
                log.exception("google_chat: a message could not be read")
        return 200, {}  # the answer comes through the Chat API

    def _message(self, message: dict, space: dict) -> None:
        sender, space = message.get("sender") or {}, message.get("space") or space
        chat, name = str(space.get("name") or "").removeprefix("spaces/"), str(message.get("name") or "")
        user = str(sender.get("email") or sender.get("name") or "")
        if sender.get("type") == "BOT" or not chat or not user or not self.first(name):
            return
        text = str(message.get("argumentText") if message.get("argumentText") is not None else message.get("text")
                   or "")  # (a space's message without the app's @mention)
        incoming = Incoming(chat=chat, user=user, name=str(sender.get("displayName") or user),
                            text=" ".join(text.split()), message=name)
        for attachment in message.get("attachment") or []:
            resource = ((attachment or {}).get("attachmentDataRef") or {}).get("resourceName")
            if resource:
                incoming.attach(str(attachment.get("contentType") or ""), str(attachment.get("contentName") or ""),
                                lambda r=str(resource): self._call(
                                    "GET", f"/v1/media/{quote(r, safe='')}", params={"alt": "media"}).content)
        self.inbox.put(incoming)

    # -- answers
    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        sent = self._call("POST", f"/v1/spaces/{chat.removeprefix('spaces/')}/messages",
                          json={"text": to_starred(text, r"<\2|\1>")})
        return str((body_of(sent) or {}).get("name") or "") or None

    def edit(self, chat: str, message: str, text: str, final: bool = True) -> None:
        self._call("PATCH", f"/v1/{message}", params={"updateMask": "text"},
                   json={"text": to_starred(text, r"<\2|\1>")})

    def send_file(self, chat: str, path: str, kind: str) -> None:
        raise PlatformError("Google Chat takes a file from an app only with a user's sign-in: not sent")

    def close(self) -> None:
        super().close()
        self.client.close()
