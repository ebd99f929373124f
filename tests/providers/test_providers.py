"""The three providers end to end: real SDKs (strict validation) over loopback."""

import json

import pytest

from kernel.types import ProviderConfig, ProviderError
from plugins_providers.testserver import cut, error, garbage, reply, stream_error

from tests.providers.helpers import MODES, Recorder, make_provider, request

pytestmark = pytest.mark.parametrize("mode", MODES)


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")


@pytest.mark.parametrize("stream", [True, False])
def test_text_answer_usage(wire_server, mode, stream):
    wire_server.push(reply("Sunny and 21C.", usage={"input": 30, "output": 6, "cache_read": 4, "reasoning": 0}))
    emit = Recorder()
    resp = make_provider(wire_server, mode).complete(request(stream=stream), emit)
    assert resp.content == "Sunny and 21C." and resp.tool_calls == [] and resp.finish_reason == "stop"
    assert resp.usage["input_tokens"] == 30 and resp.usage["output_tokens"] == 6 and resp.usage["cache_read_tokens"] == 4
    assert resp.usage["prompt_tokens"] == 34 and resp.usage["total_tokens"] == 40
    assert emit.text() == ("Sunny and 21C." if stream else "")
    if stream:
        assert len([e for e in emit.events if e[0] == "delta"]) == 3  # deltas arrive piece by piece
    sent = wire_server.requests[0]
    assert sent.headers["x-stainless-retry-count"] == "0" and sent.stream is stream
    assert sent.headers["authorization"] in ("Bearer sk-test-openai-key", "Bearer sk-ant-test-key")


@pytest.mark.parametrize("stream", [True, False])
def test_usage_normalised_with_cache_and_reasoning(wire_server, mode, stream):
    """Every API spells usage its own way; all come out in one shape."""
    wire_server.push(reply("ok", reasoning="hmm", usage={"input": 30, "output": 9, "cache_read": 4, "cache_write": 7, "reasoning": 3}))
    resp = make_provider(wire_server, mode).complete(request(stream=stream), Recorder())
    assert resp.usage == {"input_tokens": 30, "output_tokens": 9, "cache_read_tokens": 4, "cache_write_tokens": 7,
                          "reasoning_tokens": 3, "request_count": 1, "prompt_tokens": 41, "total_tokens": 50}


@pytest.mark.parametrize("stream", [True, False])
def test_parallel_tool_calls_and_results_round_trip(wire_server, mode, stream):
    wire_server.push(reply(tool_calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]), reply("Paris 21C, Oslo 5C."))
    provider = make_provider(wire_server, mode)
    emit = Recorder()
    first = provider.complete(request(stream=stream), emit)
    assert first.finish_reason == "tool_calls"
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in first.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    ids = [c["id"] for c in first.tool_calls]
    if stream:
        assert [e for e in emit.events if e[0] == "tool_call"] == [("tool_call", "get_weather", i) for i in ids]
    history = request().messages + [first.to_message()] + [
        {"role": "tool", "tool_call_id": ids[0], "content": "21C"},
        {"role": "tool", "tool_call_id": ids[1], "content": "5C"},
    ]
    second = provider.complete(request(history, stream=stream), Recorder())
    assert second.content == "Paris 21C, Oslo 5C."
    body = wire_server.requests[1].body
    if mode == "chat_completions":
        assert body["messages"][0] == {"role": "system", "content": "be brief"}
        assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "tool"]
        assert [t["id"] for t in body["messages"][2]["tool_calls"]] == ids
        assert body["tools"][0]["function"]["name"] == "get_weather"
    elif mode == "codex_responses":
        assert body["instructions"] == "be brief"
        calls = [i for i in body["input"] if i.get("type") == "function_call"]
        outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
        assert [c["call_id"] for c in calls] == ids == [o["call_id"] for o in outputs]
        assert [o["output"] for o in outputs] == ["21C", "5C"]
        assert body["tools"][0]["name"] == "get_weather" and body["store"] is False
    else:
        assert body["system"] == [{"type": "text", "text": "be brief"}]
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
        assert [b["id"] for b in body["messages"][1]["content"] if b["type"] == "tool_use"] == ids
        results = body["messages"][2]["content"]  # both results merged into one user turn
        assert [(b["type"], b["tool_use_id"], b["content"]) for b in results] == [("tool_result", ids[0], "21C"), ("tool_result", ids[1], "5C")]
        assert body["tools"][0]["input_schema"]["properties"] == {"city": {"type": "string"}}
        assert "temperature" not in body


@pytest.mark.parametrize("stream", [True, False])
def test_reasoning_kept_and_carried(wire_server, mode, stream):
    wire_server.push(reply(tool_calls=[("get_weather", {"city": "Paris"})], reasoning="Need the weather tool.", usage={"reasoning": 3}), reply("done"))
    provider = make_provider(wire_server, mode)
    emit = Recorder()
    first = provider.complete(request(stream=stream), emit)
    assert first.reasoning == "Need the weather tool."
    if stream:
        assert emit.text("reasoning") == "Need the weather tool."
    msg = first.to_message()
    assert msg["reasoning"] == "Need the weather tool."
    history = request().messages + [msg, {"role": "tool", "tool_call_id": first.tool_calls[0]["id"], "content": "21C"}]
    provider.complete(request(history, stream=stream), Recorder())
    body = wire_server.requests[1].body
    if mode == "codex_responses":
        assert first.usage["reasoning_tokens"] == 3
        items = body["input"]
        kinds = [i.get("type", "message") for i in items]
        assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
        assert items[1]["encrypted_content"] and items[1]["summary"][0]["text"] == "Need the weather tool."
    elif mode == "anthropic_messages":
        blocks = body["messages"][1]["content"]
        assert blocks[0]["type"] == "thinking" and blocks[0]["signature"] and blocks[0]["thinking"] == "Need the weather tool."
        assert blocks[1]["type"] == "tool_use"
    else:
        assert "reasoning" not in json.dumps(body["messages"])  # kept locally, not echoed


def test_stream_cut_is_an_error_not_a_short_answer(wire_server, mode):
    wire_server.push(cut(after=2, text="a b c d e"))
    emit = Recorder()
    with pytest.raises(ProviderError) as exc:
        make_provider(wire_server, mode).complete(request(), emit)
    assert exc.value.reason == "transport"
    assert emit.text() == "a b "  # what was shown before the cut


@pytest.mark.parametrize("step", [
    cut(after=3, text=["a ", "b ", "c"]),  # every text delta arrived, the closing events did not
    cut(after=2, text=None, tool_calls=[("get_weather", {"city": "Paris"})]),  # whole arguments, no final event
])
def test_clean_eof_after_all_deltas_is_an_error(wire_server, mode, step):
    """A close-delimited stream that ends cleanly but without its final event
    (finish_reason / response.completed / message_stop) is truncated, never a
    short answer or a tool call to run."""
    wire_server.push(step)
    with pytest.raises(ProviderError) as exc:
        make_provider(wire_server, mode).complete(request(), Recorder())
    assert exc.value.reason == "transport" and "stream ended before" in str(exc.value)


def test_chunked_cut_and_stream_error(wire_server, mode):
    wire_server.push(cut(after=1, chunked=True), stream_error(after=1))
    provider = make_provider(wire_server, mode)
    with pytest.raises(ProviderError) as exc:
        provider.complete(request(), Recorder())
    assert exc.value.reason == "transport"
    with pytest.raises(ProviderError) as exc:
        provider.complete(request(), Recorder())
    assert exc.value.reason == "server"


def test_malformed_frame_is_transport(wire_server, mode):
    wire_server.push(garbage(after=1))
    with pytest.raises(ProviderError) as exc:
        make_provider(wire_server, mode).complete(request(), Recorder())
    assert exc.value.reason == "transport" and "JSON" in str(exc.value)


def test_http_errors_classified_without_key(wire_server, mode):
    wire_server.push(error(429, retry_after=7), error(401, message="Incorrect API key provided: sk-test-openai-key / sk-ant-test-key"))
    provider = make_provider(wire_server, mode)
    with pytest.raises(ProviderError) as exc:
        provider.complete(request(), Recorder())
    assert (exc.value.reason, exc.value.retry_after, exc.value.status_code) == ("rate_limit", 7.0, 429)
    with pytest.raises(ProviderError) as exc:
        provider.complete(request(), Recorder())
    assert exc.value.reason == "auth" and "test-key" not in str(exc.value) and "openai-key" not in str(exc.value)
    assert len(wire_server.requests) == 2


def test_cancel_stops_reading(wire_server, mode):
    wire_server.push(reply("word " * 200, frame_delay=0.002))
    req = request()
    emit = Recorder()
    original = emit.delta

    def delta(text):
        original(text)
        if len(emit.events) == 3:
            req.cancel_event.set()

    emit.delta = delta
    resp = make_provider(wire_server, mode).complete(req, emit)
    assert resp.finish_reason == "cancelled" and len(emit.events) < 10


def test_missing_key_is_one_clear_config_error(wire_server, mode, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    from plugins_providers import anthropic_messages, openai_chat, openai_responses

    factory = {"chat_completions": openai_chat, "codex_responses": openai_responses, "anthropic_messages": anthropic_messages}[mode].factory
    var = "ANTHROPIC_API_KEY" if mode == "anthropic_messages" else "OPENAI_API_KEY"
    with pytest.raises(ProviderError) as exc:
        factory(ProviderConfig(model="m", api_mode=mode, base_url="https://example.invalid/v1"))
    assert exc.value.reason == "config" and var in str(exc.value)
    with pytest.raises(ProviderError) as exc:
        factory(ProviderConfig(model="m", api_mode=mode, api_key_env="MY_KEY_VAR", base_url="http://127.0.0.1:9/v1"))
    assert "MY_KEY_VAR" in str(exc.value)
    # a local server without any key configured runs with a placeholder
    wire_server.push(reply("local ok"))
    assert make_provider(wire_server, mode).complete(request(), Recorder()).content == "local ok"


def test_api_key_env_and_refresh(wire_server, mode, monkeypatch):
    monkeypatch.setenv("TEAM_KEY", "first-key-123")
    from tests.providers.helpers import config
    from plugins_providers import anthropic_messages, openai_chat, openai_responses

    factory = {"chat_completions": openai_chat, "codex_responses": openai_responses, "anthropic_messages": anthropic_messages}[mode].factory
    provider = factory(config(wire_server, mode).with_(api_key_env="TEAM_KEY"))
    provider.complete(request(), Recorder())
    assert provider.refresh_credentials() is False
    monkeypatch.setenv("TEAM_KEY", "second-key-456")
    assert provider.refresh_credentials() is True
    provider.complete(request(), Recorder())
    assert [r.headers["authorization"] for r in wire_server.requests] == ["Bearer first-key-123", "Bearer second-key-456"]
    provider.close()
