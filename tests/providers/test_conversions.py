"""Edge conversions that need no server."""

from kernel.types import ProviderConfig
from plugins_providers import anthropic_messages as am
from plugins_providers import defaults
from plugins_providers import openai_responses as orr


def test_anthropic_merges_and_caches():
    msgs = [
        {"role": "system", "content": "sys A"},
        {"role": "user", "content": "one"},
        {"role": "user", "content": [{"type": "text", "text": "two"}]},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{bad json"}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "r1"},
        {"role": "user", "content": "three"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "four"},
    ]
    system, out = am.convert_messages(msgs)
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant", "user"]
    assert [b["text"] for b in out[0]["content"]] == ["one", "two"]
    assert out[1]["content"][0]["input"] == {"_raw_arguments": "{bad json"}  # kept, not lost
    assert [b["type"] for b in out[2]["content"]] == ["tool_result", "text"]
    am.add_cache_markers(system, out)
    assert system[-1]["cache_control"] == {"type": "ephemeral"}
    marked = [i for i, m in enumerate(out) if any("cache_control" in b for b in m["content"])]
    assert marked == [2, 3, 4]


def test_anthropic_history_starts_with_user():
    _, out = am.convert_messages([{"role": "system", "content": "s"}, {"role": "assistant", "content": "summary"}, {"role": "user", "content": "go"}])
    assert [m["role"] for m in out] == ["user", "assistant", "user"]


def test_anthropic_caching_only_for_anthropic(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    direct = am.factory(ProviderConfig(model="claude-x", provider="anthropic"))
    local = am.factory(ProviderConfig(model="claude-x", base_url="http://127.0.0.1:1"))
    forced = am.factory(ProviderConfig(model="claude-x", base_url="http://127.0.0.1:1", extra=(("prompt_cache", True),)))
    assert (direct.caching(), local.caching(), forced.caching()) == (True, False, True)


def test_responses_include_encrypted_reasoning_for_reasoning_models(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    from kernel.types import ModelRequest

    req = ModelRequest(model="", messages=[{"role": "user", "content": "hi"}])
    assert "include" in orr.factory(ProviderConfig(model="gpt-5-mini")).kwargs(req)
    assert "include" not in orr.factory(ProviderConfig(model="gpt-4o")).kwargs(req)


def test_targets_from_model_strings(monkeypatch):
    t = defaults.target(ProviderConfig(model="anthropic/claude-sonnet-4"), "anthropic_messages")
    assert (t.provider, t.model, t.env_var, t.base_url) == ("anthropic", "claude-sonnet-4", "ANTHROPIC_API_KEY", "https://api.anthropic.com")
    t = defaults.target(ProviderConfig(model="openrouter/anthropic/claude-sonnet-4"), "chat_completions")
    assert (t.provider, t.model, t.env_var) == ("openrouter", "anthropic/claude-sonnet-4", "OPENROUTER_API_KEY")
    assert t.base_url == "https://openrouter.ai/api/v1"
    t = defaults.target(ProviderConfig(model="anthropic/claude-sonnet-4", provider="openrouter"), "chat_completions")
    assert (t.model, t.env_var) == ("anthropic/claude-sonnet-4", "OPENROUTER_API_KEY")
    t = defaults.target(ProviderConfig(model="anthropic/claude-x", base_url="https://openrouter.ai/api/v1"), "chat_completions")
    assert t.model == "anthropic/claude-x"  # the endpoint's own model id
    t = defaults.target(ProviderConfig(model="openrouter/auto"), "chat_completions")
    assert t.model == "openrouter/auto" and t.provider == "openrouter"
    t = defaults.target(ProviderConfig(model="llama3", base_url="http://localhost:11434/v1"), "chat_completions")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert t.local and t.read_key() == defaults.LOCAL_PLACEHOLDER_KEY
    t = defaults.target(ProviderConfig(model="m", api_key_env="X_KEY"), "chat_completions")
    assert t.env_var == "X_KEY"


def test_a_provider_is_checked_when_built_and_imports_its_sdk_at_the_first_call():
    """`hermes chat` builds its provider before the prompt (a missing key is one line then); the SDK import
    (openai: about half a second) waits for the first call, or for the chat's warm-up while the user types."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    probe = """
import sys
from kernel.types import ProviderConfig, ProviderError
from plugins_providers import anthropic_messages, openai_chat, openai_responses
providers = [(sdk, module.factory(ProviderConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key_env="PROBE_KEY")))
             for module, sdk in ((openai_chat, "openai"), (openai_responses, "openai"), (anthropic_messages, "anthropic"))]
assert "openai" not in sys.modules and "anthropic" not in sys.modules
for sdk, provider in providers:
    assert provider.client is provider.client and sdk in sys.modules
try:
    openai_chat.factory(ProviderConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key_env="NO_SUCH_KEY"))
except ProviderError as err:
    print(err.reason, err.message)
"""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PROBE_KEY": "k"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("config no API key: set the environment variable NO_SUCH_KEY"), out.stdout


def test_an_sdk_module_without_a_spec_counts_as_installed(monkeypatch):
    """find_spec raises ValueError for a module in sys.modules whose __spec__ is None (a stand-in)."""
    import sys
    import types

    from plugins_providers import base

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setitem(sys.modules, "anthropic", types.ModuleType("anthropic"))
    monkeypatch.setattr(base, "_SHARED", {})
    assert am.factory(ProviderConfig(model="claude-x")).label.endswith("claude-x")  # built, no error


def test_missing_sdk_is_a_config_error(monkeypatch):
    import sys

    from kernel.types import ProviderError

    from plugins_providers import base

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic -> ImportError
    monkeypatch.setattr(base, "_SHARED", {})  # no client an earlier test built for the same settings
    try:
        am.factory(ProviderConfig(model="claude-x"))
    except ProviderError as err:
        assert err.reason == "config" and "pip install 'anthropic>=2.10,<3'" in str(err)
    else:
        raise AssertionError("expected a config error")
