"""The gateway on DingTalk, end to end, in Stream mode as hermes-agent runs it: `hermes gateway run` opens the Stream
connection of a loopback DingTalk, takes the robot's messages from its websocket, acknowledges each (and the pings),
and answers through each message's session webhook; the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import pytest

from plugins_providers.testserver import reply
from tests.dingtalkapi import ALICE, DM, GROUP, DingTalkAPI
from tests.gateway.conftest import eventually, starter


@pytest.fixture
def dingtalk_api():
    with DingTalkAPI() as api:
        yield api


@pytest.fixture
def dingtalk_gateway(hermes_home, wire_server, dingtalk_api):
    start = starter(hermes_home, wire_server, {"dingtalk": {"api_url": dingtalk_api.url}}, {
        "DINGTALK_CLIENT_ID": dingtalk_api.client_id, "DINGTALK_CLIENT_SECRET": dingtalk_api.secret,
        "DINGTALK_ALLOWED_USERS": ALICE})
    yield start
    start.stop_all()


def test_a_private_message_a_mention_and_a_picture_are_answered_once_and_acknowledged(
        dingtalk_gateway, dingtalk_api, wire_server):
    wire_server.push(reply("Hi, **Alice**."), reply("42."), reply("I cannot see it."))
    running = dingtalk_gateway()
    eventually(lambda: dingtalk_api.connected or running.process.poll() is not None)
    first = dingtalk_api.say("hello")
    assert dingtalk_api.wait_sent(1) == [(DM, "Hi, **Alice**.")]  # DingTalk's Markdown shows it
    dingtalk_api.say("hello", message_id=first)  # redelivered: answered once
    dingtalk_api.say("talking among ourselves", chat=GROUP, group=True)
    dingtalk_api.say("what is 6 times 7?", chat=GROUP, group=True, mention=True)
    assert dingtalk_api.wait_sent(2)[-1] == (GROUP, "42.")
    dingtalk_api.say(kind="picture", content={"downloadCode": "dc-1"})
    assert dingtalk_api.wait_sent(3)[-1] == (DM, "I cannot see it.")
    ping = dingtalk_api.ping()
    eventually(lambda: any(a["headers"]["messageId"] == ping for a in dingtalk_api.acks))
    pong = next(a for a in dingtalk_api.acks if a["headers"]["messageId"] == ping)
    assert pong["code"] == 200 and pong["data"] == '{"opaque": "p-1"}'  # a ping is answered with its own data
    assert sum(a["data"] == '{"response": null}' for a in dingtalk_api.acks) == 5  # each message, the redelivery too
    asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]
    assert asked[:2] == ["hello", "what is 6 times 7?"] and "not read here" in str(asked[2])
    dingtalk_api.say("let me in", user="staff_mallory", chat="cid_dm_mallory")
    sent = dingtalk_api.wait_sent(4)
    assert sent[-1][0] == "cid_dm_mallory" and "staff_mallory" in sent[-1][1]  # a stranger is told their id
    assert len(wire_server.requests) == 3


def test_a_refused_app_is_one_line(dingtalk_gateway, dingtalk_api):
    refused = dingtalk_gateway(env={"DINGTALK_CLIENT_SECRET": "wrong"}).ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: dingtalk: DingTalk refused DINGTALK_CLIENT_ID and DINGTALK_CLIENT_SECRET (clientId or "
        "clientSecret is invalid)")
