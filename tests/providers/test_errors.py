"""The classification table, fed with real SDK exceptions from the wire server."""

import email.utils
import json
import time

import anthropic
import httpx2
import openai
import pytest

from kernel.types import ProviderError
from plugins_providers.errors import classify, redact, retry_after
from plugins_providers.testserver import cut, drop, error, reply, stream_error

USER = [{"role": "user", "content": "hi"}]


def catch(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - we want whatever the SDK raises
        return exc
    raise AssertionError("expected an exception")


@pytest.fixture
def clients(wire_server):
    o = openai.OpenAI(base_url=wire_server.openai_url, api_key="sk-secretsecret123", max_retries=0, timeout=0.8)
    a = anthropic.Anthropic(base_url=wire_server.url, api_key="sk-ant-secret", max_retries=0, timeout=0.8)
    chat = lambda: list(o.chat.completions.create(model="m", messages=USER, stream=True))  # noqa: E731
    resp = lambda: o.responses.create(model="m", input="x")  # noqa: E731
    msgs = lambda: list(a.messages.create(model="m", max_tokens=5, messages=USER, stream=True))  # noqa: E731
    return {"chat": chat, "responses": resp, "messages": msgs}


CASES = [
    (error(429, retry_after=3), "rate_limit", 429, 3.0),
    (error(429, retry_after_ms=250), "rate_limit", 429, 0.25),
    (error(429, code="insufficient_quota", message="You exceeded your current quota"), "billing", 429, None),
    (error(402), "billing", 402, None),
    (error(401), "auth", 401, None),
    (error(403), "auth", 403, None),
    (error(400, message="This model's maximum context length is 8192 tokens"), "context_overflow", 400, None),
    (error(413), "context_overflow", 413, None),
    (error(400), "bad_request", 400, None),
    (error(500), "server", 500, None),
    (error(503), "server", 503, None),
    (error(529), "server", 529, None),
    (error(408), "transport", 408, None),
    (drop(), "transport", None, None),
    (reply("late", delay=2.0), "transport", None, None),  # past the clients' 0.8 s timeout
]


@pytest.mark.parametrize("api", ["chat", "responses", "messages"])
@pytest.mark.parametrize("step,reason,status,wait", CASES, ids=[f"{c[1]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_table(wire_server, clients, api, step, reason, status, wait):
    wire_server.push(step)
    err = classify(catch(clients[api]), provider="p", secrets=["sk-secretsecret123", "sk-ant-secret"])
    assert (err.reason, err.status_code) == (reason, status)
    if wait is not None:
        assert err.retry_after == pytest.approx(wait)
    assert "secret" not in str(err) and err.provider == "p"


def test_in_stream_errors(wire_server, clients):
    wire_server.push(stream_error(after=1), stream_error(after=1), stream_error(after=1, kind="rate_limit_error"))
    assert classify(catch(clients["chat"])).reason == "server"
    anth = classify(catch(clients["messages"]))
    assert anth.reason == "server" and anth.status_code is None
    assert classify(catch(clients["messages"])).reason == "rate_limit"


def test_chunked_cut_raw_transport_error(wire_server, clients):
    wire_server.push(cut(after=1, chunked=True), cut(after=1, chunked=True))
    assert classify(catch(clients["chat"])).reason == "transport"
    raw = catch(clients["messages"])
    # anthropic < 2.17 leaked the raw transport error; 2.17 wraps it: either is a transport failure
    assert isinstance(raw, (httpx2.TransportError, anthropic.APIConnectionError)), type(raw)
    assert classify(raw).reason == "transport"


def test_plain_exceptions():
    assert classify(json.JSONDecodeError("x", "doc", 0)).reason == "transport"
    assert classify(TimeoutError()).reason == "transport"
    assert classify(ConnectionResetError()).reason == "transport"
    assert classify(TypeError("Could not resolve authentication method")).reason == "config"
    assert classify(ValueError("odd")).reason == "bad_request"
    same = ProviderError("x", reason="server")
    assert classify(same) is same


def test_retry_after_forms():
    assert retry_after({"retry-after": "1.5"}) == 1.5
    assert retry_after({"retry-after-ms": "200", "retry-after": "9"}) == 0.2
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 27 <= retry_after({"retry-after": date}) <= 31
    assert retry_after({"retry-after": "garbage"}) is None
    assert retry_after({}) is None and retry_after(None) is None


def test_redact():
    assert redact("key sk-abcdefghijkl used", ["nothing"]) == "key *** used"
    assert redact("token=hunter2!!", ["hunter2!!"]) == "token=***"
    assert len(redact("x" * 1000)) == 300
