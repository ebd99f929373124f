"""End to end against the wire-protocol test server: a hermes model-provider
plugin (registered by import side effect) serves the Agent through the real
openai SDK over loopback HTTP, and a hermes plugin's tool, hooks, block and
transform act on what the model asked for."""

from __future__ import annotations

import json

import pytest

from hermes.host.config import Config
from hermes.host.plugins import PluginHost
from kernel.agent import Agent
from kernel.types import ProviderConfig

from .test_compat_agent import load_compat

testserver = pytest.importorskip("plugins_providers.testserver")
openai_chat = pytest.importorskip("plugins_providers.openai_chat")


def test_hermes_plugins_against_the_wire_server(compat_site, monkeypatch):
    from plugins_providers.testserver import WireServer, reply

    with WireServer(api_key="acme-key") as server:
        monkeypatch.setenv("HXFIX_ACME_URL", server.openai_url)
        monkeypatch.setenv("ACME_API_KEY", "acme-key")
        cfg = Config({"plugins": {"enabled": ["kitchen", "acme"]}})
        cands, adapters = load_compat(cfg)
        assert cands["acme"].status == "enabled" and cands["kitchen"].status == "enabled"
        import hxfix_kitchen

        host = PluginHost.from_objects([openai_chat, *adapters], cfg)
        server.push(reply(tool_calls=[("shout", {"text": "hi"}), ("shout", {"text": "forbidden"})],
                          usage={"input": 30, "output": 6}),
                    reply("all done", usage={"input": 50, "output": 3}))
        # provider "acme-ai" is an alias of the plugin's profile: it picks the
        # profile's base URL, key variable and chat_completions mode
        agent = Agent(host, ProviderConfig(provider="acme-ai", model="acme-large"))
        try:
            result = agent.run_conversation("shout hi")
        finally:
            agent.close()

    assert result["exit_reason"] == "completed", result["error"]
    assert result["final_response"] == "all done [kitchen]"
    first, second = server.requests[0].body, server.requests[1].body
    assert first["model"] == "acme-large"
    assert [t["function"]["name"] for t in first["tools"]] == ["shout"]
    assert "kitchen-context" in json.dumps(first["messages"][-1])
    tool_msgs = [m for m in second["messages"] if m["role"] == "tool"]
    assert [json.loads(m["content"]) for m in tool_msgs] == [{"transformed": {"shouted": "HI"}},
                                                            {"error": "kitchen says no"}]
    calls = dict(hxfix_kitchen.CALLS)  # the last call of each hook
    assert calls["post_api_request"]["usage"]["prompt_tokens"] == 50
    assert calls["pre_api_request"]["tool_count"] == 1
    assert [kw["status"] for n, kw in hxfix_kitchen.CALLS if n == "post_tool_call"] == ["ok", "blocked"]


def test_cli_run_on_a_hermes_provider_profile_against_the_wire_server(hermes, tmp_path):
    import os

    from plugins_providers.testserver import WireServer, reply
    from tests.conftest import ROOT

    from .conftest import make_site

    site = make_site(tmp_path / "site")
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{site}", "ACME_API_KEY": "acme-key"}
    for name in ("kitchen", "acme"):
        assert hermes("plugins", "enable", name, env=env).returncode == 0
    with WireServer(api_key="acme-key") as server:
        env["HXFIX_ACME_URL"] = server.openai_url
        server.push(reply(tool_calls=[("shout", {"text": "wire"})]), reply("loud enough"))
        out = hermes("run", "--provider", "acme", "-m", "acme-large", "--json", "shout", env=env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["final_response"] == "loud enough [kitchen]"
    assert [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"] == [
        {"transformed": {"shouted": "WIRE"}}]
    assert len(server.requests) == 2 and server.requests[0].body["model"] == "acme-large"
    assert server.requests[0].headers.get("authorization") == "Bearer acme-key"


def test_every_fixture_shape_against_the_wire_server(compat_site, hermes_home, monkeypatch):
    """One conversation through the real openai SDK and the wire server with a
    plugin of every shape loaded: module, function targets, a side-effect
    module, a directory plugin with relative imports, an async tool, a
    register() that failed half way, a memory provider class, a context engine
    class, a zero-argument model provider and an in-place argument rewriter."""
    import plugins_memory.manager as memory_plugin
    from plugins_providers.testserver import WireServer, reply

    from .conftest import install_dir_plugin

    install_dir_plugin(hermes_home)
    enabled = ["kitchen", "counter", "rewriter", "side", "halfway", "lazy", "greeter", "acme", "keep-last", "strict"]
    cfg = Config({"plugins": {"enabled": enabled}, "memory": {"provider": "notebook"},
                  "context": {"engine": "keep-last"}})
    calls = [("shout", {"text": "hi"}), ("shout", {"text": "forbidden"}), ("count_chars", {"text": "abc"}),
             ("lookup", {"key": "abcd"}), ("early_tool", {}), ("aecho", {"text": "x"}), ("greet", {"who": "ana"}),
             ("notebook_write", {"note": "likes tea"})]
    with WireServer(api_key="acme-key") as server:
        monkeypatch.setenv("HXFIX_ACME_URL", server.openai_url)
        monkeypatch.setenv("ACME_API_KEY", "acme-key")
        cands, adapters = load_compat(cfg)
        for name in enabled + ["notebook"]:
            assert cands[name].status == ("error" if name == "halfway" else "enabled"), (name, cands[name].error)
        import hxfix_engine
        import hxfix_kitchen
        import hxfix_strict

        host = PluginHost.from_objects([openai_chat, memory_plugin, *adapters], cfg)
        server.push(reply(tool_calls=calls, usage={"input": 20, "output": 5}),
                    reply("done", usage={"input": 40, "output": 2}),
                    reply("tea, I recall", usage={"input": 45, "output": 3}))
        agent = Agent(host, ProviderConfig(provider="acme", model="acme-large"))
        url = server.openai_url
        try:
            result = agent.run_conversation("do everything")
            second = agent.run_conversation("what do I like?")
        finally:
            agent.close()

    assert result["exit_reason"] == "completed", result["error"]
    first = server.requests[0].body
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {name for name, _ in calls} <= offered
    assert "You have a notebook." in first["messages"][0]["content"]
    results = [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]
    assert results == [
        {"transformed": {"shouted": "HI"}},  # kitchen's transform_tool_result replaced the result
        {"error": "kitchen says no"},  # kitchen's pre_tool_call block stopped the tool
        {"count": 5, "user_task": "do everything"},  # "abc!!": rewritten in place by another plugin
        {"key": "abcd", "value": 4},
        {"early": True},
        {"echo": "x", "kwargs": ["session_id", "task_id", "user_task"]},
        {"greeting": "hello, ana"},
        {"saved": 1},
    ]
    assert result["final_response"] == "done [kitchen]"
    assert second["final_response"] == "tea, I recall [kitchen]"
    last_user = [m for m in server.requests[-1].body["messages"] if m["role"] == "user"][-1]
    assert "notebook remembers: likes tea" in json.dumps(last_user["content"])
    names = {name for name, _ in hxfix_kitchen.CALLS}
    assert {"on_session_start", "pre_llm_call", "pre_api_request", "post_api_request", "pre_tool_call",
            "post_tool_call", "post_llm_call", "on_session_end", "on_session_finalize"} <= names
    assert ("usage", 20, 5) in hxfix_engine.ENGINE_EVENTS  # the context engine read the wire usage
    # callbacks requiring hermes' full keyword set of each hook all ran (a missing keyword would drop them)
    strict = {}
    for hook, kwargs in hxfix_strict.CALLS:
        strict.setdefault(hook, []).append(kwargs)
    assert {"on_session_start", "pre_llm_call", "pre_api_request", "post_api_request", "pre_tool_call",
            "post_tool_call", "transform_tool_result", "transform_llm_output", "post_llm_call", "on_session_end",
            "on_session_finalize"} <= set(strict)
    api = strict["post_api_request"][0]
    assert api["provider"] == "acme" and api["base_url"] == url and api["api_mode"] == "chat_completions"
    assert api["usage"]["input_tokens"] == 20 and api["usage"]["prompt_tokens"] == 20 and api["finish_reason"]
    assert len(strict["pre_tool_call"]) == len(calls)
