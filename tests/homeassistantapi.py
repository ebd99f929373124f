"""A loopback Home Assistant for the tests of the homeassistant tools and the gateway's Home Assistant events: the REST
API (states, services, a service call, a notification) and the websocket API (auth, subscribe_events, state_changed
events), on Starlette and uvicorn.

    with HomeAssistantAPI() as home:        # home.url -> HASS_URL, home.token -> HASS_TOKEN
        home.change("binary_sensor.front_door", "off", "on", "Front Door")   # a state_changed event
        home.calls                          # [(method, path, body)] of the REST API
"""

from __future__ import annotations

import asyncio
import json
import threading

from tests.asgiserver import Served

STATES = [{"entity_id": "light.kitchen", "state": "off", "attributes": {"friendly_name": "Kitchen Light"}},
          {"entity_id": "sensor.kitchen_temperature", "state": "21.5",
           "attributes": {"friendly_name": "Kitchen Temperature", "unit_of_measurement": "°C"}},
          {"entity_id": "light.porch", "state": "off", "attributes": {"friendly_name": "Porch"}}]


class HomeAssistantAPI(Served):
    token = "ha-long-lived-token"

    def __init__(self):
        self.calls: list = []
        self.events: list = []  # state_changed events' data, sent to every subscribed websocket
        self.subscribed = 0
        self.changed = threading.Condition()
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    def change(self, entity: str, before: str, after: str, name: str = "", **attributes) -> None:
        with self.changed:
            self.events.append({"entity_id": entity, "old_state": {"entity_id": entity, "state": before},
                                "new_state": {"entity_id": entity, "state": after,
                                              "attributes": {"friendly_name": name or entity, **attributes}}})
            self.changed.notify_all()

    def notifications(self) -> list:
        return [body["message"] for method, path, body in self.calls
                if path == "services/persistent_notification/create"]

    def _app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route, WebSocketRoute

        async def api(request: Request):
            path = request.path_params["path"]
            body = await request.json() if request.method == "POST" else None
            with self.changed:
                self.calls.append((request.method, path, body))
                self.changed.notify_all()
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return JSONResponse({"message": "Unauthorized"}, status_code=401)
            if path == "states":
                return JSONResponse(STATES)
            if path.startswith("states/"):
                found = [s for s in STATES if s["entity_id"] == path.removeprefix("states/")]
                return JSONResponse(found[0]) if found else JSONResponse({"message": "Entity not found."}, 404)
            if path == "services":
                return JSONResponse([{"domain": "light", "services": {"turn_on": {
                    "description": "Turn on one or more lights.", "fields": {"brightness": {}, "entity_id": {}}}}}])
            if path == "services/light/turn_on":
                return JSONResponse([{"entity_id": body["entity_id"], "state": "on"}])
            if path == "services/persistent_notification/create":
                return JSONResponse([])
            return JSONResponse({"message": "not found"}, status_code=404)

        async def websocket(socket):
            await socket.accept()
            await socket.send_text(json.dumps({"type": "auth_required", "ha_version": "2026.12.0"}))
            try:
                auth = json.loads(await socket.receive_text())
                if auth.get("access_token") != self.token:
                    await socket.send_text(json.dumps({"type": "auth_invalid", "message": "Invalid access token"}))
                    await socket.close()
                    return
                await socket.send_text(json.dumps({"type": "auth_ok", "ha_version": "2026.12.0"}))
                asked = json.loads(await socket.receive_text())
            except Exception:  # noqa: BLE001 - the client went away
                return
            await socket.send_text(json.dumps({"id": asked["id"], "type": "result", "success": True}))
            with self.changed:
                sent = len(self.events)  # what changed before the subscription is not sent
                self.subscribed += 1
                self.changed.notify_all()
            while True:
                try:
                    await asyncio.wait_for(socket.receive_text(), 0.05)
                except asyncio.TimeoutError:
                    pass
                except Exception:  # noqa: BLE001 - the client went away
                    return
                with self.changed:
                    waiting, sent = self.events[sent:], len(self.events)
                for data in waiting:
                    await socket.send_text(json.dumps({"id": asked["id"], "type": "event", "event": {
                        "event_type": "state_changed", "data": data}}))

        return Starlette(routes=[Route("/api/{path:path}", api, methods=["GET", "POST"]),
                                 WebSocketRoute("/api/websocket", websocket)])
