"""The fallback chain end to end: Agent -> fallback plugin -> real SDKs -> wire servers."""

import json
import os
import time

import pytest

from kernel import hookimpl

from plugins import fallback
from plugins_providers import anthropic_messages, openai_chat, openai_responses, resolve
from plugins_providers.testserver import cut, drop, error, reply, stream_error
from tests.providers.helpers import base_url

PLUGINS = (openai_chat, openai_responses, anthropic_messages, resolve, fallback)
FAST = {"retry_base_delay": 0.01, "api_max_retries": 2}


@pytest.fixture
def chain_agent(make_agent, make_wire_server):
    """``chain_agent(primary_mode, fallback_modes, **agent_settings)`` -> (agent, primary server, fallback servers).

    Afterwards, every request any of the servers saw is checked: one request
    per logical call, never an SDK retry (``x-stainless-retry-count: 0``)."""
    made = []

    def build(primary_mode="chat_completions", fallback_modes=("anthropic_messages",), entries=None, agent_cfg=None, stream=True, callbacks=(), plugins=()):
        primary = make_wire_server()
        servers = [make_wire_server(**(e.pop("_server", {}) if entries else {})) for e in (entries or [{} for _ in fallback_modes])]
        fbs = []
        for i, server in enumerate(servers):
            entry = dict(entries[i]) if entries else {"api_mode": fallback_modes[i]}
            entry.setdefault("model", f"fallback-{i}")
            entry.setdefault("base_url", base_url(server, entry["api_mode"]))
            entry.setdefault("strict_response_validation", True)
            fbs.append(entry)
        config = {"fallback_providers": fbs, "agent": {**FAST, **(agent_cfg or {})}}
        agent = make_agent(*PLUGINS, *plugins, config=config, api_mode=primary_mode, base_url=base_url(primary, primary_mode), model="primary-model", stream=stream, callbacks=callbacks)
        made.extend([primary, *servers])
        return agent, primary, servers

    yield build
    seen = [r for s in made for r in s.requests]
    assert seen and {r.headers.get("x-stainless-retry-count") for r in seen} == {"0"}


def retry_counts(*servers):
    return {r.headers.get("x-stainless-retry-count") for s in servers for r in s.requests}


@pytest.mark.parametrize("primary_mode,fallback_mode", [
    ("chat_completions", "anthropic_messages"),
    ("anthropic_messages", "codex_responses"),
    ("codex_responses", "chat_completions"),
])
def test_rate_limit_falls_back_to_another_api_mode(chain_agent, primary_mode, fallback_mode):
    agent, primary, (fb,) = chain_agent(primary_mode, (fallback_mode,))
    primary.push(error(429, retry_after=20))
    fb.push(reply("from the fallback"))
    result = agent.run_conversation("hello")
    assert result["exit_reason"] == "completed" and result["final_response"] == "from the fallback"
    assert len(primary.requests) == 1 and len(fb.requests) == 1  # no hidden SDK retries, no waiting 20 s
    assert retry_counts(primary, fb) == {"0"}
    assert fb.requests[0].body["model"] == "fallback-0"
    assert "hello" in json.dumps(fb.requests[0].body)  # the fallback got the same turn


def test_server_errors_retried_then_fallback(chain_agent):
    agent, primary, (fb,) = chain_agent()
    primary.push(error(500), error(503), error(529))
    fb.push(reply("ok from fallback"))
    result = agent.run_conversation("hello")
    assert result["final_response"] == "ok from fallback"
    assert len(primary.requests) == 3  # first try + api_max_retries=2
    assert retry_counts(primary, fb) == {"0"}


def test_timeout_retried_then_fallback(chain_agent, monkeypatch):
    # the deadline holds for the fallback too: wide enough that a loaded machine answers it in time
    agent, primary, (fb,) = chain_agent(agent_cfg={"api_max_retries": 1, "api_timeout": 1.0})
    primary.push(reply("late", delay=3.0), reply("late", delay=3.0))
    fb.push(reply("on time"))
    assert agent.run_conversation("hello")["final_response"] == "on time"
    assert len(primary.requests) == 2


def test_auth_refresh_then_success(chain_agent, monkeypatch):
    monkeypatch.setenv("PRIMARY_KEY", "old-key")
    agent, primary, (fb,) = chain_agent()
    agent.primary = agent.provider_config = agent.primary.with_(api_key_env="PRIMARY_KEY")

    def rotate(request):  # the user rotates the key while the call is failing
        os.environ["PRIMARY_KEY"] = "new-key"
        return error(401)

    primary.push(rotate, reply("authenticated"))
    result = agent.run_conversation("hello")
    assert result["final_response"] == "authenticated"
    assert [r.headers["authorization"] for r in primary.requests] == ["Bearer old-key", "Bearer new-key"]
    assert fb.requests == []


def test_auth_twice_falls_back(chain_agent, monkeypatch):
    monkeypatch.setenv("PRIMARY_KEY", "old-key")
    agent, primary, (fb,) = chain_agent()
    agent.primary = agent.provider_config = agent.primary.with_(api_key_env="PRIMARY_KEY")

    def rotate(request):  # a new key is read on refresh, and it is rejected too
        os.environ["PRIMARY_KEY"] = "new-key"
        return error(401)

    primary.push(rotate, error(401))
    fb.push(reply("fallback answers"))
    assert agent.run_conversation("hello")["final_response"] == "fallback answers"
    assert [r.headers["authorization"] for r in primary.requests] == ["Bearer old-key", "Bearer new-key"]
    assert len(fb.requests) == 1


def test_auth_with_an_unchanged_key_falls_back_without_a_second_call(chain_agent):
    agent, primary, (fb,) = chain_agent()
    primary.push(error(401), error(401))
    fb.push(reply("fallback answers"))
    assert agent.run_conversation("hello")["final_response"] == "fallback answers"
    assert len(primary.requests) == 1 and len(fb.requests) == 1  # re-reading gave the same key: no pointless retry


def test_api_key_env_of_fallback_entry_is_used(chain_agent, monkeypatch):
    monkeypatch.setenv("FALLBACK_KEY", "fb-secret-key")
    entries = [{"api_mode": "anthropic_messages", "api_key_env": "FALLBACK_KEY", "_server": {"api_key": "fb-secret-key"}}]
    agent, primary, (fb,) = chain_agent(entries=entries)
    primary.push(error(429))
    result = agent.run_conversation("hello")
    assert result["final_response"] == "ok"
    assert fb.requests[0].headers["authorization"] == "Bearer fb-secret-key"
    assert "fb-secret-key" not in repr(result)


def test_missing_key_of_fallback_entry_named_in_the_error(chain_agent):
    entries = [{"api_mode": "anthropic_messages", "api_key_env": "UNSET_FALLBACK_KEY"}]
    agent, primary, (fb,) = chain_agent(entries=entries)
    primary.push(error(429, retry_after=0))
    result = agent.run_conversation("hello")
    assert result["exit_reason"] == "error"
    assert "UNSET_FALLBACK_KEY" in result["error"] and "rate_limit" in result["error"]
    assert fb.requests == []


def test_primary_restored_on_next_turn(chain_agent):
    agent, primary, (fb,) = chain_agent()
    primary.push(error(500), error(500), error(500), reply("primary is back"))
    fb.push(reply("fallback turn"))
    assert agent.run_conversation("one")["final_response"] == "fallback turn"
    result = agent.run_conversation("two")
    assert result["final_response"] == "primary is back" and result["model"] == "primary-model"
    assert len(primary.requests) == 4 and len(fb.requests) == 1
    # the second turn's request carries the whole history, the fallback's answer included
    texts = [m.get("content") for m in primary.requests[-1].body["messages"]]
    assert "fallback turn" in texts


def test_cooldown_after_rate_limit_then_primary_again(chain_agent):
    # two turns must fit in the cooldown, on a loaded machine too
    agent, primary, (fb,) = chain_agent(agent_cfg={"fallback_cooldown": 2.0})
    primary.push(error(429), reply("primary again"))
    fb.push(reply("fb 1"), reply("fb 2"))
    assert agent.run_conversation("one")["final_response"] == "fb 1"
    assert agent.run_conversation("two")["final_response"] == "fb 2"  # cooling down: start on the fallback
    assert len(primary.requests) == 1
    time.sleep(2.05)
    assert agent.run_conversation("three")["final_response"] == "primary again"
    assert len(primary.requests) == 2 and len(fb.requests) == 2


def test_all_providers_failing_lists_each(chain_agent):
    agent, primary, fbs = chain_agent(fallback_modes=("anthropic_messages", "codex_responses"))
    primary.push(*[error(500)] * 3)
    fbs[0].push(error(401), error(401))
    fbs[1].push(error(400, message="bad tool schema"))
    result = agent.run_conversation("hello")
    assert result["exit_reason"] == "error"
    message = result["error"]
    assert message.startswith("every provider failed")
    assert "server (500)" in message and "auth (401)" in message and "bad tool schema" in message
    assert [len(s.requests) for s in (primary, *fbs)] == [3, 1, 1]  # the 401: its key re-read unchanged, not called again


class Deltas:
    def __init__(self):
        self.seen = []

    @hookimpl
    def on_stream_delta(self, text):
        self.seen.append(text)


def test_a_stream_cut_after_shown_deltas_is_retried(chain_agent):
    shown = Deltas()
    agent, primary, (fb,) = chain_agent(callbacks=[shown])
    primary.push(cut(after=2, text="partial answer that was cut"), reply("whole answer"))
    result = agent.run_conversation("hello")
    assert shown.seen[:2] == ["partial ", "answer "] and "".join(shown.seen[2:]) == "whole answer"
    assert result["exit_reason"] == "completed" and result["final_response"] == "whole answer"
    assert fb.requests == [] and len(primary.requests) == 2


def test_a_stream_cut_that_nobody_saw_falls_back_as_before_the_first_byte(chain_agent):
    agent, primary, (fb,) = chain_agent()  # no listener: like --json or a subagent
    primary.push(*[cut(after=2, text="partial answer that was cut")] * 4)
    fb.push(reply("from the fallback"))
    result = agent.run_conversation("hello")
    assert result["final_response"] == "from the fallback" and len(fb.requests) == 1


def test_stream_cut_before_any_delta_is_retried(chain_agent):
    agent, primary, (fb,) = chain_agent()
    primary.push(cut(after=0, chunked=True), reply("whole answer"))
    assert agent.run_conversation("hello")["final_response"] == "whole answer"
    assert len(primary.requests) == 2 and fb.requests == []


@pytest.mark.parametrize("primary_mode,fallback_mode", [
    ("anthropic_messages", "chat_completions"),
    ("chat_completions", "codex_responses"),
    ("codex_responses", "anthropic_messages"),
])
def test_drop_overload_and_in_stream_error_retried_then_fallback(chain_agent, primary_mode, fallback_mode):
    """A connection dropped before headers, a 529 and an in-stream error before
    any delta are transient: retried (api_max_retries=2), then the chain moves on."""
    agent, primary, (fb,) = chain_agent(primary_mode, (fallback_mode,))
    primary.push(drop(), error(529), stream_error(after=0))
    fb.push(reply("fallback after transient failures"))
    result = agent.run_conversation("hello")
    assert result["exit_reason"] == "completed" and result["final_response"] == "fallback after transient failures"
    assert len(primary.requests) == 3 and len(fb.requests) == 1


def test_stream_cut_before_any_delta_may_fall_back(chain_agent):
    """Nothing was shown yet, so a stream cut on every retry may still move to
    the next provider (of another API mode)."""
    shown = Deltas()
    agent, primary, (fb,) = chain_agent(callbacks=[shown])
    primary.push(*[cut(after=0, chunked=True)] * 3)
    fb.push(reply("complete answer"))
    result = agent.run_conversation("hello")
    assert result["final_response"] == "complete answer"
    assert "".join(shown.seen) == "complete answer"
    assert len(primary.requests) == 3 and len(fb.requests) == 1


def test_rate_limit_without_fallback_waits_retry_after_capped(make_agent, make_wire_server):
    """No chain to move on to: a 429 is retried after the server's
    ``retry-after``, capped by ``agent.retry_max_delay``."""
    server = make_wire_server()
    config = {"agent": {"retry_base_delay": 0.01, "retry_max_delay": 0.3, "fallback_cooldown": 0.01}}
    agent = make_agent(*PLUGINS, config=config, api_mode="chat_completions", base_url=server.openai_url)
    server.push(error(429, retry_after=0.15), error(429, retry_after=3600), reply("after waiting"))
    started = time.monotonic()
    assert agent.run_conversation("hello")["final_response"] == "after waiting"
    assert time.monotonic() - started < 5  # the hour was capped
    first, second, third = (r.time for r in server.requests)
    assert second - first >= 0.14 and 0.28 <= third - second < 2
    assert {r.headers["x-stainless-retry-count"] for r in server.requests} == {"0"}



class Echo:
    @hookimpl
    def register_tools(self, register):
        from kernel.types import Tool

        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        register(Tool("echo", "Echo the text", schema, lambda args, ctx: {"echoed": args.get("text")}, parallel_safe=True))


@pytest.mark.parametrize("primary_mode,fallback_mode", [
    ("codex_responses", "anthropic_messages"),
    ("anthropic_messages", "chat_completions"),
    ("chat_completions", "codex_responses"),
])
def test_history_of_one_mode_carried_to_another(chain_agent, primary_mode, fallback_mode):
    """Turn 1 runs a tool loop (with reasoning) on the primary; turn 2 falls
    back mid-conversation: the other API gets that history in its own shape,
    and the fallback's own tool loop stays on the fallback for the turn."""
    agent, primary, (fb,) = chain_agent(primary_mode, (fallback_mode,), plugins=(Echo(),))
    primary.push(reply(tool_calls=[("echo", {"text": "one"})], reasoning="use echo"), reply("turn one done"),
                 error(500), error(500), error(500))
    fb.push(reply(tool_calls=[("echo", {"text": "two"})]), reply("turn two done"))
    assert agent.run_conversation("first")["final_response"] == "turn one done"
    result = agent.run_conversation("second")
    assert result["exit_reason"] == "completed" and result["final_response"] == "turn two done"
    assert len(primary.requests) == 5 and len(fb.requests) == 2  # the tool loop stayed on the fallback
    first, second = (r.body for r in fb.requests)
    sent = json.dumps(first)
    assert "first" in sent and "turn one done" in sent and '\\"echoed\\": \\"one\\"' in sent
    if fallback_mode == "anthropic_messages":
        roles = [m["role"] for m in first["messages"]]
        assert roles == ["user", "assistant", "user", "assistant", "user"]
        use = [b for b in first["messages"][1]["content"] if b["type"] == "tool_use"]
        result_block = first["messages"][2]["content"][0]
        assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == use[0]["id"]
        assert not any(b["type"] == "thinking" for m in first["messages"] for b in m["content"] if isinstance(b, dict))
    elif fallback_mode == "chat_completions":
        roles = [m["role"] for m in first["messages"]]
        assert roles == ["user", "assistant", "tool", "assistant", "user"]
        assert first["messages"][2]["tool_call_id"] == first["messages"][1]["tool_calls"][0]["id"]
    else:
        kinds = [i.get("type", "message") for i in first["input"]]
        assert "reasoning" not in kinds  # another provider's reasoning is not replayed as a Responses item
        call = next(i for i in first["input"] if i.get("type") == "function_call")
        output = next(i for i in first["input"] if i.get("type") == "function_call_output")
        assert call["call_id"] == output["call_id"]
    assert '\\"echoed\\": \\"two\\"' in json.dumps(second)
    agent.run_conversation("third")
    assert len(primary.requests) == 6  # the next turn is back on the primary


def test_a_child_spawned_on_a_fallback_keeps_that_entrys_provider_and_options(chain_agent):
    """A child agent runs on its parent's current provider: here the fallback
    entry the turn moved to, with that entry's own options (they used to be
    rebuilt from provider_options, so the entry's were lost)."""
    from kernel.types import Tool

    seen = {}

    class Spawner:
        __name__ = "spawner"

        @hookimpl
        def register_tools(self, register):
            def spawn(args, ctx):
                child = ctx.agent.spawn_child(toolsets=[])
                try:
                    seen["parent"], seen["child"] = ctx.agent.provider_config, child.primary
                    return child.run_conversation("say something").final_response
                finally:
                    ctx.agent.release_child(child)

            register(Tool("spawn", "Spawn a child.", {"type": "object", "properties": {}}, spawn))

    entry = {"api_mode": "chat_completions", "temperature": 0.25, "extra_headers": {"X-Route": "fallback"}}
    agent, primary, (fb,) = chain_agent("anthropic_messages", entries=[entry], plugins=(Spawner(),))
    primary.push(error(429, retry_after=20))
    fb.push(reply("", tool_calls=[("spawn", {})]), reply("from the child"), reply("done"))
    result = agent.run_conversation("go")
    assert result.final_response == "done", result.error
    parent, child = seen["parent"], seen["child"]
    assert parent.model == "fallback-0" and parent.api_mode == "chat_completions"
    assert child == parent and child.options()["temperature"] == 0.25 and child.options()["strict_response_validation"]
    assert len(primary.requests) == 1 and len(fb.requests) == 3  # the child's call went to the fallback too
    assert [r.headers.get("x-route") for r in fb.requests] == ["fallback"] * 3  # a mapping option was dropped
    assert result.messages[2]["content"] == "from the child"
