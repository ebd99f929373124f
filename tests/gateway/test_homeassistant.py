"""Home Assistant's events, end to end: `hermes gateway run` subscribes to a loopback Home Assistant's state changes
(tests/homeassistantapi.py), a watched entity's change is a turn of the model (the wire-protocol server through the
real openai SDK) that may act through the homeassistant tools, and its answer becomes a notification there."""

from __future__ import annotations

import json
import time

from plugins_providers.testserver import reply
from tests.gateway.conftest import eventually, starter
from tests.homeassistantapi import HomeAssistantAPI


def test_a_watched_change_is_a_turn_that_may_switch_a_light_and_whose_answer_is_a_notification(
        hermes_home, wire_server):
    with HomeAssistantAPI() as home:
        wire_server.push(reply(tool_calls=[("ha_call_service", {"domain": "light", "service": "turn_on",
                                                                  "entity_id": "light.porch"})]),
                         reply("The front door opened: the porch light is on."))
        start = starter(hermes_home, wire_server, {"platforms": {"homeassistant": {"extra": {
            "watch_domains": ["binary_sensor"], "ignore_entities": ["binary_sensor.noisy"]}}}},
            {"HASS_URL": home.url, "HASS_TOKEN": home.token})
        try:
            running = start(args=("--platform", "homeassistant"))
            eventually(lambda: home.subscribed == 1)
            home.change("sensor.kitchen_temperature", "21.5", "22.0", "Kitchen Temperature")  # not watched
            home.change("binary_sensor.noisy", "off", "on")  # ignored
            with home.changed:  # an event that cannot be read: logged, the connection goes on
                home.events.append({"entity_id": "binary_sensor.garbled", "new_state": "not a state"})
            home.change("binary_sensor.front_door", "off", "on", "Front Door")
            home.change("binary_sensor.front_door", "on", "off", "Front Door")  # within the cooldown: not told
            eventually(lambda: home.notifications() == ["The front door opened: the porch light is on."])
            assert ("POST", "services/light/turn_on", {"entity_id": "light.porch"}) in home.calls  # no approval
            assert [m["content"] for m in wire_server.requests[0].body["messages"] if m["role"] == "user"] == [
                "[Home Assistant] Front Door: triggered (was cleared)"]
            time.sleep(0.5)
            assert len(wire_server.requests) == 2  # the one change, with its tool call
            running.stop()
            ended = start(env={"HASS_TOKEN": "wrong"}, args=("--platform", "homeassistant")).ended()
        finally:
            start.stop_all()
        assert ended.returncode == 1 and ended.stderr.strip().splitlines()[-1] == (
            "hermes: error: homeassistant: it refused HASS_TOKEN (Invalid access token)"), ended.stderr
        assert json.loads((hermes_home / "gateway" / "state.json").read_text())["sessions"] == {}
