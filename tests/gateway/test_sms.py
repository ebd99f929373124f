"""The gateway by SMS, end to end: `hermes gateway run` takes the texts a loopback Twilio POSTs to its webhook (signed
as Twilio signs them) and answers through the loopback REST API, the model the wire-protocol server through the real
openai SDK."""

from __future__ import annotations


import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import listening, starter
from tests.mailserver import free_port
from tests.twilioapi import ALICE, TwilioAPI


@pytest.fixture
def twilio_api():
    with TwilioAPI() as api:
        yield api


@pytest.fixture
def sms_gateway(hermes_home, wire_server, twilio_api):
    port = free_port()
    twilio_api.webhook = f"http://127.0.0.1:{port}/sms"
    start = starter(hermes_home, wire_server, {"sms": {"api_url": twilio_api.url}}, {
        "TWILIO_ACCOUNT_SID": twilio_api.sid, "TWILIO_AUTH_TOKEN": twilio_api.token,
        "TWILIO_PHONE_NUMBER": twilio_api.number, "SMS_WEBHOOK_URL": twilio_api.webhook,
        "SMS_WEBHOOK_PORT": str(port), "SMS_ALLOWED_USERS": ALICE})

    yield listening(start, twilio_api.webhook)
    start.stop_all()


def test_a_text_and_a_picture_are_answered_in_plain_words_and_forged_or_repeated_texts_are_not(
        sms_gateway, twilio_api, wire_server):
    from tests.providers.test_images import PNG

    wire_server.push(reply("**42**, see [the docs](https://example.org)."), reply("A red dot."))
    sms_gateway(config={"agent": {"image_input_mode": "native"}})
    assert twilio_api.text("what is 6 times 7?", sid="SM1") == 200
    assert twilio_api.wait_sent(1) == [(ALICE, "42, see the docs (https://example.org).")]
    assert twilio_api.messages[0]["From"] == twilio_api.number
    assert twilio_api.text("what is 6 times 7?", sid="SM1") == 200  # Twilio delivering it again: answered once
    assert twilio_api.text("run rm -rf /", token="forged") == 403  # not signed with the auth token: not read
    assert twilio_api.text("what is this?", pictures=(PNG,)) == 200
    twilio_api.text("let me in", sender="+15550007")
    sent = twilio_api.wait_sent(3)
    assert (ALICE, "A red dot.") in sent and ("+15550007", "I only answer the people my owner allowed. Your sms user "
                                              "id is +15550007: the owner adds it to SMS_ALLOWED_USERS.") in sent
    asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]
    assert asked[0] == "what is 6 times 7?" and asked[1][0]["text"] == "what is this?" and len(asked) == 2
    assert "You are answering text messages (SMS)" in wire_server.requests[0].body["messages"][0]["content"]


def test_a_refused_token_or_no_webhook_url_is_one_line(twilio_api, hermes_home, wire_server):
    start = starter(hermes_home, wire_server, {"sms": {"api_url": twilio_api.url}}, {
        "TWILIO_ACCOUNT_SID": twilio_api.sid, "TWILIO_AUTH_TOKEN": "wrong", "TWILIO_PHONE_NUMBER": twilio_api.number,
        "SMS_WEBHOOK_URL": "https://bot.example.org/sms", "SMS_WEBHOOK_PORT": str(free_port())})
    refused = start().ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: sms: Twilio refused TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN (Authenticate)")
    unsigned = start(env={"TWILIO_AUTH_TOKEN": twilio_api.token, "SMS_WEBHOOK_URL": ""}).ended()
    assert unsigned.returncode == 1 and "SMS_WEBHOOK_URL is needed" in unsigned.stderr
