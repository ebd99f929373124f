"""hermes memory providers and context engines as kernel memory backends
and context engines, through the real Agent loop."""

from __future__ import annotations

import json

from kernel.config import Config

from .test_compat_agent import load_compat, tool_results


def test_memory_provider_class_entry_point_is_a_memory_backend(compat_site, make_agent):
    import plugins_memory.manager as memory_plugin

    cfg = Config({"memory": {"provider": "notebook"}})
    cands, adapters = load_compat(cfg)
    # named by memory.provider: chosen without a plugins.enabled entry
    assert cands["notebook"].status == "enabled"
    import hxfix_memory

    agent = make_agent(memory_plugin, *adapters, config=cfg, script=[
        {"tool_calls": [("notebook_write", {"note": "likes tea"})]}, "noted", "you like tea"])
    assert "notebook" in agent.host.registry.table("memory_backends")
    first = agent.run_conversation("remember that I like tea")
    assert json.loads(tool_results(first)[0]) == {"saved": 1}
    agent.run_conversation("what do I like?")
    requests = agent.scripted.requests
    assert "You have a notebook." in requests[0].messages[0]["content"]
    last_user = [m for m in requests[-1].messages if m["role"] == "user"][-1]
    assert "notebook remembers: likes tea" in json.dumps(last_user["content"])
    agent.close()
    kinds = [e[0] for e in hxfix_memory.EVENTS]
    assert kinds[0] == "initialize" and {"hermes_home", "platform", "agent_context"} <= set(hxfix_memory.EVENTS[0][2])
    assert "agent" not in hxfix_memory.EVENTS[0][2]
    assert ("sync_turn", "remember that I like tea", "noted", True) in hxfix_memory.EVENTS
    assert kinds[-1] == "shutdown"


def test_memory_provider_from_the_hermes_memory_provider_group(compat_site, make_agent):
    import plugins_memory.manager as memory_plugin

    cfg = Config({"plugins": {"enabled": ["jotter"]}})
    cands, adapters = load_compat(cfg)
    assert cands["jotter"].status == "enabled", cands["jotter"].error
    assert cands["jotter"].dist == "hermes-jotter"
    agent = make_agent(memory_plugin, *adapters, config=cfg, script=["ok"])
    assert "notebook" in agent.host.registry.table("memory_backends")  # named by the provider's own .name
    # without the memory plugin there is no memory-backend hook: the adapter's implementation is optional
    assert make_agent(*adapters, config=cfg, script=["ok"]).host.registry.table("memory_backends") == {}


def test_memory_tool_without_the_provider_active_is_an_error_the_model_reads(compat_site, make_agent):
    import plugins_memory.manager as memory_plugin

    cfg = Config({"plugins": {"enabled": ["notebook"]}})  # loaded, but memory.provider not set
    _, adapters = load_compat(cfg)
    agent = make_agent(memory_plugin, *adapters, config=cfg,
                       script=[{"tool_calls": [("notebook_write", {"note": "x"})]}, "ok"])
    error = json.loads(tool_results(agent.run_conversation("hi"))[0])["error"]
    assert "not active" in error and "memory.provider: notebook" in error


def test_context_engine_class_entry_point_compresses(compat_site, make_agent):
    cfg = Config({"plugins": {"enabled": ["keep-last"]}, "context": {"engine": "keep-last"}})
    cands, adapters = load_compat(cfg)
    assert cands["keep-last"].status == "enabled", cands["keep-last"].error
    import hxfix_engine

    agent = make_agent(*adapters, config=cfg, script=[
        {"content": "first", "usage": {"input_tokens": 100, "output_tokens": 7}}, "second"])
    assert type(agent.context_engine).__name__ == "ContextEngineAdapter"
    agent.run_conversation("one")
    old_session = agent.session_id
    result = agent.run_conversation("two")
    events = hxfix_engine.ENGINE_EVENTS
    assert ("usage", 100, 7) in events
    assert ("session", old_session) in events
    compress = [e for e in events if e[0] == "compress"]
    assert compress and compress[0][2] == 100  # current_tokens from the last real usage
    assert result["messages"][0]["content"] == "[summary] earlier turns dropped"
    assert agent.session_id != old_session  # the kernel continued in a new session after compression
    assert [e[1] for e in events if e[0] == "end"] == [old_session]  # the boundary reached the engine
    agent.close()
    assert [e[1] for e in events if e[0] == "end"] == [old_session, agent.session_id]
