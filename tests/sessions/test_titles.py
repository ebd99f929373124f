"""A chat's title from its first exchange (hermes-agent's auxiliary.title_generation): asked of the auxiliary model
named for it, beside the conversation, over the real openai SDK; the answer's "Title:", quotes and full stop taken
off; a chat resumed is not titled again; a failed call is one warning and the chat goes on untitled."""

from __future__ import annotations

import json

from plugins_providers.testserver import error, reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

MODEL = ("--api-mode", "chat_completions", "-m", "gpt-test")


def answering(turns, title):
    """A step for the next request: ``title`` for the title's call (to the auxiliary model), else the next turn's."""
    return lambda request: title if request.body["model"] == "small-model" else reply(next(turns))


def test_a_chat_is_titled_from_its_first_exchange(hermes, hermes_home, wire_server, cli_env):  # noqa: F811
    (hermes_home / "config.yaml").write_text("auxiliary:\n  title_generation:\n    model: small-model\n")
    env = {**cli_env, "OPENAI_API_KEY": "sk-test"}
    turns = iter(["Pass -x: pytest stops at the first failure.", "It also takes --maxfail=N."])
    wire_server.script([answering(turns, '"Title: Stopping pytest early."')] * 3)  # the title's call runs beside
    out = hermes("chat", "--base-url", wire_server.openai_url, *MODEL, env=env,
                 input="how do I stop pytest at the first failure?\nand after two?\n/exit\n")
    assert out.returncode == 0 and "--maxfail=N" in out.stdout and "title" not in out.stderr, out.stderr
    titled = [r.body for r in wire_server.requests if r.body["model"] == "small-model"]
    assert len(wire_server.requests) == 3 and len(titled) == 1 and "tools" not in titled[0]
    assert titled[0]["messages"][0]["content"].startswith("Name the conversation below in three to seven words")
    assert titled[0]["messages"][1]["content"] == ("User: how do I stop pytest at the first failure?\n\n"
                                                   "Assistant: Pass -x: pytest stops at the first failure.")
    [session] = json.loads(hermes("sessions", "list", "--json").stdout)
    assert session["title"] == "Stopping pytest early"

    wire_server.script([reply("Yes.")])  # resumed: not its first exchange
    out = hermes("chat", "-c", "--base-url", wire_server.openai_url, *MODEL, env=env, input="one more?\n/exit\n")
    assert out.returncode == 0 and len(wire_server.requests) == 4, out.stderr

    wire_server.script([answering(iter(["Hello."]), error(400, message="no such model: small-model"))] * 2)
    out = hermes("chat", "--base-url", wire_server.openai_url, *MODEL, env=env, input="hi\n/exit\n")
    assert out.returncode == 0 and "Hello." in out.stdout, out.stderr
    assert "no title for session" in out.stderr and "no such model: small-model" in out.stderr
    assert [s["title"] for s in json.loads(hermes("sessions", "list", "--json").stdout)] == [None, "Stopping pytest early"]


def test_an_auxiliary_block_sends_its_extra_body_and_its_written_key(hermes, hermes_home, make_wire_server,
                                                                      cli_env):  # noqa: F811
    """hermes-agent's auxiliary blocks hold extra_body (fields the calls send besides) and may hold an api_key written
    in config.yaml: the title's call to another endpoint goes with both, and the written key is said once to belong in
    the environment."""
    main, titler = make_wire_server(), make_wire_server(api_key="sk-aux-written-0123")
    (hermes_home / "config.yaml").write_text(
        "auxiliary:\n  title_generation:\n    model: small-model\n"
        f"    base_url: {titler.openai_url}\n    api_key: sk-aux-written-0123\n"
        "    extra_body: {provider: {order: [fast-host]}}\n")
    main.script([reply("Use -x.")])
    titler.script(["Pytest stop early"])
    out = hermes("chat", "--base-url", main.openai_url, *MODEL, env={**cli_env, "OPENAI_API_KEY": "sk-main"},
                 input="how do I stop pytest early?\n/exit\n")
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("auxiliary.title_generation.api_key: an API key written in config.yaml; it is used, "
                            "but belongs in the environment") == 1
    [asked] = titler.requests
    assert asked.headers["authorization"] == "Bearer sk-aux-written-0123"
    assert asked.body["provider"] == {"order": ["fast-host"]} and "provider" not in main.requests[0].body
    assert json.loads(hermes("sessions", "list", "--json").stdout)[0]["title"] == "Pytest stop early"
