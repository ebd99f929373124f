"""agent.reasoning_effort (hermes-agent's key) through the real SDKs over the wire: each API gets the level in its own
words, and a model not known to take one gets nothing (it would refuse every request)."""

from __future__ import annotations

import json

import pytest

from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test", "OPENROUTER_API_KEY": "sk-or-test"}
ADAPTIVE = {"type": "adaptive", "display": "summarized"}


@pytest.mark.parametrize("api_mode, model, level, expected", [
    ("chat_completions", "o4-mini", "high", {"reasoning_effort": "high"}),
    ("chat_completions", "gpt-oss-120b", "minimal", {"reasoning_effort": "low"}),  # the nearest it takes
    ("chat_completions", "gpt-4o", "high", {}),  # not a reasoning model: sent, it fails every request
    ("codex_responses", "gpt-5.2", "max", {"reasoning": {"effort": "xhigh", "summary": "auto"}}),
    ("codex_responses", "gpt-5", "none", {"reasoning": {"effort": "minimal", "summary": "auto"}}),
    ("codex_responses", "gpt-5-chat-latest", "high", {}),
    ("anthropic_messages", "claude-sonnet-4-5", "high",
     {"thinking": {"type": "enabled", "budget_tokens": 16000}, "max_tokens": 20096}),  # room for the answer
    ("anthropic_messages", "claude-opus-4-6", "xhigh", {"thinking": ADAPTIVE, "output_config": {"effort": "max"}}),
    ("anthropic_messages", "claude-opus-4-7", "ultra", {"thinking": ADAPTIVE, "output_config": {"effort": "max"}}),
    ("anthropic_messages", "claude-3-5-haiku-latest", "high", {}),  # no thinking before Claude 3.7
    ("anthropic_messages", "claude-opus-4-7", "false", {}),  # YAML's false: none
])
def test_each_api_gets_the_level_in_its_own_words(hermes, wire_server, cli_env, hermes_home, api_mode, model, level,
                                                  expected):  # noqa: F811
    (hermes_home / "config.yaml").write_text(f"agent:\n  reasoning_effort: {level}\n")
    url = wire_server.url if api_mode == "anthropic_messages" else wire_server.openai_url
    wire_server.push(reply("Thought it through."))
    out = hermes("run", "--base-url", url, "--api-mode", api_mode, "-m", model, "think", env={**cli_env, **KEYS})
    assert out.returncode == 0 and out.stdout == "Thought it through.\n", out.stderr
    body = wire_server.requests[-1].body
    for key in ("reasoning_effort", "reasoning", "thinking", "output_config"):
        assert body.get(key) == expected.get(key), key
    if "max_tokens" in expected:
        assert body["max_tokens"] == expected["max_tokens"]


def test_openrouter_gets_its_reasoning_field_for_the_families_it_reasons_with(hermes, wire_server, cli_env,
                                                                              hermes_home):  # noqa: F811
    """The wire server stands in for openrouter.ai behind a proxy (HTTP_PROXY), so the request goes to that host."""
    env = {**cli_env, **KEYS, "HTTP_PROXY": wire_server.url, "http_proxy": wire_server.url, "NO_PROXY": "",
           "no_proxy": ""}
    (hermes_home / "config.yaml").write_text("base_url: http://openrouter.ai/v1\nagent:\n  reasoning_effort: xhigh\n"
                                             "provider_options:\n  extra_body: {transforms: [middle-out]}\n")
    for model, expected in (("deepseek/deepseek-r1", {"effort": "high"}), ("openai/gpt-5.2", {"effort": "xhigh"}),
                            ("anthropic/claude-opus-4.6", None), ("mistralai/mistral-large", None)):
        wire_server.push(reply("ok"))
        out = hermes("run", "--api-mode", "chat_completions", "-m", model, "think", env=env)
        assert out.returncode == 0, out.stderr
        request = wire_server.requests[-1]
        assert request.headers["host"] == "openrouter.ai" and request.body["model"] == model
        assert request.body.get("reasoning") == expected and "reasoning_effort" not in request.body, model
        assert request.body["transforms"] == ["middle-out"]  # the user's extra_body goes along


def test_xai_gets_grok_3_minis_two_levels_and_nothing_for_the_models_that_refuse_it(hermes, wire_server, cli_env,
                                                                                      hermes_home):  # noqa: F811
    """api.x.ai (the wire server behind HTTP_PROXY) speaks the Responses API; grok-4 answers 400 to the field."""
    env = {**cli_env, "XAI_API_KEY": "xai-test", "HTTP_PROXY": wire_server.url, "http_proxy": wire_server.url,
           "NO_PROXY": "", "no_proxy": ""}
    for model, level, expected in (("grok-3-mini", "medium", {"effort": "high"}), ("grok-3-mini-fast", "minimal",
                                   {"effort": "low"}), ("grok-4", "high", None)):
        (hermes_home / "config.yaml").write_text(f"base_url: http://api.x.ai/v1\napi_key_env: XAI_API_KEY\n"
                                                 f"agent:\n  reasoning_effort: {level}\n")
        wire_server.push(reply("ok"))
        out = hermes("run", "-m", model, "think", env=env)
        assert out.returncode == 0, out.stderr
        request = wire_server.requests[-1]
        assert request.headers["host"] == "api.x.ai" and request.path.endswith("/responses")
        assert request.body.get("reasoning") == expected and "reasoning_effort" not in request.body, model


def test_per_model_levels_over_the_key_as_hermes_agent_spells_them(hermes, wire_server, cli_env,
                                                                    hermes_home):  # noqa: F811
    (hermes_home / "config.yaml").write_text("agent:\n  reasoning_effort: low\n  reasoning_overrides:\n"
                                             "    anthropic/claude-opus-4.7: high\n    o3: loud\n")
    wire_server.push(reply("a"), reply("b"))
    for api_mode, url, model in (("anthropic_messages", wire_server.url, "claude-opus-4-7"),
                                 ("chat_completions", wire_server.openai_url, "o3")):
        out = hermes("run", "--base-url", url, "--api-mode", api_mode, "-m", model, "think", env={**cli_env, **KEYS})
        assert out.returncode == 0, out.stderr
    claude, o3 = (r.body for r in wire_server.requests)
    assert claude["output_config"] == {"effort": "high"}  # the dots and the vendor prefix are spellings of one model
    assert o3["reasoning_effort"] == "low"  # an unknown level: the key's


def test_a_provider_option_is_the_users_word_and_wins(hermes, wire_server, cli_env, hermes_home):  # noqa: F811
    (hermes_home / "config.yaml").write_text("agent:\n  reasoning_effort: high\nprovider_options:\n"
                                             "  reasoning_effort: low\n  thinking_budget: 2048\n")
    wire_server.push(reply("a"), reply("b"))
    for api_mode, url in (("chat_completions", wire_server.openai_url), ("anthropic_messages", wire_server.url)):
        out = hermes("run", "--base-url", url, "--api-mode", api_mode, "-m", "o3" if api_mode != "anthropic_messages"
                     else "claude-opus-4-7", "think", env={**cli_env, **KEYS})
        assert out.returncode == 0, out.stderr
    chat, messages = (r.body for r in wire_server.requests[-2:])
    assert chat["reasoning_effort"] == "low"
    assert messages["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "output_config" not in messages


def test_hermes_model_says_what_is_sent_and_a_wrong_level_is_one_line(hermes, cli_env, hermes_home):  # noqa: F811
    config = hermes_home / "config.yaml"
    config.write_text("model: claude-opus-4-6\nagent:\n  reasoning_effort: xhigh\n")
    out = hermes("model", env={**cli_env, **KEYS})
    assert out.returncode == 0, out.stderr
    assert 'reasoning xhigh: sent as {"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": ' \
           '{"effort": "max"}}\n' in out.stdout
    config.write_text("model: gpt-4o\nagent:\n  reasoning_effort: high\n")
    now = json.loads(hermes("model", "--json", env={**cli_env, **KEYS}).stdout)["current"]
    assert now["reasoning"] == {"level": "high", "sent": {}}
    assert "reasoning high: nothing sent (gpt-4o is not known to take a reasoning effort)" in \
        hermes("model", env={**cli_env, **KEYS}).stdout
    doctor = hermes("doctor", "--offline", env={**cli_env, **KEYS}).stdout
    assert "warn  reasoning  agent.reasoning_effort is high, and gpt-4o is not known to take a reasoning effort: " \
           "nothing is sent for it" in doctor
    config.write_text("model: gpt-4o\n")
    assert "\nreasoning " not in hermes("model", env={**cli_env, **KEYS}).stdout  # unset: the model's own
    config.write_text("model: o3\nagent:\n  reasoning_effort: hgih\n")
    wrong = hermes("run", "go", env={**cli_env, **KEYS})
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "Traceback" not in wrong.stderr
    assert "agent.reasoning_effort: expected one of '', none, minimal, low, medium, high, xhigh, max" in wrong.stderr


def test_a_call_beside_the_conversation_goes_at_the_models_own_effort(make_agent, wire_server):
    """A summary or an approval (``Agent.complete_once``) is a small job: it is sent without the level."""
    from plugins_providers import openai_chat, resolve

    agent = make_agent(openai_chat, resolve, api_mode="chat_completions", base_url=wire_server.openai_url,
                       model="o3", api_key_env="HERMES_TEST_KEY", config={"agent": {"reasoning_effort": "high"}})
    wire_server.push(reply("summary"), reply("answer"))
    import os

    os.environ["HERMES_TEST_KEY"] = "sk-test"
    try:
        assert agent.complete_once([{"role": "user", "content": "sum up"}], task="compression") == "summary"
        assert agent.run_conversation("hi").final_response == "answer"
    finally:
        del os.environ["HERMES_TEST_KEY"]
    aux, turn = (r.body for r in wire_server.requests)
    assert "reasoning_effort" not in aux and turn["reasoning_effort"] == "high"


def test_side_calls_and_subagents_take_their_own_levels(make_agent, wire_server, monkeypatch, caplog):
    """hermes-agent's ``auxiliary.<task>.reasoning_effort`` and ``delegation.reasoning_effort``: a summary at its own
    level (an approval's, left unset, at the model's), a subagent at the delegation's; a wrong level is said, once."""
    from plugins_providers import openai_chat, resolve

    monkeypatch.setenv("HERMES_TEST_KEY", "sk-test")
    agent = make_agent(openai_chat, resolve, api_mode="chat_completions", base_url=wire_server.openai_url,
                       model="o3", api_key_env="HERMES_TEST_KEY",
                       config={"agent": {"reasoning_effort": "high"}, "delegation": {"reasoning_effort": "minimal"},
                               "auxiliary": {"compression": {"reasoning_effort": "low"},
                                             "vision": {"reasoning_effort": "loud"}}})
    wire_server.push(*(reply(word) for word in ("summary", "verdict", "seen", "seen", "child", "parent")))
    assert agent.complete_once([{"role": "user", "content": "sum up"}], task="compression") == "summary"
    assert agent.complete_once([{"role": "user", "content": "allow?"}], task="approval") == "verdict"
    for _ in range(2):
        assert agent.complete_once([{"role": "user", "content": "look"}], task="vision") == "seen"
    child = agent.spawn_child()
    assert child.run_conversation("help").final_response == "child"
    agent.release_child(child)
    assert agent.run_conversation("hi").final_response == "parent"
    sent = [r.body.get("reasoning_effort") for r in wire_server.requests]
    assert sent == ["low", None, None, None, "low", "high"]  # o3 takes low for minimal
    said = [r.getMessage() for r in caplog.records if "auxiliary.vision.reasoning_effort" in r.getMessage()]
    assert said == ["auxiliary.vision.reasoning_effort: 'loud' is not a level (none, minimal, low, medium, high, "
                    "xhigh, max); the call goes at the model's own effort"]


def test_claude_thinking_leaves_out_the_sampling_the_api_refuses_beside_it(hermes, wire_server, cli_env,
                                                                            hermes_home):  # noqa: F811
    """Anthropic answers 400 to thinking with a temperature or a top_k (a top_p from 0.95 is taken): sent together,
    every request of the run would fail. Left out, said once; the doctor says it before a run."""
    config = hermes_home / "config.yaml"
    where = f"model: claude-sonnet-4-5\nbase_url: {wire_server.url}\napi_mode: anthropic_messages\n"
    config.write_text(where + "agent:\n  reasoning_effort: high\nprovider_options:\n"
                      "  temperature: 0.2\n  top_k: 40\n  top_p: 0.97\n")
    wire_server.push(reply("a"), reply("b"))
    out = hermes("run", "think", env={**cli_env, **KEYS})
    assert out.returncode == 0 and out.stdout == "a\n", out.stderr
    body = wire_server.requests[-1].body
    assert body["thinking"]["type"] == "enabled" and body["top_p"] == 0.97
    assert "temperature" not in body and "top_k" not in body
    assert out.stderr.count("is not sent while claude-sonnet-4-5 thinks") == 2  # temperature, top_k: once each
    doctor = hermes("doctor", "--offline", env={**cli_env, **KEYS})
    assert "temperature and top_k are not sent while claude-sonnet-4-5 thinks: the API refuses the two together" \
        in doctor.stdout, doctor.stdout
    config.write_text(where + "provider_options:\n  temperature: 0.2\n")  # no thinking: sent
    out = hermes("run", "think", env={**cli_env, **KEYS})
    assert out.returncode == 0 and wire_server.requests[-1].body["temperature"] == 0.2 and "thinks" not in out.stderr
