"""The gateway on ntfy, end to end: `hermes gateway run` reads a loopback ntfy server's message stream and publishes
its answers there, the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import re

import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import eventually, setup_terminal, starter
from tests.ntfyapi import NtfyAPI

TOPIC = "hermes-in-7f3k"


@pytest.fixture
def ntfy_api():
    with NtfyAPI(token="tk_secret") as api:
        yield api


@pytest.fixture
def ntfy_gateway(hermes_home, wire_server, ntfy_api):
    start = starter(hermes_home, wire_server, {}, {"NTFY_SERVER_URL": ntfy_api.url, "NTFY_TOPIC": TOPIC,
                                                   "NTFY_TOKEN": ntfy_api.token, "NTFY_ALLOWED_USERS": TOPIC})
    yield start
    start.stop_all()


def test_a_topics_messages_are_answered_there_its_own_never_and_those_sent_while_stopped_after_a_restart(
        ntfy_gateway, ntfy_api, wire_server, hermes):
    ntfy_api.publish(TOPIC, "published before the gateway ever ran")  # not answered
    wire_server.push(reply("**42**."), reply("Back again."))
    running = ntfy_gateway(env={"NTFY_MARKDOWN": "true"})
    ntfy_api.wait_listening()
    ntfy_api.publish(TOPIC, "what is 6 times 7?", title="A question")
    ntfy_api.publish("elsewhere", "not read: another topic")
    assert ntfy_api.wait_sent(1) == [(TOPIC, "**42**.")]
    assert ntfy_api.sent(raw=True)[0]["headers"]["markdown"] == "yes"  # NTFY_MARKDOWN
    assert ntfy_api.sent(raw=True)[0]["headers"]["authorization"] == f"Bearer {ntfy_api.token}"
    assert [[m["content"] for m in r.body["messages"] if m["role"] == "user"] for r in wire_server.requests] == [
        ["A question\n\nwhat is 6 times 7?"]]
    assert "ntfy push notifications" in wire_server.requests[0].body["messages"][0]["content"]
    said = running.stop()
    assert len(wire_server.requests) == 1  # its own answer, published to the topic it reads, was not answered
    assert f"gateway on ntfy as {ntfy_api.url}/{TOPIC} (1 user(s) allowed)" in said
    ntfy_api.publish(TOPIC, "and while you were away?")
    ntfy_gateway()
    assert ntfy_api.wait_sent(2)[-1] == (TOPIC, "Back again.")
    assert [m["content"] for m in wire_server.requests[-1].body["messages"] if m["role"] == "user"][-1] == \
        "and while you were away?"
    eventually(lambda: "ntfy" in hermes("sessions", "list").stdout)


def test_a_refused_token_is_one_line_answers_go_to_the_publish_topic_and_messages_can_say_when(ntfy_gateway, ntfy_api, wire_server):
    refused = ntfy_gateway(env={"NTFY_TOKEN": "wrong"}).ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        f"hermes: error: ntfy: {ntfy_api.url} refused NTFY_TOKEN for the topic {TOPIC} (401)")
    wire_server.push(reply("Done."))
    ntfy_gateway(config={"gateway": {"message_timestamps": {"enabled": True}}, "timezone": "Asia/Tokyo"},
                 env={"NTFY_PUBLISH_TOPIC": "hermes-out"})
    ntfy_api.wait_listening()
    ntfy_api.publish(TOPIC, "hi")
    assert ntfy_api.wait_sent(1) == [("hermes-out", "Done.")]
    [asked] = [m["content"] for m in wire_server.requests[0].body["messages"] if m["role"] == "user"]
    assert re.fullmatch(r"\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d JST\] hi", asked), asked


def test_setup_asks_the_server_topic_and_token_and_learns_the_topic_from_its_first_message(ntfy_api, hermes_home,
                                                                                          tmp_path):
    term = setup_terminal(hermes_home, tmp_path, "--platform", "ntfy", "--wait", "30")
    for question, answer in (("ntfy server", ntfy_api.url), ("the topic it reads", TOPIC),
                             ("an access token for it", ntfy_api.token)):
        term.expect(question)
        term.line(answer)
    term.expect(f"The bot is {ntfy_api.url}/{TOPIC}. Now publish a message to the topic")
    ntfy_api.wait_listening()
    ntfy_api.publish(TOPIC, "hi")
    term.expect(f"It was {TOPIC} (id {TOPIC})")
    assert term.close() == 0
    assert (hermes_home / ".env").read_text() == (f"NTFY_SERVER_URL={ntfy_api.url}\nNTFY_TOPIC={TOPIC}\n"
                                                  f"NTFY_TOKEN={ntfy_api.token}\nNTFY_ALLOWED_USERS={TOPIC}\n")
