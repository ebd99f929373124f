"""The homeassistant plugin's tools through `hermes run` (a scripted model), against a loopback Home Assistant's REST
API (tests/homeassistantapi.py): what the model asks is what Home Assistant is asked, a refused token or an unknown
entity is the tool's one-line error, and the services that run commands are refused."""

from __future__ import annotations

import json

import pytest

from tests.homeassistantapi import HomeAssistantAPI


@pytest.fixture
def home():
    with HomeAssistantAPI() as served:
        yield served


def results(hermes, tmp_path, steps, env) -> list:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([*steps, "done"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "the lights", env=env)
    assert out.returncode == 0, out.stderr
    return [json.loads(m["content"]) for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]


def test_the_model_lists_reads_and_switches_what_home_assistant_has(hermes, home, tmp_path):
    env = {"HASS_URL": home.url, "HASS_TOKEN": home.token}
    listed, state, services, switched, blocked, unknown = results(hermes, tmp_path, [
        {"tool_calls": [["ha_list_entities", {"area": "kitchen"}]]},
        {"tool_calls": [["ha_get_state", {"entity_id": "sensor.kitchen_temperature"}]]},
        {"tool_calls": [["ha_list_services", {"domain": "light"}]]},
        {"tool_calls": [["ha_call_service", {"domain": "light", "service": "turn_on", "entity_id": "light.kitchen",
                                             "data": {"brightness": 128}}]]},
        {"tool_calls": [["ha_call_service", {"domain": "shell_command", "service": "wipe"}]]},
        {"tool_calls": [["ha_get_state", {"entity_id": "light.garage"}]]}], env)
    assert listed == {"count": 2, "entities": [
        {"entity_id": "light.kitchen", "state": "off", "friendly_name": "Kitchen Light"},
        {"entity_id": "sensor.kitchen_temperature", "state": "21.5", "friendly_name": "Kitchen Temperature"}]}
    assert state["state"] == "21.5" and state["attributes"]["unit_of_measurement"] == "°C"
    assert services == {"domains": {"light": {"turn_on": {"description": "Turn on one or more lights.",
                                                          "fields": ["brightness", "entity_id"]}}}}
    assert switched == {"service": "light.turn_on", "affected_entities": [{"entity_id": "light.kitchen",
                                                                           "state": "on"}]}
    assert ("POST", "services/light/turn_on", {"brightness": 128, "entity_id": "light.kitchen"}) in home.calls
    assert blocked["error"] == ("ha_call_service: shell_command services run commands or reach other machines from "
                                "Home Assistant: refused here")
    assert unknown["error"] == "ha_get_state: Home Assistant has no light.garage"
    assert not any("shell_command" in path for _, path, _ in home.calls)


def test_a_refused_token_is_one_line_and_without_one_the_tools_are_not_offered(hermes, home, tmp_path):
    [refused] = results(hermes, tmp_path, [{"tool_calls": [["ha_list_entities", {}]]}],
                        {"HASS_URL": home.url, "HASS_TOKEN": "wrong"})
    assert refused["error"] == ("ha_list_entities: Home Assistant refused HASS_TOKEN (401): make a long-lived access "
                                "token in your profile's Security tab")
    listed = json.loads(hermes("tools", "list", "--json", env={"HASS_TOKEN": ""}).stdout)
    rows = listed if isinstance(listed, list) else listed["tools"]
    assert {r["name"]: r["offered"] for r in rows if r["name"].startswith("ha_")} == {
        "ha_list_entities": False, "ha_get_state": False, "ha_list_services": False, "ha_call_service": False}
