"""The gateway on Mattermost, end to end: `hermes gateway run` on a loopback Mattermost's websocket and REST API v4,
the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import eventually, starter
from tests.mattermostapi import MattermostAPI


@pytest.fixture
def mattermost_api():
    with MattermostAPI() as api:
        yield api


@pytest.fixture
def mattermost_gateway(hermes_home, wire_server, mattermost_api):
    start = starter(hermes_home, wire_server, {}, {"MATTERMOST_URL": mattermost_api.url,
                                                   "MATTERMOST_TOKEN": mattermost_api.token,
                                                   "MATTERMOST_ALLOWED_USERS": "alice-id"})
    yield start
    start.stop_all()


def test_a_direct_message_a_mention_and_a_picture_are_answered_and_a_refused_token_is_one_line(
        mattermost_gateway, mattermost_api, wire_server, tmp_path):
    from tests.providers.test_images import PNG

    (tmp_path / "chart.png").write_bytes(PNG)
    wire_server.push(reply(["Hi, ", "**Alice**", "."], frame_delay=0.8), reply("42."),  # (longer than a draft's 1.5 s)
                     reply(f"A red dot.\nMEDIA:{tmp_path / 'chart.png'}"), reply("Welcome back."))
    running = mattermost_gateway(config={"agent": {"image_input_mode": "native"}})
    eventually(lambda: mattermost_api.challenged == [mattermost_api.token])
    hello = mattermost_api.say("hello")
    assert mattermost_api.wait_sent(1) == [("dm-alice", "Hi, **Alice**.")]  # Mattermost shows the Markdown itself
    eventually(lambda: mattermost_api.reactions.get(hello) == ["white_check_mark"])  # eyes while it ran, then ✅
    mattermost_api.say("talking among ourselves", channel="town-square", direct=False)
    mattermost_api.say("@hermes what is 6 times 7?", channel="town-square", direct=False, mention=True)
    mattermost_api.say("let me in", user="mallory-id", channel="dm-mallory")
    eventually(lambda: ("town-square", "42.") in mattermost_api.sent())  # before the picture: two chats answer at
    mattermost_api.files["f1"] = PNG  # once, and the model's answers are taken in the order asked
    mattermost_api.say("what is this?", file_ids=["f1"])
    sent = mattermost_api.wait_sent(4)
    assert ("town-square", "42.") in sent and ("dm-alice", "A red dot.") in sent and (
        "dm-mallory", "I only answer the people my owner allowed. Your mattermost user id is mallory-id: the owner "
                      "adds it to MATTERMOST_ALLOWED_USERS.") in sent
    asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]
    assert asked[:2] == ["hello", "what is 6 times 7?"] and asked[2][0]["text"] == "what is this?"
    assert "You are talking to people on Mattermost" in wire_server.requests[0].body["messages"][0]["content"]
    assert any(method == "PUT" and path.endswith("/patch") for method, path, _ in mattermost_api.calls)  # a draft
    eventually(lambda: any(p.get("file_ids") for p in mattermost_api.posts))  # the file the model named, uploaded
    [attached] = [p for p in mattermost_api.posts if p.get("file_ids")]
    assert mattermost_api.files[attached["file_ids"][0]] == PNG and attached["channel_id"] == "dm-alice"
    running.stop()
    mattermost_api.say("while you were away")  # Mattermost replays nothing: the gateway fetches it at its start
    running = mattermost_gateway()
    eventually(lambda: ("dm-alice", "Welcome back.") in mattermost_api.sent())
    assert [m["content"] for m in wire_server.requests[-1].body["messages"] if m["role"] == "user"][-1] == \
        "while you were away"
    running.stop()
    refused = mattermost_gateway(env={"MATTERMOST_TOKEN": "wrong"}).ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: mattermost: the server refused MATTERMOST_TOKEN (Invalid or expired session, please login "
        "again.)")


def test_with_reply_mode_thread_a_mention_is_answered_in_its_thread_and_the_thread_read_whole(
        mattermost_gateway, mattermost_api, wire_server):
    wire_server.push(reply("42."), reply("84."))
    mattermost_gateway(env={"MATTERMOST_REPLY_MODE": "thread"})
    eventually(lambda: mattermost_api.challenged == [mattermost_api.token])
    asked = mattermost_api.say("@hermes what is 6 times 7?", channel="town-square", direct=False, mention=True)
    assert mattermost_api.wait_sent(1) == [("town-square", "42.")]
    assert mattermost_api.posts[0]["root_id"] == asked  # under the post
    mattermost_api.say("and times 2?", channel="town-square", direct=False, root=asked)  # no mention needed
    assert mattermost_api.wait_sent(2)[-1] == ("town-square", "84.")
    assert mattermost_api.posts[-1]["root_id"] == asked
    assert [m["content"] for m in wire_server.requests[-1].body["messages"] if m["role"] == "user"] == [
        "what is 6 times 7?", "and times 2?"]  # the thread is one conversation
