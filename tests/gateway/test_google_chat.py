"""The gateway on Google Chat, end to end, in hermes-agent's HTTP mode: `hermes gateway run` takes the events a
loopback Google Chat POSTs to the app's endpoint (each with an ID token signed by the loopback Google's key, checked
against its published keys) and answers through the loopback Chat API with a token its service account key signed
for; the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import json

import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import listening, starter
from tests.googlechatapi import ALICE, DM, ROOM, GoogleChatAPI, pem, rsa_key
from tests.mailserver import free_port


@pytest.fixture
def chat_api():
    with GoogleChatAPI() as api:
        yield api


@pytest.fixture
def chat_gateway(hermes_home, wire_server, chat_api, tmp_path):
    port = free_port()
    chat_api.endpoint = f"http://127.0.0.1:{port}/api/platforms/google_chat/events"
    key = tmp_path / "service-account.json"
    key.write_text(json.dumps(chat_api.key))
    start = starter(hermes_home, wire_server, {"google_chat": {"api_url": chat_api.url}}, {
        "GOOGLE_CHAT_SERVICE_ACCOUNT_JSON": str(key), "GOOGLE_CHAT_HTTP_EVENTS_URL": chat_api.endpoint,
        "GOOGLE_CHAT_HTTP_EVENTS_PORT": str(port), "GOOGLE_CHAT_ALLOWED_USERS": ALICE})

    run = listening(start, chat_api.endpoint)
    run.key = key
    yield run
    start.stop_all()


def test_events_google_signed_are_answered_through_the_chat_api_and_the_rest_refused(chat_gateway, chat_api,
                                                                                     wire_server, hermes):
    from tests.providers.test_images import PNG

    wire_server.push(reply("**Hi**, Alice: [the docs](https://example.com/docs)."), reply("42."), reply("A red dot."),
                     reply("Heard as an add-on."))
    chat_gateway(config={"agent": {"image_input_mode": "native"}})
    forged = chat_api.event("let me pretend")
    assert chat_api.post(forged, token=chat_api.signed(key=rsa_key())) == 401  # a key Google does not publish
    assert chat_api.post(forged, token=chat_api.signed(audience="https://another.example/events")) == 401
    assert chat_api.post(forged, token=chat_api.signed(email="someone@gmail.com")) == 401  # not Google Chat's
    assert chat_api.post(forged, token="") == 401
    hello = chat_api.say("hello")
    assert chat_api.wait_sent(1) == [(DM, "*Hi*, Alice: <https://example.com/docs|the docs>.")]  # Chat's own marks
    assert chat_api.assertions[0]["scope"] == "https://www.googleapis.com/auth/chat.bot"
    chat_api.say("hello", name=hello)  # delivered again: answered once
    chat_api.say("what is 6 times 7?", space=ROOM, mention=True)  # a space sends only what mentions the app
    assert chat_api.wait_sent(2)[-1] == (ROOM, "42.")
    chat_api.media["spaces/DMALICE/attachments/a1"] = PNG
    chat_api.say("", attachment=[{"contentName": "dot.png", "contentType": "image/png",
                                  "attachmentDataRef": {"resourceName": "spaces/DMALICE/attachments/a1"}}])
    assert chat_api.wait_sent(3)[-1] == (DM, "A red dot.")
    classic = chat_api.event("as an add-on")  # a Workspace add-on's event: the same message, wrapped otherwise
    assert chat_api.post({"commonEventObject": {"hostApp": "CHAT"}, "chat": {
        "user": classic["user"], "eventTime": classic["eventTime"],
        "messagePayload": {"message": classic["message"], "space": classic["space"]}}}) == 200
    assert chat_api.wait_sent(4)[-1] == (DM, "Heard as an add-on.")
    asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]
    assert asked[:2] == ["hello", "what is 6 times 7?"]  # the app's own @mention left out
    assert any(part.get("type") == "image_url" for part in asked[2])
    stranger = chat_api.event("let me in", space="DMMALLORY")
    stranger["message"]["sender"] = {"name": "users/666", "displayName": "Mallory", "email": "mallory@example.com"}
    assert chat_api.post(stranger) == 200
    said = chat_api.wait_sent(5)[-1]
    assert said[0] == "DMMALLORY" and "mallory@example.com" in said[1]  # a stranger is told their id
    assert len(wire_server.requests) == 4
    sent = hermes("send", "--to", f"google_chat:spaces/{DM}", "deploy finished", env={
        "GOOGLE_CHAT_SERVICE_ACCOUNT_JSON": str(chat_gateway.key), "GOOGLE_CHAT_HTTP_EVENTS_URL": chat_api.endpoint})
    assert sent.returncode == 0, sent.stderr
    assert chat_api.wait_sent(6)[-1] == (DM, "deploy finished")


def test_a_key_google_refuses_or_none_is_one_line(chat_gateway, chat_api, tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**chat_api.key, "private_key": pem(rsa_key())}))  # a key the account does not have
    refused = chat_gateway.start(env={"GOOGLE_CHAT_SERVICE_ACCOUNT_JSON": str(other)}).ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1].startswith(
        "hermes: error: google_chat: Google refused the service account hermes-bot@hermes-test.iam.gserviceaccount."
        "com (Invalid JWT Signature."), refused.stderr
    none = chat_gateway.start(env={"GOOGLE_CHAT_SERVICE_ACCOUNT_JSON": str(tmp_path / "missing.json")}).ended()
    assert none.returncode == 1 and "GOOGLE_CHAT_SERVICE_ACCOUNT_JSON: no service account key there" in none.stderr
