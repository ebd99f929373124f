"""A loopback Meta for the gateway's WhatsApp tests: the Graph API calls the platform makes (the number's profile,
messages and reactions sent, media uploaded and fetched) on Starlette and uvicorn, and what Meta does with a user's
message: a POST to the gateway's webhook, signed with the app's secret.

    with WhatsAppAPI() as api:              # api.url -> whatsapp_cloud.api_url; api.number_id, api.token, api.app_secret
        api.webhook = "http://127.0.0.1:PORT/whatsapp/webhook"
        api.say("hello")                    # -> the message's id (wamid)
        api.wait_sent(1)                    # -> [(number, text)]
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading

from tests.asgiserver import Served, post, wait_sent

ALICE = "15550042"


class WhatsAppAPI(Served):
    def __init__(self):
        self.token, self.number_id, self.app_secret = "EAAG-test-token", "1099", "meta-app-secret"
        self.messages, self.calls, self.media, self.uploads = [], [], {}, []
        self.reactions: dict = {}  # message id -> the bot's emoji on it ("" when taken away)
        self.changed, self.next = threading.Condition(), 0
        self.webhook = ""  # the gateway's webhook URL
        self.answered = 0  # the HTTP status of the webhook's answer to the last POST
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what users do (Meta posts it to the webhook)
    def post(self, payload: dict, secret: str = "") -> int:
        body = json.dumps(payload).encode()
        signature = "sha256=" + hmac.new((secret or self.app_secret).encode(), body, hashlib.sha256).hexdigest()
        self.answered = post(self.webhook, body, {"Content-Type": "application/json",
                                                  "X-Hub-Signature-256": signature})[0]
        return self.answered

    def say(self, text: str = "", user: str = ALICE, name: str = "Alice", kind: str = "text", wamid: str = "",
            secret: str = "", **part) -> str:
        """A message from ``user`` (``kind`` and its ``part``: a picture's id and caption...); its id."""
        with self.changed:
            self.next += 1
            wamid = wamid or f"wamid.in.{self.next}"
        message = {"from": user, "id": wamid, "timestamp": "1796650000", "type": kind,
                   kind: part or {"body": text}}
        status = self.post({"object": "whatsapp_business_account", "entry": [{"id": "waba", "changes": [{
            "field": "messages", "value": {"messaging_product": "whatsapp", "metadata": {
                "phone_number_id": self.number_id}, "contacts": [{"profile": {"name": name}, "wa_id": user}],
                "messages": [message]}}]}]}, secret)
        assert status == 200 or secret, status
        return wamid

    def picture(self, data: bytes, caption: str = "") -> str:
        with self.changed:
            self.media[f"m{len(self.media)}"] = data
            media = f"m{len(self.media) - 1}"
        return self.say(kind="image", id=media, mime_type="image/png", caption=caption)

    # -- what the test reads
    def sent(self) -> list:
        with self.changed:
            return [(m["to"], m["text"]["body"]) for m in self.messages if m["type"] == "text"]

    def wait_sent(self, count: int, timeout: float = 30) -> list:
        return wait_sent(self.changed, self.sent, count, timeout)

    # -- the Graph API
    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def graph(request: Request):
            path = request.path_params["path"]
            self.calls.append((request.method, path))
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return JSONResponse({"error": {"message": "Invalid OAuth access token.", "code": 190}}, 401)
            if path == self.number_id:
                return JSONResponse({"id": self.number_id, "display_phone_number": "+1 555-0100",
                                     "verified_name": "Hermes Test"})
            if path == f"{self.number_id}/messages":
                body = await request.json()
                with self.changed:
                    self.next += 1
                    if body["type"] == "reaction":
                        self.reactions[body["reaction"]["message_id"]] = body["reaction"]["emoji"]
                    else:
                        self.messages.append(body)
                    self.changed.notify_all()
                return JSONResponse({"messaging_product": "whatsapp", "messages": [{"id": f"wamid.out.{self.next}"}]})
            if path == f"{self.number_id}/media":
                form = await request.form()
                self.uploads.append((form["file"].filename, await form["file"].read()))
                return JSONResponse({"id": f"up{len(self.uploads)}"})
            if path in self.media:
                return JSONResponse({"url": f"{self.url}/download/{path}", "file_size": len(self.media[path])})
            return JSONResponse({"error": {"message": f"Unsupported get request: {path}", "code": 100}}, 400)

        async def download(request: Request):
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return Response(status_code=401)
            return Response(self.media[request.path_params["media"]], media_type="image/png")

        return Starlette(routes=[Route("/download/{media}", download),
                                 Route("/v20.0/{path:path}", graph, methods=["GET", "POST"])])
