"""The gateway on Feishu (Lark), end to end, in hermes-agent's webhook mode: `hermes gateway run` takes the events a
loopback Feishu Open Platform POSTs to its webhook (with the subscription's verification token, signed when it has an
encrypt key) and answers through its REST API, the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import json

import pytest

from plugins_providers.testserver import reply
from tests.feishuapi import ALICE, DM, GROUP, FeishuAPI
from tests.gateway.conftest import eventually, listening, starter
from tests.mailserver import free_port


@pytest.fixture
def feishu_api():
    with FeishuAPI() as api:
        yield api


@pytest.fixture
def feishu_gateway(hermes_home, wire_server, feishu_api):
    port = free_port()
    feishu_api.webhook = f"http://127.0.0.1:{port}/feishu/webhook"
    start = starter(hermes_home, wire_server, {"feishu": {"api_url": feishu_api.url}}, {
        "FEISHU_APP_ID": feishu_api.app_id, "FEISHU_APP_SECRET": feishu_api.secret,
        "FEISHU_VERIFICATION_TOKEN": feishu_api.verification_token, "FEISHU_WEBHOOK_PORT": str(port),
        "FEISHU_ALLOWED_USERS": ALICE})

    yield listening(start, feishu_api.webhook)
    start.stop_all()


def test_a_direct_message_a_mention_and_a_picture_are_answered_and_the_rest_is_refused(
        feishu_gateway, feishu_api, wire_server, tmp_path):
    from tests.providers.test_images import PNG

    (tmp_path / "chart.png").write_bytes(PNG)
    wire_server.push(reply(f"Hi, Alice.\nMEDIA:{tmp_path / 'chart.png'}"), reply("42."), reply("A red dot."))
    feishu_gateway(config={"agent": {"image_input_mode": "native"}})
    assert feishu_api.post({"type": "url_verification", "challenge": "c-123", "token": "verify-me"}) == (
        200, {"challenge": "c-123"})  # the subscription's handshake
    assert feishu_api.post({"type": "url_verification", "challenge": "c-1"}, token="guessed")[0] == 401
    hello = feishu_api.say("hello")
    assert feishu_api.wait_sent(1) == [(DM, "Hi, Alice.")]
    eventually(lambda: any(m["msg_type"] == "image" for m in feishu_api.messages))  # the picture the model named
    assert feishu_api.uploads == [("chart.png", PNG)]  # uploaded, then sent
    feishu_api.say(message_id=hello, text="hello")  # Feishu's redelivery: answered once
    feishu_api.say("talking among ourselves", chat=GROUP, group=True)  # no mention: not addressed
    feishu_api.say("what is 6 times 7?", chat=GROUP, group=True, mention_bot=True)
    assert feishu_api.wait_sent(2)[-1] == (GROUP, "42.")
    feishu_api.resources["img_1"] = PNG
    feishu_api.say(kind="image", content={"image_key": "img_1"})
    assert feishu_api.wait_sent(3)[-1] == (DM, "A red dot.")
    asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]
    assert asked[:2] == ["hello", "what is 6 times 7?"]  # the bot's own @mention left out
    assert asked[2][0]["type"] == "image_url" or asked[2][-1]["type"] == "image_url"
    feishu_api.say("let me in", user="ou_mallory", chat="oc_dm_mallory")
    sent = feishu_api.wait_sent(4)
    assert sent[-1][0] == "oc_dm_mallory" and "ou_mallory" in sent[-1][1]  # a stranger is told their id
    assert len(wire_server.requests) == 3


def test_a_wrong_secret_or_a_forged_event_is_one_line(feishu_gateway, feishu_api, wire_server, hermes_home):
    feishu_api.secret = "rotated"  # the app's secret changed at Feishu
    refused = feishu_gateway.start().ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: feishu: Feishu refused FEISHU_APP_ID and FEISHU_APP_SECRET (app secret invalid, code 10014)")
    feishu_api.secret = "feishu-secret"
    feishu_api.encrypt_key = "enc-key"
    feishu_gateway(env={"FEISHU_ENCRYPT_KEY": "enc-key"})
    wire_server.push(reply("Signed and answered."))
    feishu_api.say("signed")
    assert feishu_api.wait_sent(1) == [(DM, "Signed and answered.")]
    feishu_api.encrypt_key = "not-the-key"
    assert feishu_api.post({"header": {"event_type": "im.message.receive_v1"}, "event": {}})[0] == 401
    feishu_api.encrypt_key = "enc-key"
    assert feishu_api.post({"encrypt": "AbC=="})[0] == 400  # an encrypting subscription is said, not guessed at
    assert json.loads(json.dumps(feishu_api.calls)).count(["GET", "bot/v3/info"]) == 1
