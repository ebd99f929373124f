"""The wire-protocol test server, checked by the real SDKs in strict mode."""

import json
import socket

import anthropic
import httpx2
import openai
import pytest

from plugins_providers.testserver import WireServer, cut, drop, error, reply, stream_error

USER = [{"role": "user", "content": "weather?"}]
TOOL_STEP = dict(tool_calls=[("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})])


def oa(server, **kw):
    return openai.OpenAI(base_url=server.openai_url, api_key="k", max_retries=0, _strict_response_validation=True, **kw)


def an(server, **kw):
    return anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0, _strict_response_validation=True, **kw)


# -- chat completions


def test_chat_text_tools_reasoning_usage(wire_server):
    wire_server.push(reply("Hello there", reasoning="think", usage={"input": 7, "output": 3, "cache_read": 2}), reply(**TOOL_STEP))
    r = oa(wire_server).chat.completions.create(model="m", messages=USER)
    assert r.choices[0].message.content == "Hello there"
    assert r.choices[0].message.reasoning_content == "think"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.prompt_tokens_details.cached_tokens) == (9, 3, 2)
    r = oa(wire_server).chat.completions.create(model="m", messages=USER)
    calls = r.choices[0].message.tool_calls
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
    assert r.choices[0].finish_reason == "tool_calls"
    assert wire_server.requests[0].body["messages"] == USER
    assert [q.retry_count for q in wire_server.requests] == ["0", "0"]


def test_chat_stream_raw_and_helper(wire_server):
    full = {"input": 12, "output": 7, "cache_read": 3, "cache_write": 2, "reasoning": 4}
    wire_server.push(reply(["Hel", "lo"]), reply("a b", usage=full, **TOOL_STEP))
    chunks = list(oa(wire_server).chat.completions.create(model="m", messages=USER, stream=True, stream_options={"include_usage": True}))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    assert chunks[-1].usage.total_tokens == 15
    with oa(wire_server).chat.completions.stream(model="m", messages=USER, stream_options={"include_usage": True}) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    assert final.choices[0].message.content == "a b"
    details = final.usage.prompt_tokens_details
    assert (final.usage.prompt_tokens, details.cached_tokens, details.cache_write_tokens) == (17, 3, 2)
    assert final.usage.completion_tokens_details.reasoning_tokens == 4
    assert [c.function.name for c in final.choices[0].message.tool_calls] == ["get_weather", "get_time"]
    assert wire_server.requests[0].stream is True


# -- responses


def test_responses_text_tool_reasoning(wire_server):
    wire_server.push(reply("Hi", reasoning="plan", usage={"input": 4, "output": 2, "reasoning": 1}), reply(**TOOL_STEP))
    r = oa(wire_server).responses.create(model="m", input="hi")
    assert r.output_text == "Hi"
    assert r.output[0].type == "reasoning" and r.output[0].summary[0].text == "plan" and r.output[0].encrypted_content
    assert r.usage.output_tokens_details.reasoning_tokens == 1
    r = oa(wire_server).responses.create(model="m", input="hi")
    assert [(o.type, o.name, o.call_id) for o in r.output] == [("function_call", "get_weather", "call_2_0"), ("function_call", "get_time", "call_2_1")]


def test_responses_stream_raw_and_helper(wire_server):
    wire_server.push(reply("one two", reasoning="r1"), reply("x", **TOOL_STEP))
    events = list(oa(wire_server).responses.create(model="m", input="hi", stream=True))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "one two"
    with oa(wire_server).responses.stream(model="m", input="hi") as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    assert [o.type for o in final.output] == ["message", "function_call", "function_call"]
    assert final.output[1].arguments == '{"city": "Paris"}'


# -- anthropic messages


def test_messages_text_tool_thinking(wire_server):
    wire_server.push(reply("Let me check.", reasoning="hm", usage={"cache_write": 5}, **TOOL_STEP))
    m = an(wire_server).messages.create(model="m", max_tokens=10, messages=USER)
    assert [b.type for b in m.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert m.content[2].input == {"city": "Paris"} and m.stop_reason == "tool_use"
    assert m.usage.cache_creation_input_tokens == 5
    assert wire_server.requests[0].headers["authorization"] == "Bearer k"


def test_messages_stream_raw_and_helper(wire_server):
    full = {"input": 9, "output": 7, "cache_read": 3, "cache_write": 2, "reasoning": 4}
    wire_server.push(reply("Hello there"), reply("Checking", reasoning="hm", usage=full, **TOOL_STEP))
    events = list(an(wire_server).messages.create(model="m", max_tokens=10, messages=USER, stream=True))
    assert events[0].type == "message_start" and events[-1].type == "message_stop"
    with an(wire_server).messages.stream(model="m", max_tokens=10, messages=USER) as stream:
        for _ in stream:
            pass
        final = stream.get_final_message()
    u = final.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens) == (9, 7, 3, 2)
    assert u.output_tokens_details.thinking_tokens == 4
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert final.content[0].signature and final.content[3].input == {"tz": "CET"}
    assert wire_server.requests[1].headers.get("x-stainless-helper-method") == "stream"


# -- faults


def test_rate_limit_and_server_errors_are_provider_shaped(wire_server):
    wire_server.push(error(429, retry_after=2), error(429, retry_after_ms=1500), error(500), error(529), error(529))
    with pytest.raises(openai.RateLimitError) as exc:
        oa(wire_server).chat.completions.create(model="m", messages=USER)
    assert exc.value.response.headers["retry-after"] == "2"
    with pytest.raises(anthropic.RateLimitError) as exc:
        an(wire_server).messages.create(model="m", max_tokens=1, messages=USER)
    assert exc.value.response.headers["retry-after-ms"] == "1500" and exc.value.type == "rate_limit_error"
    with pytest.raises(openai.InternalServerError):
        oa(wire_server).responses.create(model="m", input="x")
    with pytest.raises(anthropic.OverloadedError):
        an(wire_server).messages.create(model="m", max_tokens=1, messages=USER)
    with pytest.raises(openai.InternalServerError) as exc:
        oa(wire_server).chat.completions.create(model="m", messages=USER)
    assert exc.value.status_code == 529
    assert len(wire_server.requests) == 5  # max_retries=0: one request each


def test_api_key_checked():
    with WireServer(api_key="right") as server:
        with pytest.raises(openai.AuthenticationError):
            oa(server).chat.completions.create(model="m", messages=USER)
        with pytest.raises(anthropic.AuthenticationError):
            an(server).messages.create(model="m", max_tokens=1, messages=USER)
        ok = anthropic.Anthropic(base_url=server.url, api_key="right", max_retries=0)
        assert ok.messages.create(model="m", max_tokens=1, messages=USER).content[0].text == "ok"


def test_slow_reply_times_out(wire_server):
    wire_server.push(reply("late", delay=1.0))
    with pytest.raises(openai.APITimeoutError):
        oa(wire_server, timeout=0.2).chat.completions.create(model="m", messages=USER)


def test_drop_before_headers(wire_server):
    wire_server.push(drop(), drop())
    with pytest.raises(openai.APIConnectionError):
        oa(wire_server).chat.completions.create(model="m", messages=USER)
    with pytest.raises(anthropic.APIConnectionError):
        an(wire_server).messages.create(model="m", max_tokens=1, messages=USER)
    assert oa(wire_server).chat.completions.create(model="m", messages=USER).choices[0].message.content == "ok"


def test_stream_cut_eof_is_silent_without_final_event(wire_server):
    wire_server.push(cut(after=2, text="a b c d"), cut(after=1), cut(after=1))
    chunks = list(oa(wire_server).chat.completions.create(model="m", messages=USER, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "a b "
    assert all(c.choices[0].finish_reason is None for c in chunks)
    events = list(oa(wire_server).responses.create(model="m", input="x", stream=True))
    assert "response.completed" not in [e.type for e in events]
    events = list(an(wire_server).messages.create(model="m", max_tokens=1, messages=USER, stream=True))
    assert "message_stop" not in [e.type for e in events]


def test_stream_cut_chunked_raises(wire_server):
    wire_server.push(cut(after=1, chunked=True), cut(after=1, chunked=True))
    with pytest.raises(openai.APIConnectionError):
        list(oa(wire_server).chat.completions.create(model="m", messages=USER, stream=True))
    # anthropic < 2.17 leaked the raw transport error; 2.17 wraps it in APIConnectionError
    with pytest.raises((httpx2.TransportError, anthropic.APIConnectionError)):
        list(an(wire_server).messages.create(model="m", max_tokens=1, messages=USER, stream=True))


def test_non_stream_cut_body(wire_server):
    wire_server.push(cut(after=1))
    with pytest.raises((openai.APIConnectionError, openai.APIError)):
        oa(wire_server).chat.completions.create(model="m", messages=USER)


def test_in_stream_error(wire_server):
    wire_server.push(stream_error(after=1), stream_error(after=1))
    with pytest.raises(openai.APIError):
        list(oa(wire_server).chat.completions.create(model="m", messages=USER, stream=True))
    with pytest.raises(anthropic.APIStatusError) as exc:
        list(an(wire_server).messages.create(model="m", max_tokens=1, messages=USER, stream=True))
    assert exc.value.status_code == 200 and exc.value.type == "overloaded_error"


def test_client_hanging_up_early_does_not_break_the_server(wire_server):
    wire_server.push(reply("a b c d e f g h " * 50, frame_delay=0.001))
    stream = oa(wire_server).chat.completions.create(model="m", messages=USER, stream=True)
    next(iter(stream))
    stream.close()
    assert oa(wire_server).chat.completions.create(model="m", messages=USER).choices[0].message.content == "ok"


def test_callable_step_and_records(wire_server):
    wire_server.push(lambda req: reply(f"you said {req.body['messages'][-1]['content']}"))
    r = oa(wire_server).chat.completions.create(model="m", messages=USER, extra_headers={"x-trace": "1"})
    assert r.choices[0].message.content == "you said weather?"
    rec = wire_server.requests[0]
    assert rec.path == "/v1/chat/completions" and rec.headers["x-trace"] == "1" and rec.body["model"] == "m"
    assert wire_server.pending == 0


def test_the_server_started_by_hand_answers_hermes_until_ctrl_c(tmp_path, hermes):
    """``python -m plugins_providers.testserver``: prints where it listens, serves a script to
    ``hermes run``, a line per request; Ctrl+C ends it with exit 0; a bad script is one line."""
    import json
    import signal
    import subprocess
    import sys

    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps([{"text": "first, scripted", "usage": {"input": 7, "output": 2}}]))
    server = subprocess.Popen([sys.executable, "-m", "plugins_providers.testserver", "--script", str(steps),
                               "--default", "later ones"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = server.stdout.readline()
        assert banner.startswith("wire server on http://127.0.0.1:") and "1 steps queued" in banner, banner
        try_line = server.stdout.readline()
        command = try_line.removeprefix("try: hermes ").split()
        out = hermes(*[c.strip('"') for c in command])
        assert out.returncode == 0 and out.stdout.strip() == "first, scripted", out.stderr
        assert hermes(*[c.strip('"') for c in command]).stdout.strip() == "later ones"
        assert server.stdout.readline().strip() == "POST /v1/chat/completions"
    finally:
        server.send_signal(signal.SIGINT)
        rest, err = server.communicate(timeout=10)
    assert server.returncode == 0 and "Traceback" not in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    done = subprocess.run([sys.executable, "-m", "plugins_providers.testserver", "--script", str(bad)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and done.stderr.strip() == f"wire server: {bad}: expected a JSON list of steps"


def test_a_non_streamed_answer_does_not_wait_for_the_clients_delayed_ack():
    """Headers and body are two writes: with Nagle on, the body waited for the client's delayed ACK, 40 ms
    on every non-streamed answer (the SDKs' default for most peers, and for `stream=False` here)."""
    import time

    with WireServer() as server:
        client = openai.OpenAI(base_url=server.openai_url, api_key="k", max_retries=0)
        took = []
        for _ in range(9):
            server.push(reply("hello there"))
            started = time.perf_counter()
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            took.append(time.perf_counter() - started)
        conns = list(server._conns)  # the kept-alive connection, server side
        assert conns and all(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for c in conns)
        assert sorted(took)[4] < 0.030, took  # was 0.040-0.048 every time
