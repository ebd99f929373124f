"""A loopback Google for the gateway's Google Chat tests, on Starlette and uvicorn: the OAuth token endpoint (a service
account's signed assertion exchanged; the account's key made for the test), Google's published signing keys (another
key made for the test), the Chat API (messages created and edited, a picture's media), and what Google Chat does with a
user's message: an event POSTed to the app's HTTP endpoint with an ID token Google signed.

    with GoogleChatAPI() as api:           # api.url -> google_chat.api_url; api.key: the service account key
        api.endpoint = "http://127.0.0.1:PORT/api/platforms/google_chat/events"
        api.say("hello")                   # -> the message's name
        api.wait_sent(1)                   # -> [(space, text)]
"""

from __future__ import annotations

import json
import threading
import time

from tests.asgiserver import Served, post, wait_sent

CHAT_ACCOUNT, ALICE, DM, ROOM = "chat@system.gserviceaccount.com", "alice@example.com", "DMALICE", "ROOM42"


def rsa_key():
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key) -> str:
    """A private key as a service account key file holds it."""
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


class GoogleChatAPI(Served):
    def __init__(self):
        self.account_key, self.google_key = rsa_key(), rsa_key()
        self.messages, self.edits, self.media, self.assertions = [], [], {}, []
        self.changed, self.next, self.endpoint = threading.Condition(), 0, ""
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"
        self.key = {"type": "service_account", "project_id": "hermes-test", "private_key_id": "k1",
                    "client_email": "hermes-bot@hermes-test.iam.gserviceaccount.com", "token_uri": f"{self.url}/token",
                    "private_key": pem(self.account_key)}

    # -- what users do (Google Chat posts it to the app's endpoint)
    def signed(self, audience: str = "", email: str = CHAT_ACCOUNT, key=None) -> str:
        import jwt

        now = int(time.time())
        return jwt.encode({"iss": "https://accounts.google.com", "aud": audience or self.endpoint, "email": email,
                           "email_verified": True, "iat": now, "exp": now + 3600}, key or self.google_key,
                          algorithm="RS256", headers={"kid": "google-1"})

    def post(self, event: dict, token: "str | None" = None) -> int:
        signed = self.signed() if token is None else token
        return post(self.endpoint, json.dumps(event).encode(), {"Content-Type": "application/json",
                                                                   "Authorization": f"Bearer {signed}"})[0]

    def event(self, text: str = "", space: str = DM, mention: bool = False, name: str = "", **more) -> dict:
        with self.changed:
            self.next += 1
            name = name or f"spaces/{space}/messages/in-{self.next}"
        kind = "DIRECT_MESSAGE" if space == DM else "SPACE"
        message = {"name": name, "text": f"@Hermes {text}" if mention else text,
                   "sender": {"name": "users/111", "displayName": "Alice", "email": ALICE, "type": "HUMAN"},
                   "space": {"name": f"spaces/{space}", "spaceType": kind}, **more}
        if mention:
            message["argumentText"] = f" {text}"
        return {"type": "MESSAGE", "eventTime": "2026-12-07T12:00:00Z", "message": message,
                "space": message["space"], "user": message["sender"]}

    def say(self, text: str = "", **kwargs) -> str:
        event = self.event(text, **kwargs)
        assert self.post(event) == 200
        return event["message"]["name"]

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(m["space"], m["text"]) for m in self.messages]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- Google
    def _app(self):
        import jwt
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def token(request: Request):
            form = await request.form()
            try:
                claims = jwt.decode(form["assertion"], self.account_key.public_key(), algorithms=["RS256"],
                                    audience=self.key["token_uri"], issuer=self.key["client_email"])
            except (KeyError, jwt.PyJWTError) as exc:
                return JSONResponse({"error": "invalid_grant", "error_description": f"Invalid JWT Signature. {exc}"},
                                    400)
            self.assertions.append(claims)
            return JSONResponse({"access_token": f"ya29.test-{len(self.assertions)}", "expires_in": 3599,
                                 "token_type": "Bearer"})

        async def certs(request: Request):
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.google_key.public_key()))
            return JSONResponse({"keys": [{**jwk, "kid": "google-1", "use": "sig", "alg": "RS256"}]})

        def authorized(request: Request) -> bool:
            return request.headers.get("authorization", "").startswith("Bearer ya29.test-")

        async def messages(request: Request):
            if not authorized(request):
                return JSONResponse({"error": {"code": 401, "message": "Request had invalid credentials."}}, 401)
            space, body = request.path_params["space"], await request.json()
            with self.changed:
                self.next += 1
                name = f"spaces/{space}/messages/out-{self.next}"
                self.messages.append({"space": space, "name": name, **body})
                self.changed.notify_all()
            return JSONResponse({"name": name, "text": body["text"]})

        async def message(request: Request):
            if not authorized(request):
                return JSONResponse({"error": {"code": 401, "message": "Request had invalid credentials."}}, 401)
            name, body = f"spaces/{request.path_params['space']}/messages/{request.path_params['id']}", \
                await request.json()
            with self.changed:
                for sent in self.messages:
                    if sent["name"] == name and request.query_params.get("updateMask") == "text":
                        sent["text"] = body["text"]
                self.edits.append(name)
                self.changed.notify_all()
            return JSONResponse({"name": name})

        async def media(request: Request):
            if not authorized(request) or request.query_params.get("alt") != "media":
                return Response(status_code=401)
            return Response(self.media[request.path_params["resource"]], media_type="image/png")

        return Starlette(routes=[
            Route("/token", token, methods=["POST"]), Route("/oauth2/v3/certs", certs),
            Route("/v1/spaces/{space}/messages", messages, methods=["POST"]),
            Route("/v1/spaces/{space}/messages/{id}", message, methods=["PATCH"]),
            Route("/v1/media/{resource:path}", media)])
