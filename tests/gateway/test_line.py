"""The gateway on LINE, end to end: `hermes gateway run` takes the events a loopback LINE Messaging API POSTs to its
webhook (signed with the channel secret) and answers through the API, with the message's reply token while it is
fresh, else pushed; the model the wire-protocol server through the real openai SDK."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import listening, starter
from tests.lineapi import ALICE, GROUP, LineAPI
from tests.mailserver import free_port


@pytest.fixture
def line_api():
    with LineAPI() as api:
        yield api


@pytest.fixture
def line_gateway(hermes_home, wire_server, line_api):
    port = free_port()
    line_api.webhook = f"http://127.0.0.1:{port}/line/webhook"
    start = starter(hermes_home, wire_server, {"line": {"api_url": line_api.url}}, {
        "LINE_CHANNEL_ACCESS_TOKEN": line_api.token, "LINE_CHANNEL_SECRET": line_api.secret, "LINE_PORT": str(port),
        "LINE_ALLOWED_USERS": ALICE})

    yield listening(start, line_api.webhook)
    start.stop_all()


def user_texts(request) -> list:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


def test_messages_are_answered_by_reply_then_by_push_and_the_rest_is_refused(
        line_gateway, line_api, wire_server, tmp_path):
    from tests.providers.test_images import PNG

    (tmp_path / "chart.png").write_bytes(PNG)
    wire_server.push(reply(f"**Hi**, Alice.\nMEDIA:{tmp_path / 'chart.png'}"), reply("42."), reply("A red dot."),
                     reply("Noted."))
    line_gateway(config={"agent": {"image_input_mode": "native"}})
    assert line_api.post({"destination": "U0", "events": []}) == 200  # the console's "Verify"
    assert line_api.post({"events": []}, secret="guessed") == 401  # not signed by LINE: refused
    hello = line_api.say("hello")
    assert line_api.wait_sent(2) == [(ALICE, "Hi, Alice.", "reply"),  # free, plain text
                                     (ALICE, "(could not send " + str(tmp_path / "chart.png") + ": LINE takes "
                                      "pictures and files only from a public HTTPS address: set LINE_PUBLIC_URL (this "
                                      "machine's port 8646 behind it))", "push")]
    assert ALICE in line_api.loading  # the "..." while it was written
    line_api.say("hello", message_id=hello)  # LINE's redelivery: answered once
    line_api.say("talking among ourselves", group=GROUP)  # no mention: not addressed
    line_api.say("what is 6 times 7?", group=GROUP, mention_bot=True)
    assert line_api.wait_sent(3)[-1] == (GROUP, "42.", "reply")
    line_api.contents["555"] = PNG
    line_api.say(message={"type": "image", "contentProvider": {"type": "line"}}, message_id="555")
    assert line_api.wait_sent(4)[-1] == (ALICE, "A red dot.", "reply")
    line_api.say(message={"type": "sticker", "packageId": "1", "stickerId": "2", "keywords": ["thumbs up"]})
    assert line_api.wait_sent(5)[-1] == (ALICE, "Noted.", "reply")
    asked = [user_texts(r)[-1] for r in wire_server.requests]
    assert asked[0] == "hello" and asked[1] == "what is 6 times 7?"  # the bot's own @mention left out
    assert any(part.get("type") == "image_url" for part in asked[2]) and asked[3] == "[a sticker: thumbs up]"
    line_api.say("let me in", user="U" + "m" * 32)
    said = line_api.wait_sent(6)[-1]
    assert said[0] == "U" + "m" * 32 and "U" + "m" * 32 in said[1]  # a stranger is told their id
    assert len(wire_server.requests) == 4


def test_a_stale_reply_token_is_pushed_instead_files_are_served_and_hermes_send_pushes(
        line_gateway, line_api, wire_server, hermes, tmp_path):
    from tests.providers.test_images import PNG

    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "notes.md").write_text("# the week\n")
    wire_server.push(reply(f"Late, but here.\nMEDIA:{tmp_path / 'chart.png'}\nMEDIA:{tmp_path / 'notes.md'}"),
                     reply("Hello, Bob."))
    public = line_api.webhook.removesuffix("/line/webhook")  # (LINE's HTTPS address of this port, in production)
    line_gateway(env={"LINE_ALLOWED_GROUPS": GROUP, "LINE_PUBLIC_URL": public})
    line_api.stale = True  # the token expired before the answer came
    line_api.say("anyone?", group=GROUP)  # a group listed in LINE_ALLOWED_GROUPS: no mention needed
    sent = line_api.wait_sent(2)
    assert sent[0] == (GROUP, "Late, but here.", "push") and sent[1][1].startswith(f"notes.md: {public}/line/media/")
    line_api.say("hi, I am Bob", user="U" + "0" * 32, group=GROUP)  # not in LINE_ALLOWED_USERS: the group admits him
    assert line_api.wait_sent(3)[-1] == (GROUP, "Hello, Bob.", "push")
    [(chat, picture)] = line_api.pictures()  # a picture as one, another file as its link: LINE fetches them
    assert chat == GROUP and urllib.request.urlopen(picture, timeout=5).read() == PNG
    assert urllib.request.urlopen(sent[1][1].partition(": ")[2], timeout=5).read() == b"# the week\n"
    with pytest.raises(urllib.error.HTTPError) as guessed:
        urllib.request.urlopen(picture.rsplit("/", 2)[0] + "/guessed/chart.png", timeout=5)
    assert guessed.value.code == 404
    sent = hermes("send", "--to", f"line:{ALICE}", "deploy finished", "--json", env={
        "LINE_CHANNEL_ACCESS_TOKEN": line_api.token, "LINE_CHANNEL_SECRET": line_api.secret})  # its config.yaml
    assert sent.returncode == 0, sent.stderr
    assert line_api.wait_sent(4)[-1] == (ALICE, "deploy finished", "push") and json.loads(sent.stdout)
    (tmp_path / "report.md").write_text(f"the week\nMEDIA:{tmp_path / 'chart.png'}\n")
    filed = hermes("send", "--to", f"line:{ALICE}", "--file", tmp_path / "report.md", env={
        "LINE_CHANNEL_ACCESS_TOKEN": line_api.token, "LINE_CHANNEL_SECRET": line_api.secret,
        "LINE_PUBLIC_URL": public})  # no listener of its own would serve the picture LINE fetches later
    assert filed.returncode == 1 and filed.stderr == (f"hermes: error: not sent to line:{ALICE}: a file goes to LINE "
                                                      "from the running gateway only (it serves it): not sent\n")
    doctor = {c["name"]: c for c in json.loads(hermes("doctor", "--json", env={
        "LINE_CHANNEL_ACCESS_TOKEN": line_api.token, "LINE_CHANNEL_SECRET": line_api.secret,
        "LINE_ALLOWED_USERS": ALICE, "LINE_PORT": public.rpartition(":")[2]}).stdout)}
    assert doctor["gateway line"]["status"] == "ok" and "the gateway here runs (pid " in \
        doctor["gateway line"]["detail"]  # not started beside it: its port is the running gateway's


def test_a_wrong_token_or_no_secret_is_one_line(line_gateway, line_api):
    line_api.token = "rotated"  # the channel's token was reissued at LINE
    refused = line_gateway.start().ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: line: LINE refused LINE_CHANNEL_ACCESS_TOKEN (Authentication failed. Confirm that the "
        "access token in the authorization header is valid.)")
    unsigned = line_gateway.start(env={"LINE_CHANNEL_SECRET": ""}).ended()
    assert unsigned.returncode == 1 and unsigned.stderr.strip().splitlines()[-1] == (
        "hermes: error: line: ValueError: LINE_CHANNEL_SECRET is needed: every event LINE posts is signed with it "
        "(without the check anybody could post messages as anybody)")


def test_an_approval_question_has_quick_replies_that_answer_it(line_gateway, line_api, wire_server):
    command = "python3 -c 'print(6 * 7)'"  # inline code: the approval check asks
    wire_server.push(reply(tool_calls=[("terminal", {"command": command})]), reply("It printed 42."))
    line_gateway(config={"sandbox": {"mode": "off"}})
    line_api.say("run it")
    asked = line_api.wait_sent(1)[0]
    assert asked[1].startswith("⚠️ terminal needs your yes: ") and command in asked[1]
    [question] = [m for m in line_api.messages if "quickReply" in m]
    assert [(i["action"]["label"], i["action"]["text"]) for i in question["quickReply"]["items"]] == [
        ("✅ Once", "/approve"), ("This session", "/approve session"), ("Always", "/approve always"),
        ("❌ Deny", "/deny")]
    line_api.say("/approve")  # the tap: LINE sends its text as the user's message
    assert line_api.wait_sent(2)[-1][:2] == (ALICE, "It printed 42.")
    assert "42" in [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] == "tool"][0]
