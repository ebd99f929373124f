"""Built-in plugin homeassistant: the model looks at and controls a Home Assistant (hermes-agent's toolset).

The tools ``ha_list_entities``, ``ha_get_state``, ``ha_list_services`` and ``ha_call_service`` (toolset
``homeassistant``) ask its REST API at ``HASS_URL`` (http://homeassistant.local:8123) with a long-lived access
token, ``HASS_TOKEN`` (hermes-agent's variables; the tools are offered only where the token is set). Home Assistant
has no permissions per service, so the services that run commands or reach other machines from it (``shell_command``,
``command_line``, ``python_script``, ``pyscript``, ``hassio``, ``rest_command``) are refused here, as in
hermes-agent; domain and service names are checked before they go into a URL."""

from __future__ import annotations

import os
import re
from typing import Any

from kernel import hookimpl
from kernel.types import Tool, ToolError

URL = "http://homeassistant.local:8123"
ENTITY = re.compile(r"[a-z_][a-z0-9_]*\.[a-z0-9_]+")
NAME = re.compile(r"[a-z][a-z0-9_]*")  # a domain's or service's: nothing that walks out of the URL
BLOCKED = frozenset({"shell_command", "command_line", "python_script", "pyscript", "hassio", "rest_command"})
MOST = 200  # entities listed at once


def _token() -> str:
    return os.environ.get("HASS_TOKEN", "").strip()


def _call(method: str, path: str, tool: str, body: Any = None) -> Any:
    """Home Assistant's answer to ``method path`` as JSON; :class:`ToolError` in words when it fails."""
    import httpx2 as httpx

    base = os.environ.get("HASS_URL", "").strip().rstrip("/") or URL
    try:
        answer = httpx.request(method, f"{base}/api/{path}", json=body, timeout=15,
                               headers={"Authorization": f"Bearer {_token()}"})
    except httpx.HTTPError as exc:
        raise ToolError(f"{tool}: cannot reach Home Assistant at {base} ({exc or type(exc).__name__}): check "
                        "HASS_URL") from None
    if answer.status_code == 401:
        raise ToolError(f"{tool}: Home Assistant refused HASS_TOKEN (401): make a long-lived access token in your "
                        "profile's Security tab")
    if answer.status_code == 404:
        raise ToolError(f"{tool}: Home Assistant has no {path.removeprefix('states/').removeprefix('services/')}")
    if not answer.is_success:
        raise ToolError(f"{tool}: Home Assistant answered {answer.status_code}: {answer.text[:300]}")
    try:
        return answer.json()
    except ValueError:
        return None


def ha_list_entities(args, ctx):
    from plugins.tool_args import arg, check_args

    args = check_args(args, "ha_list_entities")
    domain = arg(args, "domain", str, tool="ha_list_entities", default="").strip().lower()
    area = arg(args, "area", str, tool="ha_list_entities", default="").strip().lower()
    found = []
    for state in _call("GET", "states", "ha_list_entities") or []:
        attributes = state.get("attributes") or {}
        name = str(attributes.get("friendly_name") or "")
        if domain and not str(state.get("entity_id", "")).startswith(domain + "."):
            continue
        if area and area not in name.lower() and area not in str(attributes.get("area") or "").lower():
            continue
        found.append({"entity_id": state.get("entity_id"), "state": state.get("state"), "friendly_name": name})
    return {"count": len(found), "entities": found[:MOST],
            **({"note": f"the first {MOST}: narrow it with domain or area"} if len(found) > MOST else {})}


def ha_get_state(args, ctx):
    from plugins.tool_args import arg, check_args

    entity = arg(check_args(args, "ha_get_state"), "entity_id", str, tool="ha_get_state").strip()
    if not ENTITY.fullmatch(entity):
        raise ToolError(f"ha_get_state: {entity!r} is no entity id (domain.name: light.kitchen)")
    state = _call("GET", f"states/{entity}", "ha_get_state") or {}
    return {key: state.get(key) for key in ("entity_id", "state", "attributes", "last_changed", "last_updated")}


def ha_list_services(args, ctx):
    from plugins.tool_args import arg, check_args

    domain = arg(check_args(args, "ha_list_services"), "domain", str, tool="ha_list_services", default="").strip()
    found = {}
    for each in _call("GET", "services", "ha_list_services") or []:
        if domain and each.get("domain") != domain:
            continue
        found[each.get("domain")] = {name: {"description": str((about or {}).get("description") or "")[:200],
                                            "fields": sorted((about or {}).get("fields") or {})}
                                     for name, about in (each.get("services") or {}).items()}
    return {"domains": found}


def ha_call_service(args, ctx):
    from plugins.tool_args import arg, check_args

    args = check_args(args, "ha_call_service")
    domain = arg(args, "domain", str, tool="ha_call_service").strip()
    service = arg(args, "service", str, tool="ha_call_service").strip()
    entity = arg(args, "entity_id", str, tool="ha_call_service", default="").strip()
    data = arg(args, "data", dict, tool="ha_call_service", default={})
    if not NAME.fullmatch(domain) or not NAME.fullmatch(service):
        raise ToolError(f"ha_call_service: {domain}.{service} is no service name (light.turn_on)")
    if domain in BLOCKED:
        raise ToolError(f"ha_call_service: {domain} services run commands or reach other machines from Home "
                        "Assistant: refused here")
    if entity and not ENTITY.fullmatch(entity):
        raise ToolError(f"ha_call_service: {entity!r} is no entity id (domain.name: light.kitchen)")
    changed = _call("POST", f"services/{domain}/{service}", "ha_call_service",
                    {**data, **({"entity_id": entity} if entity else {})})
    return {"service": f"{domain}.{service}", "affected_entities": [
        {"entity_id": s.get("entity_id"), "state": s.get("state")} for s in changed or [] if isinstance(s, dict)]}


@hookimpl
def register_tools(register, config):
    def tool(name: str, description: str, handler, properties: dict, required: list = ()) -> None:
        register(Tool(name=name, description=description, handler=handler, toolset="homeassistant",
                      parameters={"type": "object", "properties": properties, "required": list(required)},
                      check=lambda: bool(_token())))

    tool("ha_list_entities", "List Home Assistant's devices and sensors (entity id, state, name), optionally of one "
         "domain (light, switch, sensor, climate...) or whose name or area holds a word (kitchen).",
         ha_list_entities, {"domain": {"type": "string"}, "area": {"type": "string"}})
    tool("ha_get_state", "One Home Assistant entity's state and attributes (brightness, temperature...).",
         ha_get_state, {"entity_id": {"type": "string", "description": "light.kitchen"}}, ["entity_id"])
    tool("ha_list_services", "The services (actions) Home Assistant offers, optionally of one domain, with their "
         "fields.", ha_list_services, {"domain": {"type": "string"}})
    tool("ha_call_service", "Call a Home Assistant service: light.turn_on, climate.set_temperature... on an entity, "
         "with its fields in data ({\"brightness\": 128}).", ha_call_service,
         {"domain": {"type": "string"}, "service": {"type": "string"}, "entity_id": {"type": "string"},
          "data": {"type": "object"}}, ["domain", "service"])
