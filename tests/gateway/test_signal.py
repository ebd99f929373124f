"""The gateway on Signal, end to end: `hermes gateway run` reads a loopback signal-cli daemon's events stream and
answers through its JSON-RPC, the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import eventually, setup_terminal, starter
from tests.signalapi import ALICE, SignalAPI


@pytest.fixture
def signal_api():
    with SignalAPI() as api:
        yield api


@pytest.fixture
def signal_gateway(hermes_home, wire_server, signal_api):
    start = starter(hermes_home, wire_server, {}, {"SIGNAL_HTTP_URL": signal_api.url, "SIGNAL_ACCOUNT":
                                                   signal_api.account, "SIGNAL_ALLOWED_USERS": ALICE})
    yield start
    start.stop_all()


def test_a_direct_message_a_group_mention_and_a_picture_are_answered_with_signals_styles(
        signal_gateway, signal_api, wire_server, tmp_path):
    from tests.providers.test_images import PNG

    picture = tmp_path / "chart.png"
    picture.write_bytes(PNG)
    wire_server.push(reply(f"**Hi**, Alice: `ls` shows it.\nMEDIA:{picture}"), reply("42."), reply("A red dot."))
    signal_gateway(config={"agent": {"image_input_mode": "native"}},
                   env={"SIGNAL_GROUP_ALLOWED_USERS": "team", "SIGNAL_REQUIRE_MENTION": "true"})
    signal_api.wait_listening()
    hello = signal_api.say("hello")
    assert signal_api.wait_sent(1) == [(ALICE, "Hi, Alice: ls shows it.")]
    assert signal_api.messages[0]["styles"] == ["0:2:BOLD", "11:2:MONOSPACE"]
    eventually(lambda: len(signal_api.messages) == 2)
    assert signal_api.messages[1]["attachments"][0].startswith("data:image/png;filename=chart.png;base64,")
    eventually(lambda: signal_api.reactions.get((ALICE, hello)) == "✅")  # 👀 while it ran, then ✅
    signal_api.say("talking among ourselves", group="team")
    signal_api.say("\ufffc what is 6 times 7?", group="team", mentions=[{"start": 0, "length": 1,
                                                                        "number": signal_api.account}])
    signal_api.say("\ufffc hello?", group="elsewhere", mentions=[{"start": 0, "length": 1,
                                                                   "number": signal_api.account}])
    signal_api.say("let me in", user="+15550007", name="Mallory")
    eventually(lambda: ("group:team", "42.") in signal_api.sent())  # before the picture: two chats answer at once,
    signal_api.picture(PNG, caption="what is this?")  # and the model's answers are taken in the order asked
    sent = signal_api.wait_sent(5)
    assert ("group:team", "42.") in sent and (ALICE, "A red dot.") in sent and (
        "+15550007", "I only answer the people my owner allowed. Your signal user id is +15550007: the owner adds "
                     "it to SIGNAL_ALLOWED_USERS.") in sent
    asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]
    assert asked[:2] == ["hello", "what is 6 times 7?"] and asked[2][0]["text"] == "what is this?"


def test_no_daemon_or_a_wrong_account_is_one_line_and_setup_learns_the_users_number(
        signal_gateway, signal_api, hermes_home, tmp_path):
    missing = signal_gateway(env={"SIGNAL_HTTP_URL": "http://127.0.0.1:9"}).ended()
    assert missing.returncode == 1 and missing.stderr.strip().splitlines()[-1].startswith(
        "hermes: error: signal: no signal-cli daemon answers at http://127.0.0.1:9 (")
    assert missing.stderr.strip().endswith("start one with `signal-cli -a +15550001 daemon --http HOST:PORT`")
    wrong = signal_gateway(env={"SIGNAL_ACCOUNT": "+15559999"}).ended()
    assert wrong.returncode == 1 and wrong.stderr.strip().splitlines()[-1] == (
        "hermes: error: signal: signal-cli does not take SIGNAL_ACCOUNT +15559999 (Specified account does not exist: "
        "+15559999)")
    term = setup_terminal(hermes_home, tmp_path, "--platform", "signal", "--wait", "30")
    term.expect("signal-cli daemon's address")
    term.line(signal_api.url)
    term.expect("the bot's Signal number")
    term.line(signal_api.account)
    term.expect("The bot is +15550001. Now send it any message from your signal account")
    signal_api.wait_listening()
    signal_api.say("hi", user="+15550055", name="Bob")
    term.expect("It was Bob (id +15550055)")
    assert term.close() == 0
    assert (hermes_home / ".env").read_text() == (f"SIGNAL_HTTP_URL={signal_api.url}\nSIGNAL_ACCOUNT="
                                                  f"{signal_api.account}\nSIGNAL_ALLOWED_USERS=+15550055\n")


def test_signals_styles_count_utf16_units_and_keep_a_links_address():
    from plugins.gateway.markup import to_styled

    text, styles = to_styled("😀 **bold** [docs](https://example.org)\n```\ncode\n```\n> a\n> b")
    assert text == "😀 bold docs (https://example.org)\ncode\n> a\n> b"
    assert styles == ["3:4:BOLD", "35:4:MONOSPACE"]  # the emoji is two UTF-16 units
