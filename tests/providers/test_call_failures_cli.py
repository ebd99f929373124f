"""Failed calls through the CLI against the wire server: a provider that goes
silent is left after the stream idle timeout (retried once) for the fallback;
a stream cut after its text was shown is retried, the new answer after a
visible marker; under --json (nothing shown) as if it failed before a byte."""

from __future__ import annotations

import json
import time

import pytest

from plugins.terminal.console import RESTART_MARKER
from plugins_providers.testserver import cut, reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)


def test_a_silent_provider_is_left_for_the_fallback(hermes, wire_server, make_wire_server, cli_env, hermes_home):  # noqa: F811
    fallback = make_wire_server()
    (hermes_home / "config.yaml").write_text(json.dumps({
        "fallback_providers": [{"model": "claude-test", "base_url": fallback.url, "api_mode": "anthropic_messages"}],
        "agent": {"retry_base_delay": 0.1},
    }))
    wire_server.push(reply("too late", delay=30))  # silence before the headers
    wire_server.push(reply("too late", frame_delay=30))  # a stream that stalls after its first frame
    fallback.push(reply("the fallback answered"))
    started = time.monotonic()
    out = hermes("run", "--json", "--timeout", "1", "--base-url", wire_server.openai_url, "--api-mode",
                 "chat_completions", "-m", "gpt-test", "hi", env=cli_env, timeout=60)
    took = time.monotonic() - started
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["final_response"] == "the fallback answered"
    assert len(wire_server.requests) == 2 and len(fallback.requests) == 1  # one retry, then the next provider
    assert took < 10  # two idle timeouts of 1 s and a short backoff, not 2 x 600 s
    assert result["api_calls"] == 3


def test_the_idle_timeout_is_in_config_and_the_default_reaches_the_fallback_in_two_minutes():
    from hermes.host.config import Config
    from plugins.fallback import SETTINGS

    defaults = Config({})
    idle = defaults.get("agent.stream_idle_timeout")
    retry_cap = SETTINGS["agent.retry_max_delay"]
    assert idle == 60 and defaults.get("agent.api_timeout") == 600
    assert 2 * idle + min(retry_cap, SETTINGS["agent.retry_base_delay"]) <= 125  # about two minutes


def test_a_cut_stream_is_retried_and_the_new_answer_is_never_glued_on(hermes, wire_server, cli_env, hermes_home):  # noqa: F811
    (hermes_home / "config.yaml").write_text(json.dumps({"agent": {"retry_base_delay": 0.05}}))
    args = ("--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "gpt-test", "hi")
    wire_server.push(cut(after=2, text="partial answer that was cut"), reply("the whole answer"))
    out = hermes("run", *args, env=cli_env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"partial answer \n{RESTART_MARKER}\nthe whole answer\n"
    # under --json nothing was shown: the same cut is retried silently, the document holds the answer alone
    wire_server.push(cut(after=2, text="partial answer that was cut"), reply("the whole answer"))
    out = hermes("run", "--json", *args, env=cli_env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["final_response"] == "the whole answer"
    assert len(wire_server.requests) == 4


@pytest.mark.parametrize("mode", ["chat_completions", "codex_responses", "anthropic_messages"])
def test_an_answer_not_streamed_may_take_longer_than_the_idle_timeout(hermes, wire_server, cli_env, hermes_home,  # noqa: F811
                                                                      mode):
    """A call that is not streamed (a subagent's always, agent.stream: false) sends nothing until its whole answer:
    the stream idle timeout failed every answer slower than it, retried it, and gave up. The call's own limit holds
    instead."""
    (hermes_home / "config.yaml").write_text("agent:\n  stream: false\n")
    wire_server.push(reply("slow but whole", delay=2))
    url = wire_server.url if mode == "anthropic_messages" else wire_server.openai_url
    out = hermes("run", "--timeout", "1", "--base-url", url, "--api-mode", mode, "-m", "m", "hi",
                 env={**cli_env, "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-test"})
    assert (out.returncode, out.stdout, len(wire_server.requests)) == (0, "slow but whole\n", 1), out.stderr


@pytest.mark.parametrize("base_url, config, idle, model", [
    ("http://127.0.0.1:11434/v1", {}, 600, "m"),  # a local model reading a long prompt sends nothing for minutes
    ("http://localhost:8080/v1", {"agent": {"stream_idle_timeout": 5}}, 5, "m"),  # the user's own word wins
    ("http://192.168.1.20:11434/v1", {}, 600, "m"),  # a model box on the LAN
    ("http://ollama:11434/v1", {}, 600, "m"),  # a compose service
    ("https://api.example.org/v1", {}, 60, "m"),
    ("https://8.8.8.8/v1", {}, 60, "m"),
    ("http://127.0.0.1:11434/v1", {"agent": {"api_timeout": 120}}, 120, "m"),  # never past the call's limit
    ("https://api.openai.com/v1", {}, 600, "o3"),  # a reasoning model says nothing while it thinks
    ("https://api.openai.com/v1", {}, 600, "gpt-5.1"),
    ("https://openrouter.ai/api/v1", {}, 600, "openai/o4-mini"),  # OpenRouter: only keep-alive comments meanwhile
    ("https://api.openai.com/v1", {}, 60, "gpt-4.1"),  # one that does not think: a silent minute is a stuck call
    ("https://api.openai.com/v1", {"agent": {"stream_idle_timeout": 90}}, 90, "o3"),
    ("https://api.openai.com/v1", {"agent": {"api_timeout": 300}}, 300, "o3"),
])
def test_a_local_server_or_a_reasoning_model_may_be_silent_up_to_the_calls_limit(make_agent, monkeypatch, base_url,
                                                                                  config, idle, model):
    from plugins_providers import openai_chat

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    agent = make_agent(openai_chat, config=config, api_mode="chat_completions", base_url=base_url, model=model)
    assert agent.provider_for(agent.provider_config).idle() == idle
