"""Home Assistant's events (hermes-agent's ``homeassistant`` platform): its websocket API brings the state changes of
the entities watched, each a turn of the agent (which may act on it with the ``homeassistant`` tools); an answer
becomes a notification in Home Assistant (``persistent_notification.create``). hermes-agent's settings:
``HASS_URL`` and ``HASS_TOKEN`` (the tools' too), ``platforms.homeassistant.extra.watch_domains`` (``[binary_sensor,
alarm_control_panel]``), ``watch_entities``, ``ignore_entities``, ``watch_all`` and ``cooldown_seconds`` (30: an
entity's changes within it are not told again). Nothing is watched unless one of them says so; each event is a
conversation of its own. Websocket-client, as Discord's: ``pip install 'hermes-kernel[discord]'``."""

from __future__ import annotations

import json
import logging
import time
from typing import Optional

from plugins.gateway.hookspecs import Incoming, PlatformError
from plugins.gateway.socketed import Socketed

log = logging.getLogger("hermes.gateway")


def described(entity: str, old: dict, new: dict) -> str:
    """A state change in words, as hermes-agent tells it ("" when the state did not change)."""
    before, after = (old or {}).get("state", "unknown"), (new or {}).get("state", "unknown")
    if not new or before == after:
        return ""
    attributes = new.get("attributes") or {}
    name, domain = attributes.get("friendly_name") or entity, entity.partition(".")[0]
    if domain == "sensor":
        unit = attributes.get("unit_of_measurement") or ""
        return f"[Home Assistant] {name}: changed from {before}{unit} to {after}{unit}"
    if domain == "binary_sensor":
        return f"[Home Assistant] {name}: {'triggered' if after == 'on' else 'cleared'} " \
               f"(was {'triggered' if before == 'on' else 'cleared'})"
    if domain in ("light", "switch", "fan"):
        return f"[Home Assistant] {name}: turned {'on' if after == 'on' else 'off'}"
    if domain == "climate":
        return f"[Home Assistant] {name}: HVAC mode changed from '{before}' to '{after}' (current: " \
               f"{attributes.get('current_temperature', '?')}, target: {attributes.get('temperature', '?')})"
    return f"[Home Assistant] {name} ({entity}): changed from '{before}' to '{after}'"


class HomeAssistant(Socketed):
    name = "homeassistant"
    most = 4096
    automated = True  # its events come with the token's authority: no allow-list, no commands, no approvals

    def __init__(self, url: str, token: str, domains: frozenset = (), entities: frozenset = (),
                 ignored: frozenset = (), everything: bool = False, cooldown: float = 30):
        import httpx2 as httpx

        super().__init__()
        self.url, self.token = url.rstrip("/"), token
        self.domains, self.entities, self.ignored = set(domains), set(entities), set(ignored)
        self.everything, self.cooldown, self.told = everything, cooldown, {}  # told: entity -> when
        self.client = httpx.Client(timeout=15, headers={"Authorization": f"Bearer {token}"})

    def start(self) -> str:
        import importlib.util

        if importlib.util.find_spec("websocket") is None:
            raise PlatformError("homeassistant needs websocket-client: pip install 'hermes-kernel[discord]'",
                                lasting=True)
        self.connect("the websocket")
        return self.url

    def _session(self) -> None:
        import websocket

        try:
            self.ws = ws = websocket.create_connection("ws" + self.url.removeprefix("http") + "/api/websocket",
                                                       timeout=30)
        except (OSError, websocket.WebSocketException) as exc:
            raise PlatformError(f"homeassistant: cannot reach {self.url} ({exc}): check HASS_URL") from None
        try:
            ws.recv()  # auth_required
            ws.send(json.dumps({"type": "auth", "access_token": self.token}))
            answer = json.loads(ws.recv() or "{}")
            if answer.get("type") != "auth_ok":
                raise PlatformError(f"homeassistant: it refused HASS_TOKEN ({answer.get('message') or answer})",
                                    lasting=True)
            ws.send(json.dumps({"id": 1, "type": "subscribe_events", "event_type": "state_changed"}))
            for event in self.frames(ws, "homeassistant: it closed the websocket"):
                if event.get("type") == "result" and event.get("id") == 1:
                    self.ready.set()
                    self.settled.set()
                elif event.get("type") == "event":
                    try:
                        self._changed((event.get("event") or {}).get("data") or {})
                    except Exception:  # noqa: BLE001 - one event that cannot be read never ends the connection
                        log.exception("homeassistant: an event could not be read")
        except (OSError, ValueError, websocket.WebSocketException) as exc:
            if self.stopping.is_set():
                return
            raise PlatformError(f"homeassistant: the websocket failed ({type(exc).__name__}: {exc})") from None
        finally:
            ws.close()

    def _changed(self, data: dict) -> None:
        entity = str(data.get("entity_id") or "")
        watched = entity.partition(".")[0] in self.domains or entity in self.entities or self.everything and not (
            self.domains or self.entities)
        if not entity or entity in self.ignored or not watched or time.time() - self.told.get(entity, 0) < \
                self.cooldown:
            return
        text = described(entity, data.get("old_state") or {}, data.get("new_state") or {})
        if text:
            self.told[entity] = time.time()
            self.inbox.put(Incoming(chat="ha_events", user="homeassistant", name="Home Assistant", text=text,
                                    message=f"ha_{entity}_{int(time.time())}"))

    def send(self, chat: str, text: str, final: bool = True, buttons: Optional[list] = None) -> Optional[str]:
        import httpx2 as httpx

        try:
            self.client.post(f"{self.url}/api/services/persistent_notification/create",
                             json={"title": "Hermes Agent", "message": text[:self.most]}).raise_for_status()
        except httpx.HTTPError as exc:
            raise PlatformError(f"homeassistant: the notification was not taken ({exc or type(exc).__name__})") \
                from None
        return None

    def send_file(self, chat: str, path: str, kind: str) -> None:
        raise PlatformError("files are not sent to Home Assistant")

    def typing(self, chat: str) -> None:
        pass
