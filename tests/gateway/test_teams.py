"""The gateway on Microsoft Teams, end to end: `hermes gateway run` takes the activities a loopback Teams POSTs to its
messaging endpoint (each with a token signed by the loopback Bot Framework's key, checked against its published keys)
and answers through the loopback Bot Connector with the bot's own token from the loopback Entra ID; the model the
wire-protocol server through the real openai SDK."""

from __future__ import annotations

import json


import pytest

from plugins_providers.testserver import reply
from tests.gateway.conftest import eventually, listening, starter
from tests.mailserver import free_port
from tests.teamsapi import ALICE, CHANNEL, PERSONAL, TeamsAPI


@pytest.fixture
def teams_api():
    with TeamsAPI() as api:
        yield api


@pytest.fixture
def teams_gateway(hermes_home, wire_server, teams_api):
    port = free_port()
    teams_api.endpoint = f"http://127.0.0.1:{port}/api/messages"
    start = starter(hermes_home, wire_server, {"teams": {"api_url": teams_api.url}}, {
        "TEAMS_CLIENT_ID": teams_api.client_id, "TEAMS_CLIENT_SECRET": teams_api.secret,
        "TEAMS_TENANT_ID": teams_api.tenant, "TEAMS_PORT": str(port), "TEAMS_ALLOWED_USERS": ALICE})

    yield listening(start, teams_api.endpoint)
    start.stop_all()


def test_messages_signed_by_the_bot_framework_are_answered_and_the_rest_refused(
        teams_gateway, teams_api, wire_server, tmp_path, hermes):
    from cryptography.hazmat.primitives.asymmetric import rsa

    from tests.providers.test_images import PNG

    (tmp_path / "chart.png").write_bytes(PNG)
    wire_server.push(reply(f"**Hi**, Alice.\nMEDIA:{tmp_path / 'chart.png'}"), reply("42."), reply("A red dot."))
    teams_gateway(config={"agent": {"image_input_mode": "native"}})
    forged = teams_api.activity("let me pretend")
    assert teams_api.post(forged, token=teams_api.signed(key=rsa.generate_private_key(
        public_exponent=65537, key_size=2048))) == 401  # a key the Bot Framework does not publish
    assert teams_api.post(forged, token=teams_api.signed(audience="another-bot")) == 401
    assert teams_api.post(forged, token=teams_api.signed(service="https://evil.example/")) == 401
    assert teams_api.post(forged, token="") == 401
    hello = teams_api.say("hello")
    assert teams_api.wait_sent(1) == [(PERSONAL, "**Hi**, Alice.")]  # Teams shows the Markdown
    eventually(lambda: any(a.get("attachments") for a in teams_api.activities))  # the picture, inline
    [attachment] = next(a["attachments"] for a in teams_api.activities if a.get("attachments"))
    assert attachment["contentType"] == "image/png" and attachment["contentUrl"].startswith("data:image/png;base64,")
    assert PERSONAL in teams_api.typing
    teams_api.say("hello", activity_id=hello)  # delivered again: answered once
    teams_api.say("talking among ourselves", conversation=CHANNEL, kind="channel")  # no mention: not addressed
    teams_api.say("what is 6 times 7?", conversation=CHANNEL, kind="channel", mention=True)
    assert teams_api.wait_sent(2)[-1] == (CHANNEL, "42.")
    teams_api.pictures["dot.png"] = PNG
    teams_api.say("", attachments=[{"contentType": "image/png", "contentUrl": f"{teams_api.url}/pictures/dot.png",
                                    "name": "dot.png"}])
    assert teams_api.wait_sent(3)[-1] == (PERSONAL, "A red dot.")
    asked = [[m["content"] for m in r.body["messages"] if m["role"] == "user"][-1] for r in wire_server.requests]
    assert asked[:2] == ["hello", "what is 6 times 7?"]  # the bot's own <at> mention left out
    assert any(part.get("type") == "image_url" for part in asked[2])
    stranger = teams_api.activity("let me in", conversation="a:1mallory")
    stranger["from"] = {"id": "29:1mallory", "name": "Mallory", "aadObjectId": "aad-mallory"}
    assert teams_api.post(stranger) == 200
    said = teams_api.wait_sent(4)[-1]
    assert said[0] == "a:1mallory" and "aad-mallory" in said[1]  # a stranger is told their id
    assert len(wire_server.requests) == 3
    sent = hermes("send", "--to", f"teams:{PERSONAL}", "deploy finished", env={
        "TEAMS_CLIENT_ID": teams_api.client_id, "TEAMS_CLIENT_SECRET": teams_api.secret,
        "TEAMS_TENANT_ID": teams_api.tenant, "TEAMS_SERVICE_URL": teams_api.url})
    assert sent.returncode == 0, sent.stderr
    assert teams_api.wait_sent(5)[-1] == (PERSONAL, "deploy finished")


def test_refused_credentials_or_no_tenant_are_one_line(teams_gateway, teams_api, hermes):
    teams_api.secret = "rotated"  # the client secret expired at Microsoft
    refused = teams_gateway.start().ended()
    assert refused.returncode == 1 and refused.stderr.strip().splitlines()[-1] == (
        "hermes: error: teams: Microsoft refused TEAMS_CLIENT_ID, TEAMS_CLIENT_SECRET and TEAMS_TENANT_ID "
        "(AADSTS7000215: Invalid client secret provided.)")
    no_tenant = teams_gateway.start(env={"TEAMS_TENANT_ID": ""}).ended()
    assert no_tenant.returncode == 1 and "TEAMS_TENANT_ID is needed" in no_tenant.stderr
    untenanted = {"TEAMS_CLIENT_ID": teams_api.client_id, "TEAMS_CLIENT_SECRET": teams_api.secret,
                  "TEAMS_TENANT_ID": ""}
    status = json.loads(hermes("gateway", "status", "--json", env=untenanted).stdout)  # the other platforms' rows too
    assert next(r for r in status if r["platform"] == "teams")["error"].startswith("TEAMS_TENANT_ID is needed")
    doctor = {c["name"]: c for c in json.loads(hermes("doctor", "--offline", "--json", env=untenanted).stdout)}
    assert doctor["gateway teams"]["status"] == "fail" and "plugin gateway" not in doctor  # its line, not the plugin's


def test_an_approval_question_has_buttons_that_answer_it(teams_gateway, teams_api, wire_server):
    command = "python3 -c 'print(6 * 7)'"  # inline code: the approval check asks
    wire_server.push(reply(tool_calls=[("terminal", {"command": command})]), reply("It printed 42."))
    teams_gateway(config={"sandbox": {"mode": "off"}})
    teams_api.say("run it")
    assert teams_api.wait_sent(1)[0][1].startswith("⚠️ terminal needs your yes: ")
    [card] = next(a["attachments"] for a in teams_api.activities if a.get("attachments"))
    assert [(b["type"], b["value"]) for b in card["content"]["buttons"]] == [
        ("imBack", "/approve"), ("imBack", "/approve session"), ("imBack", "/approve always"), ("imBack", "/deny")]
    teams_api.say("/approve")  # the press: Teams posts the button's value as the user's message
    assert teams_api.wait_sent(2)[-1] == (PERSONAL, "It printed 42.")
    assert "42" in [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] == "tool"][0]
