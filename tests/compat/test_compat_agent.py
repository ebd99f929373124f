"""hermes plugins loaded through the compatibility layer, driven by the real
Agent loop with the scripted provider."""

from __future__ import annotations

import json
import sys

import pytest

from hermes.host.config import Config
from hermes.host.plugins import Selection, resolve

from .conftest import install_dir_plugin
from kernel.hookspecs import MODEL_PROVIDERS
from plugins.commands.hookspecs import SLASH_COMMANDS


def load_compat(config: Config) -> tuple:
    """What the kernel does with the candidates of discover_plugins: resolve, then load the enabled ones."""
    from plugins.hermes_compat.discovery import candidates

    cands = candidates(config)
    resolve(cands, Selection.from_config(config, environ={}))
    adapters = [c.load() for c in cands if c.status == "enabled"]
    return {c.name: c for c in cands}, adapters


def tool_results(result: dict) -> list:
    return [m["content"] for m in result["messages"] if m["role"] == "tool"]


def test_discovery_lists_without_importing_and_everything_is_opt_in(compat_site, hermes_home):
    install_dir_plugin(hermes_home)
    cands, adapters = load_compat(Config({}))
    assert adapters == []
    assert {"kitchen", "counter", "rewriter", "acme", "side", "notebook", "keep-last", "halfway", "greeter",
            "jotter"} <= set(cands)
    for c in cands.values():
        assert c.source == "hermes-compat" and c.status == "not enabled", c
    assert cands["kitchen"].dist == "hermes-kitchen" and cands["kitchen"].version == "1.0"
    assert cands["greeter"].version == "1.2.0" and cands["greeter"].description == "Greets people"
    assert not [m for m in sys.modules if m.startswith(("hxfix_", "hermes_plugins"))]


def test_disabled_wins_over_enabled_and_safe_mode_loads_none(compat_site):
    cands, adapters = load_compat(Config({"plugins": {"enabled": ["kitchen"], "disabled": ["kitchen"]}}))
    assert cands["kitchen"].status == "disabled" and adapters == []
    from plugins.hermes_compat.discovery import candidates

    cands = candidates(Config({"plugins": {"enabled": ["kitchen"]}}))
    resolve(cands, Selection.from_config(Config({"plugins": {"enabled": ["kitchen"]}}),
                                         environ={"HERMES_SAFE_MODE": "1"}))
    assert {c.status for c in cands} == {"not enabled"}


def test_tool_offered_runs_and_hooks_fire_with_hermes_keywords(compat_site, make_agent):
    cfg = Config({"plugins": {"enabled": ["kitchen"]}})
    cands, adapters = load_compat(cfg)
    assert cands["kitchen"].status == "enabled"
    import hxfix_kitchen

    agent = make_agent(*adapters, config=cfg, script=[
        {"tool_calls": [("shout", {"text": "hi"}), ("shout", {"text": "forbidden"})]},
        "done",
    ])
    result = agent.run_conversation("make it loud")
    assert result["exit_reason"] == "completed"
    # the tool was offered to the model
    first = agent.scripted.requests[0]
    assert "shout" in [t["name"] for t in first.tools]
    # pre_llm_call context went into this turn's user message of the request only
    user = [m for m in first.messages if m["role"] == "user"][-1]
    assert "kitchen-context: the user likes soup" in json.dumps(user["content"])
    assert "kitchen-context" not in json.dumps(result["messages"])
    # the tool ran, transform_tool_result replaced its result; the block stopped the second call
    ran, blocked = tool_results(result)
    assert json.loads(ran) == {"transformed": {"shouted": "HI"}}
    assert json.loads(blocked) == {"error": "kitchen says no"}
    handler_calls = [kw for name, kw in hxfix_kitchen.CALLS if name == "shout-handler"]
    assert len(handler_calls) == 1
    assert handler_calls[0]["args"] == {"text": "hi"}
    assert set(handler_calls[0]) == {"args", "task_id", "session_id", "user_task"}
    assert handler_calls[0]["user_task"] == "make it loud" and handler_calls[0]["session_id"] == agent.session_id
    # transform_llm_output replaced the final answer
    assert result["final_response"] == "done [kitchen]"
    names = [n for n, _ in hxfix_kitchen.CALLS]
    for hook in ("on_session_start", "pre_llm_call", "pre_api_request", "post_api_request", "pre_tool_call",
                 "post_tool_call", "post_llm_call", "on_session_end"):
        assert hook in names, hook
    start = dict(hxfix_kitchen.CALLS[names.index("on_session_start")][1])
    assert start == {"session_id": agent.session_id, "model": "test-model", "platform": "cli",
                     "telemetry_schema_version": "hermes.observer.v1"}
    pre = [kw for n, kw in hxfix_kitchen.CALLS if n == "pre_tool_call"][0]
    assert pre["tool_name"] == "shout" and pre["session_id"] == agent.session_id and pre["middleware_trace"] == []
    assert all(pre[k] for k in ("task_id", "tool_call_id", "turn_id", "api_request_id")), pre
    statuses = [kw["status"] for n, kw in hxfix_kitchen.CALLS if n == "post_tool_call"]
    assert statuses == ["ok", "blocked"]
    usage = [kw["usage"] for n, kw in hxfix_kitchen.CALLS if n == "post_api_request"][0]
    assert {"prompt_tokens", "total_tokens", "input_tokens", "output_tokens"} <= set(usage)
    end = [kw for n, kw in hxfix_kitchen.CALLS if n == "on_session_end"][-1]
    assert end["completed"] is True and end["interrupted"] is False
    agent.close()
    assert [kw for n, kw in hxfix_kitchen.CALLS if n == "on_session_finalize"][-1] == {"reason": "shutdown"}


def test_slash_command_and_rewrite_in_place(compat_site, make_agent):
    cfg = Config({"plugins": {"enabled": ["kitchen", "counter", "rewriter"]}})
    cands, adapters = load_compat(cfg)
    agent = make_agent(*adapters, config=cfg, script=[{"tool_calls": [("count_chars", {"text": "abc"})]}, "ok"])
    result = agent.run_conversation("count")
    payload = json.loads(tool_results(result)[0])
    assert payload == {"count": 5, "user_task": "count"}  # "abc!!": rewritten in place before the tool ran
    slash = agent.host.registry[SLASH_COMMANDS]
    assert slash["soup"].value("leek", agent) == "soup of leek"


def test_tool_request_middleware_replaces_arguments(compat_site, make_agent):
    cfg = Config({"plugins": {"enabled": ["counter", "widener"]}})
    _, adapters = load_compat(cfg)
    agent = make_agent(*adapters, config=cfg, script=[{"tool_calls": [("count_chars", {"text": "abc"})]}, "ok"])
    assert json.loads(tool_results(agent.run_conversation("count"))[0])["count"] == 6


def test_side_effect_module_zero_arg_provider_and_function_targets(compat_site, make_agent):
    cfg = Config({"plugins": {"enabled": ["side", "acme", "counter"]}})
    cands, adapters = load_compat(cfg)
    assert all(cands[n].status == "enabled" for n in ("side", "acme", "counter"))
    agent = make_agent(*adapters, config=cfg, script=[
        {"tool_calls": [("lookup", {"key": "abcd"}), ("lookup", {})]}, "ok"])
    result = agent.run_conversation("look")
    assert [json.loads(r) for r in tool_results(result)] == [{"key": "abcd", "value": 4}, {"error": "key is required"}]
    registry = agent.host.registry
    assert "acme" in registry[MODEL_PROVIDERS]
    assert agent.hook.resolve_api_mode(config=agent.primary.with_(provider="acme-ai", api_mode="")) == "acme"


def test_register_raising_half_way_keeps_earlier_registrations_and_marks_error(compat_site, make_agent):
    cfg = Config({"plugins": {"enabled": ["halfway"]}})
    cands, adapters = load_compat(cfg)
    cand = cands["halfway"]
    assert cand.status == "error"
    assert "register() failed: RuntimeError: config file missing" in cand.error and "early_tool" in cand.error
    agent = make_agent(*adapters, config=cfg, script=[{"tool_calls": [("early_tool", {})]}, "ok"])
    assert json.loads(tool_results(agent.run_conversation("go"))[0]) == {"early": True}


def test_directory_plugin_with_relative_imports_and_config(compat_site, hermes_home, make_agent):
    install_dir_plugin(hermes_home)
    (hermes_home / "config.yaml").write_text("plugins:\n  enabled: [greeter]\n")
    from hermes.host.config import load_config

    cfg = load_config()
    cands, adapters = load_compat(cfg)
    assert cands["greeter"].status == "enabled", cands["greeter"].error
    assert "hermes_plugins.greeter" in sys.modules
    agent = make_agent(*adapters, config=cfg, script=[{"tool_calls": [("greet", {"who": "ana"})]}, "ok"])
    assert json.loads(tool_results(agent.run_conversation("hi"))[0]) == {"greeting": "hello, ana"}
    # set_config wrote plugins.entries.greeter.settings.greeted (hermes-agent 0.22's layout), keeping the rest
    assert load_config().get("plugins.entries.greeter.settings.greeted") is True
    assert load_config().get("plugins.enabled") == ["greeter"]


def test_stand_ins_are_never_left_as_top_level_modules(compat_site, make_agent):
    cfg = Config({"plugins": {"enabled": ["side", "notebook", "acme"]}})
    load_compat(cfg)
    for name in ("agent", "tools", "providers", "tools.registry", "hermes_cli", "hermes_constants"):
        assert name not in sys.modules, name
    with pytest.raises(ImportError):
        __import__("tools.registry")


OVERRIDER = '''
def register(ctx):
    schema = {"name": "echo", "description": "a hermes echo", "parameters": {"type": "object", "properties": {}}}
    ctx.register_tool("echo", "hermes-echo", schema, lambda args, **kw: '"from the hermes plugin"',
                      override=OVERRIDE)
'''


@pytest.mark.parametrize("override, allowed, winner", [
    (False, False, {"echo": "hi"}),   # a built-in keeps its name
    (True, True, "from the hermes plugin"),  # replaced, with the operator's consent
])
def test_tool_override_needs_consent(compat_site, make_agent, echo_plugin, override, allowed, winner):
    from .conftest import write_dist

    (compat_site / "hxfix_overrider.py").write_text(OVERRIDER.replace("OVERRIDE", str(override)))
    write_dist(compat_site, "hermes-overrider", "0.1", {"hermes_agent.plugins": {"overrider": "hxfix_overrider"}})
    cfg = Config({"plugins": {"enabled": ["overrider"], "entries": {"overrider": {"allow_tool_override": allowed}}}})
    cands, adapters = load_compat(cfg)
    assert cands["overrider"].status == "enabled", cands["overrider"].error
    agent = make_agent(echo_plugin, *adapters, config=cfg,
                       script=[{"tool_calls": [("echo", {"text": "hi"})]}, "ok"])
    assert json.loads(tool_results(agent.run_conversation("go"))[0]) == winner


def test_override_without_consent_is_an_error(compat_site):
    from .conftest import write_dist

    (compat_site / "hxfix_overrider.py").write_text(OVERRIDER.replace("OVERRIDE", "True"))
    write_dist(compat_site, "hermes-overrider", "0.1", {"hermes_agent.plugins": {"overrider": "hxfix_overrider"}})
    cands, _ = load_compat(Config({"plugins": {"enabled": ["overrider"]}}))
    assert cands["overrider"].status == "error"
    assert "allow_tool_override: true" in cands["overrider"].error


def test_plugin_settings_in_every_layout_hermes_agent_has_used():
    from plugins.hermes_compat import state
    from plugins.hermes_compat.context import PluginContext, PluginManifest

    def ctx_for(entry):
        record = state.PluginRecord(name="p", source="entrypoint")
        return PluginContext(record, PluginManifest(name="p", key="p"), Config({"plugins": {"entries": {"p": entry}}}))

    newest = ctx_for({"settings": {"colour": "teal", "deep": {"x": 1}}, "config": {"colour": "old"}, "colour": "older"})
    assert (newest.get_config("colour"), newest.get_config("deep.x"), newest.config) == \
        ("teal", 1, {"colour": "teal", "deep": {"x": 1}})
    legacy = ctx_for({"config": {"colour": "legacy"}})
    assert legacy.get_config("colour") == "legacy"
    oldest = ctx_for({"colour": "0.19"})  # right under the entry, as 0.19 read it
    assert (oldest.get_config("colour"), oldest.config, oldest.get_config("nope", "dflt")) == \
        ("0.19", {"colour": "0.19"}, "dflt")
