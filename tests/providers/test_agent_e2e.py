"""Each API mode through the Agent loop, the real SDK and the wire server."""

import json

import pytest

from kernel import hookimpl
from kernel.types import Tool
from plugins_providers import anthropic_messages, openai_chat, openai_responses, resolve
from plugins_providers.testserver import reply
from tests.providers.helpers import MODES, base_url


class WeatherTools:
    def __init__(self):
        self.calls = []

    @hookimpl
    def register_tools(self, register):
        def handler(args, ctx):
            self.calls.append(args["city"])
            return {"city": args["city"], "temp": {"Paris": 21, "Oslo": 5}.get(args["city"], 0)}

        schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        register(Tool("get_weather", "Weather for a city", schema, handler, parallel_safe=True))


class Seen:
    def __init__(self):
        self.deltas, self.reasoning, self.generated = [], [], []

    @hookimpl
    def on_stream_delta(self, text):
        self.deltas.append(text)

    @hookimpl
    def on_reasoning(self, text):
        self.reasoning.append(text)

    @hookimpl
    def on_tool_call_generated(self, tool_name, tool_call_id):
        self.generated.append((tool_name, tool_call_id))


@pytest.fixture
def mode_agent(make_agent, wire_server):
    def build(mode, stream=True):
        tools, seen = WeatherTools(), Seen()
        agent = make_agent(openai_chat, openai_responses, anthropic_messages, resolve, tools, callbacks=[seen],
                           api_mode=mode, base_url=base_url(wire_server, mode), model="test-model", stream=stream)
        return agent, tools, seen

    return build


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [True, False])
def test_tool_loop_parallel_reasoning_usage(mode_agent, wire_server, mode, stream):
    agent, tools, seen = mode_agent(mode, stream)
    wire_server.push(
        reply(tool_calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})], reasoning="Two cities.", usage={"input": 50, "output": 10}),
        reply("Paris 21, Oslo 5.", usage={"input": 80, "output": 6, "cache_read": 40}),
    )
    result = agent.run_conversation("Weather in Paris and Oslo?", system_message="You are terse.")
    assert result["exit_reason"] == "completed" and result["final_response"] == "Paris 21, Oslo 5."
    assert sorted(tools.calls) == ["Oslo", "Paris"]
    assert result["usage"]["input_tokens"] == 130 and result["usage"]["output_tokens"] == 16
    assert result["usage"]["cache_read_tokens"] == 40
    roles = [m["role"] for m in result["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "assistant"]
    assistant = result["messages"][1]
    assert assistant["reasoning"] == "Two cities."
    if stream:
        assert "".join(seen.deltas) == "Paris 21, Oslo 5."
        assert "".join(seen.reasoning) == "Two cities."
        assert [name for name, _ in seen.generated] == ["get_weather", "get_weather"]
    # the second request carried both tool results, keyed by the ids the model gave
    ids = [c["id"] for c in assistant["tool_calls"]]
    body = wire_server.requests[1].body
    sent = json.dumps(body)
    assert all(i in sent for i in ids) and '\\"temp\\": 21' in sent
    assert "You are terse." in sent
    if mode == "codex_responses":  # reasoning items went back, in place, through the stored history
        assert assistant["codex_reasoning_items"][0]["encrypted_content"]
        assert [i.get("type", "message") for i in body["input"]][:3] == ["message", "reasoning", "function_call"]
    if mode == "anthropic_messages":
        assert body["messages"][1]["content"][0]["type"] == "thinking"
    assert {r.headers["x-stainless-retry-count"] for r in wire_server.requests} == {"0"}


@pytest.mark.parametrize("mode", MODES)
def test_resolved_from_base_url_or_provider(make_agent, wire_server, mode, monkeypatch):
    """No explicit api_mode: the resolve plugin picks the provider."""
    kwargs = {"chat_completions": {}, "codex_responses": {"provider": "openai-codex"}, "anthropic_messages": {"provider": "anthropic"}}[mode]
    monkeypatch.setenv("OPENAI_API_KEY", "k1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k2")
    agent = make_agent(openai_chat, openai_responses, anthropic_messages, resolve, api_mode="", base_url=base_url(wire_server, mode), **kwargs)
    wire_server.push(reply("resolved"))
    assert agent.chat("hi") == "resolved"
    assert wire_server.requests[0].path == {"chat_completions": "/v1/chat/completions", "codex_responses": "/v1/responses", "anthropic_messages": "/v1/messages"}[mode]


@pytest.mark.parametrize("model,path,sent_model,key_var", [
    ("anthropic/claude-sonnet-4", "/v1/messages", "claude-sonnet-4", "ANTHROPIC_API_KEY"),
    ("openrouter/anthropic/claude-sonnet-4", "/v1/chat/completions", "anthropic/claude-sonnet-4", "OPENROUTER_API_KEY"),
    ("openai/gpt-5", "/v1/responses", "gpt-5", "OPENAI_API_KEY"),
])
def test_model_strings_resolve_mode_endpoint_and_key(make_agent, wire_server, monkeypatch, model, path, sent_model, key_var):
    """Only a model string: it picks the API mode, the provider's endpoint (here
    pointed at the wire server), the provider's key variable and the model id sent."""
    from plugins_providers import defaults

    for name in ("anthropic", "openrouter", "openai"):
        info = defaults.PROVIDERS[name]
        url = wire_server.url if info.api_mode == "anthropic_messages" else wire_server.openai_url
        monkeypatch.setitem(defaults.PROVIDERS, name, defaults.ProviderInfo(info.api_mode, url, info.env_var))
    for var in ("ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(var, f"key-of-{var}")
    agent = make_agent(openai_chat, openai_responses, anthropic_messages, resolve, api_mode="", model=model)
    wire_server.push(reply("resolved by model string"))
    assert agent.chat("hi") == "resolved by model string"
    (sent,) = wire_server.requests
    assert (sent.path, sent.body["model"]) == (path, sent_model)
    assert sent.headers["authorization"] == f"Bearer key-of-{key_var}"


def test_explicit_api_mode_beats_provider_and_url(make_agent, wire_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    agent = make_agent(openai_chat, openai_responses, anthropic_messages, resolve, api_mode="chat_completions",
                       provider="anthropic", base_url=wire_server.openai_url + "/anthropic", model="claude-x")
    wire_server.push(reply("chat it is"))
    agent.chat("hi")
    assert wire_server.requests[0].path == "/v1/anthropic/chat/completions"
