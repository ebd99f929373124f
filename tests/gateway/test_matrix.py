"""The gateway on Matrix, end to end: `hermes gateway run` syncs with a loopback homeserver (long polling) and answers
through its client-server API, the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import json

import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import eventually, setup_terminal, starter
from tests.matrixapi import ALICE, MatrixAPI


@pytest.fixture
def matrix_api():
    with MatrixAPI() as api:
        yield api


@pytest.fixture
def matrix_gateway(hermes_home, wire_server, matrix_api):
    """``matrix_gateway(config={}, env={})``: a running ``hermes gateway run`` on the loopback homeserver, alice
    allowed."""
    start = starter(hermes_home, wire_server, {}, {"MATRIX_HOMESERVER": matrix_api.url,
                                                   "MATRIX_ACCESS_TOKEN": matrix_api.token,
                                                   "MATRIX_ALLOWED_USERS": ALICE})
    yield start
    start.stop_all()


def asked(wire_server) -> list:
    return [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]


def test_invited_it_joins_answers_a_direct_chat_and_a_room_when_named_and_goes_on_after_a_restart(
        matrix_gateway, matrix_api, wire_server, hermes):
    matrix_api.room("!old:test", ALICE)
    matrix_api.say("!old:test", "said before the gateway ever ran")  # history: not answered
    wire_server.push(reply("Hi, **Alice**."), reply("42."), reply("Welcome back."), reply("84."))
    running = matrix_gateway()
    matrix_api.invite("!dm:test")
    matrix_api.invite("!spam:test", by="@mallory:test")  # a stranger's invitation: declined
    hello = matrix_api.say("!dm:test", "hello")
    assert matrix_api.wait_sent(1) == [("!dm:test", "Hi, **Alice**.")]
    [(_, content)] = matrix_api.sent(raw=True)
    assert content["formatted_body"] == "Hi, <b>Alice</b>." and content["format"] == "org.matrix.custom.html"
    assert "You are talking to people on Matrix" in wire_server.requests[0].body["messages"][0]["content"]
    eventually(lambda: matrix_api.reactions(hello) == ["✅"])  # 👀 while it ran, redacted, then ✅
    assert matrix_api.declined == ["!spam:test"]
    matrix_api.room("!team:test", ALICE, "@bob:test")
    matrix_api.say("!team:test", "talking among ourselves", user="@bob:test")
    matrix_api.say("!team:test", "hermes: what is 6 times 7?", **{"m.mentions": {"user_ids": ["@hermes:test"]}})
    matrix_api.encrypted("!secret:test")
    matrix_api.room("!secret:test", ALICE)
    matrix_api.encrypted("!secret:test")
    matrix_api.encrypted("!secret:test")
    sent = matrix_api.wait_sent(3)
    assert ("!team:test", "42.") in sent and sent.count(("!secret:test", (
        "This room is encrypted, and I read only unencrypted Matrix rooms (end-to-end encryption is not supported "
        "here): talk to me in a room without it."))) == 1
    assert asked(wire_server) == ["hello", "what is 6 times 7?"]
    running.stop()
    matrix_api.say("!dm:test", "while you were away")  # answered after the restart: the sync token was kept
    matrix_gateway()
    assert matrix_api.wait_sent(4)[-1] == ("!dm:test", "Welcome back.")
    assert asked(wire_server)[-1] == "while you were away"
    matrix_api.say("!team:test", "and times 2?", **{"m.relates_to": {"m.in_reply_to": {
        "event_id": matrix_api.last_sent("!team:test")}}})  # an answer to the bot's message before the restart
    assert matrix_api.wait_sent(5)[-1] == ("!team:test", "84.")
    sessions = json.loads(hermes("sessions", "list", "--json").stdout)
    assert {s["platform"] for s in sessions} == {"matrix"} and len(sessions) == 2  # one conversation per room


def test_pictures_drafts_a_password_login_and_refusals(matrix_gateway, matrix_api, wire_server):
    from tests.providers.test_images import PNG

    wire_server.push(reply("A red dot."), reply(["The answer ", "comes ", "slowly, ", "word by word."],
                                                frame_delay=0.5))
    running = matrix_gateway(config={"agent": {"image_input_mode": "native"}},
                             env={"MATRIX_ACCESS_TOKEN": "", "MATRIX_USER_ID": "@hermes:test",
                                  "MATRIX_PASSWORD": matrix_api.password})
    matrix_api.invite("!dm:test")
    matrix_api.picture("!dm:test", PNG, caption="what is this?")
    assert matrix_api.wait_sent(1) == [("!dm:test", "A red dot.")]
    [question] = [m for m in wire_server.requests[0].body["messages"] if m["role"] == "user"]
    assert question["content"][0]["text"] == "what is this?" and question["content"][1]["type"] == "image_url"
    matrix_api.say("!dm:test", "and slowly?")
    assert matrix_api.wait_sent(2)[-1] == ("!dm:test", "The answer comes slowly, word by word.")
    assert any((e["content"].get("m.relates_to") or {}).get("rel_type") == "m.replace" for _, _, e in
               (item for item in matrix_api.log if item[0] == "event"))  # a draft, edited as it was written
    running.stop()
    assert [path for method, path, _ in matrix_api.calls if path in ("login", "logout")] == ["login", "logout"]
    refused = matrix_gateway(env={"MATRIX_ACCESS_TOKEN": "wrong"}).ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: matrix: the homeserver refused MATRIX_ACCESS_TOKEN (M_UNKNOWN_TOKEN: Invalid access token "
        "passed.)")
    wrong = matrix_gateway(env={"MATRIX_ACCESS_TOKEN": "", "MATRIX_USER_ID": "@hermes:test",
                                "MATRIX_PASSWORD": "guess"}).ended()
    assert wrong.returncode == 1 and wrong.stderr.strip().splitlines()[-1] == (
        "hermes: error: matrix: the homeserver refused MATRIX_USER_ID and MATRIX_PASSWORD (M_FORBIDDEN: Invalid "
        "username or password)")


def test_setup_on_matrix_asks_the_homeserver_and_learns_the_users_id_from_a_direct_chat(matrix_api, hermes_home,
                                                                                          tmp_path):
    term = setup_terminal(hermes_home, tmp_path, "--platform", "matrix", "--wait", "30")
    term.expect("Matrix access token")
    term.line(matrix_api.token)
    term.expect("Matrix homeserver")
    term.line(matrix_api.url)
    term.expect("The bot is @hermes:test. Now invite it to a direct chat and send any message from your matrix account")
    matrix_api.invite("!dm:test", by="@bob:test")  # nobody is allowed yet: setup accepts the owner's invitation
    matrix_api.say("!dm:test", "hi", user="@bob:test")
    term.expect("It was @bob:test (id @bob:test)")
    assert term.close() == 0
    assert (hermes_home / ".env").read_text() == (f"MATRIX_ACCESS_TOKEN={matrix_api.token}\nMATRIX_HOMESERVER="
                                                  f"{matrix_api.url}\nMATRIX_ALLOWED_USERS=@bob:test\n")


def test_an_offset_a_gateway_before_kept_is_read_and_malformed_parts_of_one_are_left_out():
    from plugins.gateway.matrix import Matrix
    from plugins.gateway.slack import Slack

    matrix, slack = Matrix("http://127.0.0.1:9", token="t"), Slack("xoxb-1", "xapp-1")
    matrix.offset, slack.offset = "s72_1", 0  # a sync token alone; the 0 a socketed platform's was
    assert (matrix.offset, slack.offset) == ({"since": "s72_1", "mine": []}, {"threads": [], "read": {}})
    matrix.offset, slack.offset = {"since": "s73", "mine": ["$e1", 7]}, [["171.2", "C1"], "junk", ["x"]]
    assert (matrix.offset, slack.offset) == ({"since": "s73", "mine": ["$e1", "7"]}, {"threads": [["171.2", "C1"]],
                                                                                      "read": {}})
    from plugins.gateway.discord import Discord

    discord = Discord("token")
    discord.offset = [["1005", "general"]]  # the threads alone, as a gateway before kept them
    assert discord.offset == {"threads": [["1005", "general"]], "read": {}}
    discord.offset = {"read": {"dm-42": ["1009", ""], "bad": "x"}}
    assert discord.offset == {"threads": [["1005", "general"]], "read": {"dm-42": ["1009", ""]}}
    matrix.close(), slack.close(), discord.close()
