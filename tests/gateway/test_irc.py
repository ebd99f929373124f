"""The gateway on IRC, end to end: `hermes gateway run` connects to a loopback IRC server (tests/ircserver.py), joins
its channel and answers private messages and the channel's lines that name it, the model the wire-protocol server
through the real openai SDK."""

from __future__ import annotations

import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import eventually, starter
from tests.ircserver import IrcServer


@pytest.fixture
def irc():
    with IrcServer() as server:
        yield server


@pytest.fixture
def irc_gateway(hermes_home, wire_server, irc):
    start = starter(hermes_home, wire_server, {}, {"IRC_SERVER": "127.0.0.1", "IRC_PORT": str(irc.port),
                                                   "IRC_USE_TLS": "false", "IRC_NICKNAME": "hermes",
                                                   "IRC_CHANNEL": "#hermes", "IRC_NICKSERV_PASSWORD": "ns-secret",
                                                   "IRC_ALLOWED_USERS": "alice"})
    yield start
    start.stop_all()


def test_a_private_message_and_a_line_naming_it_are_answered_in_plain_lines_as_the_free_nickname(
        irc_gateway, irc, wire_server):
    irc.taken.add("hermes")  # someone has the nickname: the bot is hermes_
    wire_server.push(reply("**Hi**, alice.\n\nIt is 42."), reply("Yes."))
    running = irc_gateway()
    assert irc.wait_joined(1) == [("hermes_", "#hermes")]
    assert "PRIVMSG NickServ :IDENTIFY ns-secret" in irc.lines
    eventually(lambda: "PONG :irc.test" in irc.lines)  # the PING came with the welcome: answered after the JOIN
    irc.say("alice", "hermes_", "hello")
    assert irc.wait_sent(2) == [("alice", "Hi, alice."), ("alice", "It is 42.")]  # plain, a line each, no blank
    irc.say("bob", "#hermes", "talking among ourselves")
    irc.say("alice", "#hermes", "hermes_: are you there?")
    irc.say("mallory", "hermes_", "let me in")
    sent = irc.wait_sent(4)
    assert ("#hermes", "Yes.") in sent and ("mallory", "I only answer the people my owner allowed. Your irc user id "
                                            "is mallory: the owner adds it to IRC_ALLOWED_USERS.") in sent
    assert [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests] == [
        "hello", "are you there?"]
    assert "You are talking to people on IRC" in wire_server.requests[0].body["messages"][0]["content"]
    said = running.stop()
    assert "gateway on irc as hermes_ on 127.0.0.1 (#hermes) (1 user(s) allowed)" in said


def test_a_refused_server_password_or_no_server_is_one_line(irc_gateway, irc):
    irc.password = "right"
    refused = irc_gateway(env={"IRC_SERVER_PASSWORD": "wrong"}).ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: irc: 127.0.0.1 refused the bot (Password incorrect)")
    nobody = irc_gateway(env={"IRC_PORT": "9"}).ended()
    assert nobody.returncode == 1 and nobody.stderr.strip().splitlines()[-1].startswith(
        "hermes: error: irc: cannot reach 127.0.0.1:9 (")
