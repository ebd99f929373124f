"""hermes memory providers and context engines as kernel memory backends
and context engines, through the real Agent loop."""

from __future__ import annotations

import json

from hermes.host.config import Config

from .test_compat_agent import load_compat, tool_results
from plugins_memory.hookspecs import MEMORY_BACKENDS


def test_memory_provider_class_entry_point_is_a_memory_backend(compat_site, make_agent):
    import plugins_memory.manager as memory_plugin

    cfg = Config({"memory": {"provider": "notebook"}})
    cands, adapters = load_compat(cfg)
    # named by memory.provider: chosen without a plugins.enabled entry
    assert cands["notebook"].status == "enabled"
    import hxfix_memory

    agent = make_agent(memory_plugin, *adapters, config=cfg, script=[
        {"tool_calls": [("notebook_write", {"note": "likes tea"})]}, "noted", "you like tea"])
    assert "notebook" in agent.host.registry[MEMORY_BACKENDS]
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
    assert "notebook" in agent.host.registry[MEMORY_BACKENDS]  # named by the provider's own .name
    # without the memory plugin there is no memory-backend hook: the adapter's implementation is optional
    assert make_agent(*adapters, config=cfg, script=["ok"]).host.registry[MEMORY_BACKENDS] == {}


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


def _stored_tools(agent):
    return [m["content"] for m in agent.messages if m.get("role") == "tool"]


def test_a_context_compressor_subclass_is_a_real_engine_with_its_override_called(compat_site, make_agent):
    cfg = Config({"plugins": {"enabled": ["pruner"]}, "context": {"engine": "pruner"}, "model_context_length": 2048})
    cands, adapters = load_compat(cfg)
    assert cands["pruner"].status == "enabled", cands["pruner"].error
    import hxfix_pruner

    hxfix_pruner.CALLS.clear()
    agent = make_agent(*adapters, config=cfg, toolsets=["bulk"], script=[
        {"tool_calls": [("bulk", {})]}, "looked", {"tool_calls": [("bulk", {})]}, "again", "third"])
    agent.run_conversation("one")
    agent.run_conversation("two")  # ~1,800 tokens of tool results: over half the 2,048 window
    before = agent.session_id
    agent.run_conversation("three")
    prunes = [c for c in hxfix_pruner.CALLS if c[0] == "prune"]
    assert prunes and prunes[0][2] == 2 and prunes[0][3] >= 1  # our compress called the subclass's seam
    tools = _stored_tools(agent)
    assert tools[0].startswith("[tool result pruned to save context: 3600 chars")  # the inherited prune
    assert not any("summary" in str(m.get("content")).lower() for m in agent.messages)  # the prune was enough
    assert agent.session_id != before  # the kernel continued in a new session after compression


def test_an_engine_that_delegates_to_a_context_compressor_summarises_through_the_agent(compat_site, make_agent):
    cfg = Config({"plugins": {"enabled": ["delegating"]}, "context": {"engine": "delegating"},
                  "model_context_length": 1024})
    cands, adapters = load_compat(cfg)
    assert cands["delegating"].status == "enabled", cands["delegating"].error
    import hxfix_pruner

    hxfix_pruner.CALLS.clear()
    long = "the beans climb the trellis " * 40  # ~1,100 characters a message, no tool results to prune
    agent = make_agent(*adapters, config=cfg, script=[long, long, "SUMMARY: beans and trellis", "after"])
    agent.run_conversation(long)
    agent.run_conversation(long)
    result = agent.run_conversation("and now?")
    assert [c[0] for c in hxfix_pruner.CALLS] == ["delegate"]
    summary = [m for m in agent.messages if "SUMMARY: beans and trellis" in str(m.get("content"))]
    assert summary, agent.messages  # the kernel's compressor asked the agent's model for the summary
    assert result.final_response == "after"


def test_the_compressor_stand_ins_deterministic_seams():
    from plugins.hermes_compat.host.context_compressor import ContextCompressor, _retire_stale_tool_result_images

    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    messages = [{"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "shot 1"}, image]},
                {"role": "tool", "tool_call_id": "b", "content": [image]}]
    assert _retire_stale_tool_result_images(messages) == 1
    assert image not in messages[0]["content"] and messages[1]["content"] == [image]  # the newest keeps its image
    big = [{"role": "user", "content": "go"}, {"role": "tool", "tool_call_id": "c", "content": "x" * 9000},
           {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    off = ContextCompressor(model="m", protect_last_n=2)
    assert off.prune_tool_results_only(big) == (big, 0)  # proactive prune is off unless asked for
    on = ContextCompressor(model="m", protect_last_n=2, proactive_prune_tokens=100)
    pruned, count = on.prune_tool_results_only(big)
    assert count == 1 and pruned[1]["content"].startswith("[tool result pruned to save context: 9000 chars")
    assert big[1]["content"] == "x" * 9000  # the input is left as it was
    assert on._prune_boundary(big, 2, None) == 2 and on._prune_boundary(big, 2, 1) == 2


def test_a_folder_memory_provider_answers_to_its_folder_name(compat_site, hermes_home, make_agent):
    import shutil

    import plugins_memory.manager as memory_plugin

    from .conftest import FIXTURES

    shutil.copytree(FIXTURES / "hxfix_memfolder", hermes_home / "plugins" / "ledger")
    cfg = Config({"memory": {"provider": "ledger"}})  # as the plugin's README says: the folder
    cands, adapters = load_compat(cfg)
    assert cands["ledger"].status == "enabled", cands["ledger"].error
    agent = make_agent(memory_plugin, *adapters, config=cfg,
                       script=[{"tool_calls": [("ledger_add", {"line": "paid rent"})]}, "noted"])
    backends = agent.host.registry[MEMORY_BACKENDS]
    assert {"ledger", "ledger-v2"} <= set(backends)  # the folder and the provider's own name
    assert json.loads(tool_results(agent.run_conversation("note it"))[0]) == {"lines": 1}  # active, so it runs
    assert "You keep a ledger." in agent.scripted.requests[0].messages[0]["content"]
    agent.close()


def test_the_compressor_stand_in_calls_its_seams_with_hermes_agents_arguments():
    """hermes-agent's compress prunes with the tail's token budget
    (``protect_tail_tokens=self.tail_token_budget``, a share of the trigger),
    and its proactive prune by count alone, both by keyword: an engine that
    overrides the prune and acts only when given a budget acted here never."""
    from plugins.hermes_compat.host.context_compressor import ContextCompressor

    seen = []

    class BudgetPruner(ContextCompressor):  # as a published engine overrides the seam: hermes-agent's signature
        def _prune_old_tool_results(self, messages, protect_tail_count, protect_tail_tokens=None, **rest):
            seen.append((protect_tail_count, protect_tail_tokens, rest))
            if not protect_tail_tokens:
                return messages, 0
            return [dict(m, content="[pruned]") if m["role"] == "tool" else m for m in messages], 1

    engine = BudgetPruner(model="m", protect_last_n=2, config_context_length=100_000, threshold_percent=0.5,
                          summary_target_ratio=0.25, proactive_prune_tokens=10, proactive_prune_min_result_chars=50)
    assert engine.tail_token_budget == int(50_000 * 0.25) == 12_500
    history = [{"role": "user", "content": "go"}, {"role": "tool", "tool_call_id": "c", "content": "x" * 900},
               {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    out = engine.compress(history)  # pruned, and small enough now: no summary call
    assert seen[-1] == (2, 12_500, {}) and out[1]["content"] == "[pruned]"
    engine.prune_tool_results_only(history, current_tokens=20)
    assert seen[-1] == (2, None, {"min_prune_chars": 50})
    engine.update_model("m", context_length=10_000)
    assert engine.tail_token_budget == int(5_000 * 0.25)
    assert ContextCompressor(model="m", summary_target_ratio=0.99).summary_target_ratio == 0.80  # hermes' bounds
