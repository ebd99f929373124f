"""The gateway on iMessage through BlueBubbles, end to end: `hermes gateway run` registers its webhook with a loopback
BlueBubbles server, takes the new messages the server POSTs to it (with the password in the address it registered)
and answers through the server's REST API; the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import pytest

from plugins_providers.testserver import reply
from tests.bluebubblesapi import ALICE, DM, GROUP, BlueBubblesAPI
from tests.gateway.conftest import eventually, starter
from tests.mailserver import free_port


@pytest.fixture
def bb_api():
    with BlueBubblesAPI() as api:
        yield api


@pytest.fixture
def bb_gateway(hermes_home, wire_server, bb_api):
    port = free_port()
    start = starter(hermes_home, wire_server, {}, {
        "BLUEBUBBLES_SERVER_URL": bb_api.url, "BLUEBUBBLES_PASSWORD": bb_api.password,
        "BLUEBUBBLES_WEBHOOK_PORT": str(port), "BLUEBUBBLES_ALLOWED_USERS": ALICE})

    def run(**kwargs):
        running = start(**kwargs)

        def registered() -> bool:
            assert running.process.poll() is None, running.stop()
            return bool(bb_api.hooks)

        eventually(registered)
        return running

    run.start = start  # (a start that is to fail: not waited for)
    yield run
    start.stop_all()


def test_imessages_are_answered_and_the_webhook_is_registered_once_and_removed(
        bb_gateway, bb_api, wire_server, tmp_path):
    from tests.providers.test_images import PNG

    (tmp_path / "chart.png").write_bytes(PNG)
    wire_server.push(reply(f"**Hi**, Alice.\nMEDIA:{tmp_path / 'chart.png'}"), reply("42."), reply("A red dot."))
    running = bb_gateway(config={"agent": {"image_input_mode": "native"}})
    [hook] = bb_api.hooks.values()
    assert hook["url"].endswith(f"/bluebubbles-webhook?password={bb_api.password}") and hook["events"] == [
        "new-message"]
    assert bb_api.post({"type": "new-message", "data": {}}, url=hook["url"].partition("?")[0]) == [401]
    assert bb_api.post({"type": "new-message", "data": {}}, url=hook["url"].replace(bb_api.password, "guess")) == [401]
    hello = bb_api.say("hello")
    assert bb_api.wait_sent(1) == [(DM, "Hi, Alice.")]  # plain text
    eventually(lambda: bb_api.files == [(DM, "chart.png", PNG)])  # the picture the model named, attached
    assert DM in bb_api.typing  # the server has its Private API: typing shown
    bb_api.say("hello", guid=hello)  # delivered twice: answered once
    bb_api.say("a tapback", associatedMessageType=2001, associatedMessageGuid=hello)
    bb_api.say("sent from the Mac itself", isFromMe=True)
    bb_api.say("what is 6 times 7?", chat=GROUP)  # a group: every message, unless BLUEBUBBLES_REQUIRE_MENTION
    assert bb_api.wait_sent(2)[-1] == (GROUP, "42.")
    bb_api.attachments["att-1"] = PNG
    bb_api.say("\ufffc", attachments=[{"guid": "att-1", "mimeType": "image/png", "transferName": "IMG_1.png"}])
    assert bb_api.wait_sent(3)[-1] == (DM, "A red dot.")
    asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]
    assert asked[:2] == ["hello", "what is 6 times 7?"]
    assert any(part.get("type") == "image_url" for part in asked[2])
    bb_api.say("let me in", user="mallory@example.com", chat="iMessage;-;mallory@example.com")
    said = bb_api.wait_sent(4)[-1]
    assert said[0] == "iMessage;-;mallory@example.com" and "mallory@example.com" in said[1]  # told their id
    assert len(wire_server.requests) == 3
    running.stop()
    assert bb_api.hooks == {}  # the server no longer posts to a gateway that is gone


def test_a_group_asks_for_a_mention_when_told_and_a_number_is_its_direct_chat(bb_gateway, bb_api, wire_server,
                                                                            hermes):
    wire_server.push(reply("Here."))
    bb_gateway(env={"BLUEBUBBLES_REQUIRE_MENTION": "true"})
    bb_api.say("talking among ourselves", chat=GROUP)
    bb_api.say("Hermes, are you there?", chat=GROUP)
    assert bb_api.wait_sent(1) == [(GROUP, "Here.")]
    assert [m["content"] for m in wire_server.requests[0].body["messages"] if m["role"] == "user"] == [
        "are you there?"]
    sent = hermes("send", "--to", f"bluebubbles:{ALICE}", "deploy finished", env={
        "BLUEBUBBLES_SERVER_URL": bb_api.url, "BLUEBUBBLES_PASSWORD": bb_api.password})
    assert sent.returncode == 0, sent.stderr
    assert bb_api.wait_sent(2)[-1] == (DM, "deploy finished")


def test_a_wrong_password_is_one_line(bb_gateway, bb_api):
    refused = bb_gateway.start(env={"BLUEBUBBLES_PASSWORD": "wrong"}).ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: bluebubbles: the server refused BLUEBUBBLES_PASSWORD (Invalid password!)")
    assert bb_api.hooks == {}
