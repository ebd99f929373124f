"""A loopback Twilio for the gateway's SMS tests: the REST calls the platform makes (the account, a message sent, an
MMS picture fetched; HTTP basic auth with the SID and token) on Starlette and uvicorn, and what Twilio does with a
user's text: a form POSTed to the gateway's webhook, signed as Twilio signs it.

    with TwilioAPI() as api:              # api.url -> sms.api_url; api.sid, api.token, api.number
        api.webhook = "http://127.0.0.1:PORT/sms"
        api.text("hello")                 # -> the webhook's HTTP status
        api.wait_sent(1)                  # -> [(number, text)]
"""

from __future__ import annotations

import threading
import urllib.parse

from plugins.gateway.sms import twilio_signature
from tests.asgiserver import Served, post, wait_sent

ALICE = "+15550042"


class TwilioAPI(Served):
    def __init__(self):
        self.sid, self.token, self.number = "AC0123456789", "twilio-auth-token", "+15550100"
        self.messages, self.media = [], {}
        self.changed, self.next = threading.Condition(), 0
        self.webhook = ""  # the gateway's webhook, as Twilio is given it (SMS_WEBHOOK_URL)
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do (Twilio posts it to the webhook)
    def text(self, body: str, sender: str = ALICE, sid: str = "", token: str = "", pictures: tuple = ()) -> int:
        with self.changed:
            self.next += 1
            sid = sid or f"SM{self.next:030d}"
            for n, data in enumerate(pictures):
                self.media[f"{sid}-{n}"] = data
        form = {"MessageSid": sid, "AccountSid": self.sid, "From": sender, "To": self.number, "Body": body,
                "NumMedia": str(len(pictures)),
                **{f"MediaUrl{n}": f"{self.url}/media/{sid}-{n}" for n in range(len(pictures))},
                **{f"MediaContentType{n}": "image/png" for n in range(len(pictures))}}
        return post(self.webhook, urllib.parse.urlencode(form).encode(), {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Twilio-Signature": twilio_signature(token or self.token, self.webhook, form)})[0]

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(m["To"], m["Body"]) for m in self.messages]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- Twilio's REST API
    def _app(self):
        import base64

        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        def authorized(request: Request) -> bool:
            wanted = base64.b64encode(f"{self.sid}:{self.token}".encode()).decode()
            return request.headers.get("authorization") == f"Basic {wanted}"

        async def account(request: Request):
            if not authorized(request):
                return JSONResponse({"code": 20003, "message": "Authenticate", "status": 401}, status_code=401)
            return JSONResponse({"sid": self.sid, "friendly_name": "Test account", "status": "active"})

        async def messages(request: Request):
            if not authorized(request):
                return JSONResponse({"code": 20003, "message": "Authenticate", "status": 401}, status_code=401)
            form = dict(urllib.parse.parse_qsl((await request.body()).decode()))
            with self.changed:
                self.next += 1
                self.messages.append(form)
                self.changed.notify_all()
            return JSONResponse({"sid": f"SM-out-{self.next}", "status": "queued"}, status_code=201)

        async def media(request: Request):
            if not authorized(request):
                return Response(status_code=401)
            return Response(self.media[request.path_params["name"]], media_type="image/png")

        return Starlette(routes=[
            Route(f"/2010-04-01/Accounts/{self.sid}.json", account),
            Route(f"/2010-04-01/Accounts/{self.sid}/Messages.json", messages, methods=["POST"]),
            Route("/media/{name}", media)])
