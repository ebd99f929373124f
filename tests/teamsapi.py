"""A loopback Microsoft Teams for the gateway's Teams tests, on Starlette and uvicorn: Entra ID's token endpoint (the
bot's client credentials), the Bot Framework's OpenID configuration and signing keys (an RSA key made for the test),
a Bot Connector service (activities sent, edited, typing; a pasted picture fetched with the bot's token), and what
Teams does with a user's message: an activity POSTed to the bot's messaging endpoint with a token the Bot Framework
signed.

    with TeamsAPI() as api:                # api.url -> teams.api_url; api.client_id, api.secret, api.tenant
        api.endpoint = "http://127.0.0.1:PORT/api/messages"
        api.say("hello")                   # -> the activity's id
        api.wait_sent(1)                   # -> [(conversation, text)]
"""

from __future__ import annotations

import json
import threading
import time

from tests.asgiserver import Served, post, wait_sent

ISSUER = "https://api.botframework.com"
ALICE, PERSONAL, CHANNEL = "aad-alice", "a:1personal-alice", "19:general@thread.tacv2"


class TeamsAPI(Served):
    def __init__(self):
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.client_id, self.secret, self.tenant = "11111111-2222-3333-4444-555555555555", "teams-secret", "tenant-1"
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.activities, self.edits, self.typing, self.pictures = [], [], [], {}
        self.tokens_issued, self.changed, self.next, self.endpoint = 0, threading.Condition(), 0, ""
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do (Teams posts it to the messaging endpoint)
    def signed(self, audience: str = "", service: str = "", key=None) -> str:
        import jwt

        now = int(time.time())
        return jwt.encode({"iss": ISSUER, "aud": audience or self.client_id, "nbf": now - 5, "exp": now + 3600,
                           "serviceurl": service or self.url + "/"}, key or self.key, algorithm="RS256",
                          headers={"kid": "test-key"})

    def post(self, activity: dict, token: "str | None" = None) -> int:
        signed = self.signed() if token is None else token
        return post(self.endpoint, json.dumps(activity).encode(), {"Content-Type": "application/json",
                                                                   "Authorization": f"Bearer {signed}"})[0]

    def activity(self, text: str = "", conversation: str = PERSONAL, kind: str = "personal", mention: bool = False,
                 activity_id: str = "", **more) -> dict:
        with self.changed:
            self.next += 1
            activity_id = activity_id or f"in-{self.next}"
        bot = f"28:{self.client_id}"
        return {"type": "message", "id": activity_id, "serviceUrl": self.url + "/", "channelId": "msteams",
                "from": {"id": "29:1alice", "name": "Alice", "aadObjectId": ALICE},
                "conversation": {"id": conversation, "conversationType": kind, "tenantId": self.tenant},
                "recipient": {"id": bot, "name": "Hermes"},
                "text": f"<at>Hermes</at> {text}" if mention else text,
                "entities": [{"type": "mention", "mentioned": {"id": bot, "name": "Hermes"}, "text": "<at>Hermes</at>"}]
                if mention else [], **more}

    def say(self, text: str = "", **kwargs) -> str:
        activity = self.activity(text, **kwargs)
        assert self.post(activity) == 200
        return activity["id"]

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(a["conversation"], a["text"]) for a in self.activities if a.get("text")]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- Entra ID, the Bot Framework's keys, the Bot Connector
    def _app(self):
        import jwt
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def token(request: Request):
            form = await request.form()
            if request.path_params["tenant"] != self.tenant or (form.get("client_id"), form.get("client_secret")) != (
                    self.client_id, self.secret):
                return JSONResponse({"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client "
                                     "secret provided.\r\nTrace ID: 0"}, 401)
            self.tokens_issued += 1
            return JSONResponse({"token_type": "Bearer", "expires_in": 3599,
                                 "access_token": f"bot-token-{self.tokens_issued}"})

        async def openid(request: Request):
            return JSONResponse({"issuer": ISSUER, "jwks_uri": f"{self.url}/v1/keys",
                                 "id_token_signing_alg_values_supported": ["RS256"]})

        async def keys(request: Request):
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
            return JSONResponse({"keys": [{**jwk, "kid": "test-key", "use": "sig", "alg": "RS256"}]})

        async def connector(request: Request):
            if not request.headers.get("authorization", "").startswith("Bearer bot-token-"):
                return JSONResponse({"error": {"code": "Unauthorized", "message": "Authorization has been denied"}},
                                    401)
            conversation, body = request.path_params["conversation"], await request.json()
            with self.changed:
                if body.get("type") == "typing":
                    self.typing.append(conversation)
                elif request.method == "PUT":
                    self.edits.append(request.path_params["rest"].lstrip("/"))
                    for activity in self.activities:
                        if activity["id"] == self.edits[-1]:
                            activity["text"] = body["text"]
                else:
                    self.next += 1
                    self.activities.append({**body, "conversation": conversation, "id": f"out-{self.next}"})
                self.changed.notify_all()
            return JSONResponse({"id": f"out-{self.next}"})

        async def picture(request: Request):
            if not request.headers.get("authorization", "").startswith("Bearer bot-token-"):
                return Response(status_code=401)
            return Response(self.pictures[request.path_params["name"]], media_type="image/png")

        return Starlette(routes=[
            Route("/{tenant}/oauth2/v2.0/token", token, methods=["POST"]),
            Route("/v1/.well-known/openidconfiguration", openid), Route("/v1/keys", keys),
            Route("/v3/conversations/{conversation}/activities{rest:path}", connector, methods=["POST", "PUT"]),
            Route("/pictures/{name}", picture)])
