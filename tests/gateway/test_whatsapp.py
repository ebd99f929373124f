"""The gateway on WhatsApp's Cloud API, end to end: `hermes gateway run` takes the messages a loopback Meta POSTs to
its webhook (signed with the app's secret) and answers through the loopback Graph API, the model the wire-protocol
server through the real openai SDK."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import eventually, listening, starter
from tests.mailserver import free_port
from tests.whatsappapi import ALICE, WhatsAppAPI


@pytest.fixture
def whatsapp_api():
    with WhatsAppAPI() as api:
        yield api


@pytest.fixture
def whatsapp_gateway(hermes_home, wire_server, whatsapp_api):
    port = free_port()
    whatsapp_api.webhook = f"http://127.0.0.1:{port}/whatsapp/webhook"
    start = starter(hermes_home, wire_server, {"whatsapp_cloud": {"api_url": whatsapp_api.url}}, {
        "WHATSAPP_CLOUD_PHONE_NUMBER_ID": whatsapp_api.number_id, "WHATSAPP_CLOUD_ACCESS_TOKEN": whatsapp_api.token,
        "WHATSAPP_CLOUD_APP_SECRET": whatsapp_api.app_secret, "WHATSAPP_CLOUD_VERIFY_TOKEN": "my-verify-token",
        "WHATSAPP_CLOUD_WEBHOOK_HOST": "127.0.0.1", "WHATSAPP_CLOUD_WEBHOOK_PORT": str(port),
        "WHATSAPP_CLOUD_ALLOWED_USERS": ALICE})

    yield listening(start, whatsapp_api.webhook)
    start.stop_all()


def test_a_message_and_a_picture_are_answered_with_whatsapps_marks_and_forged_or_repeated_posts_are_not(
        whatsapp_gateway, whatsapp_api, wire_server, tmp_path):
    from tests.providers.test_images import PNG

    (tmp_path / "chart.png").write_bytes(PNG)
    wire_server.push(reply(f"**Hi**, Alice: see [the docs](https://example.org).\nMEDIA:{tmp_path / 'chart.png'}"),
                     reply("A red dot."))
    whatsapp_gateway(config={"agent": {"image_input_mode": "native"}})
    handshake = urllib.request.urlopen(f"{whatsapp_api.webhook}?hub.mode=subscribe&hub.verify_token=my-verify-token"
                                       "&hub.challenge=1158201444", timeout=5)
    assert handshake.read() == b"1158201444"  # Meta's check of the webhook
    hello = whatsapp_api.say("hello", wamid="wamid.hello")
    assert whatsapp_api.wait_sent(1) == [(ALICE, "*Hi*, Alice: see the docs (https://example.org).")]
    eventually(lambda: whatsapp_api.uploads == [("chart.png", PNG)])  # the file the model named, uploaded and sent
    eventually(lambda: whatsapp_api.reactions.get(hello) == "✅")  # 👀 while it ran, then ✅
    assert whatsapp_api.say("hello", wamid="wamid.hello") == hello  # Meta delivering it again: answered once
    whatsapp_api.say("run rm -rf /", secret="forged")
    assert whatsapp_api.answered == 401  # not signed with the app's secret: not read
    whatsapp_api.picture(PNG, caption="what is this?")
    whatsapp_api.say("let me in", user="15550007", name="Mallory")
    sent = whatsapp_api.wait_sent(3)
    assert (ALICE, "A red dot.") in sent and ("15550007", "I only answer the people my owner allowed. Your "
                                              "whatsapp_cloud user id is 15550007: the owner adds it to "
                                              "WHATSAPP_CLOUD_ALLOWED_USERS.") in sent
    asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]
    assert asked[0] == "hello" and asked[1][0]["text"] == "what is this?" and asked[1][1]["type"] == "image_url"
    assert len(wire_server.requests) == 2
    assert "You are talking to a person on WhatsApp" in wire_server.requests[0].body["messages"][0]["content"]


def test_a_refused_token_or_a_public_webhook_without_the_app_secret_is_one_line(whatsapp_gateway, whatsapp_api,
                                                                                hermes_home, wire_server):
    start = starter(hermes_home, wire_server, {"whatsapp_cloud": {"api_url": whatsapp_api.url}}, {
        "WHATSAPP_CLOUD_PHONE_NUMBER_ID": whatsapp_api.number_id, "WHATSAPP_CLOUD_ACCESS_TOKEN": "wrong",
        "WHATSAPP_CLOUD_APP_SECRET": "s", "WHATSAPP_CLOUD_WEBHOOK_HOST": "127.0.0.1",
        "WHATSAPP_CLOUD_WEBHOOK_PORT": str(free_port())})
    refused = start().ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: whatsapp_cloud: the Graph API refused WHATSAPP_CLOUD_ACCESS_TOKEN (Invalid OAuth access "
        "token.)")
    unsigned = start(env={"WHATSAPP_CLOUD_ACCESS_TOKEN": whatsapp_api.token, "WHATSAPP_CLOUD_APP_SECRET": "",
                          "WHATSAPP_CLOUD_WEBHOOK_HOST": "0.0.0.0"}).ended()
    assert unsigned.returncode == 1 and "WHATSAPP_CLOUD_APP_SECRET is needed" in unsigned.stderr
