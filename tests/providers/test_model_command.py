"""``hermes model``: the model a conversation here uses, where it goes and with which key variable, the providers
there are; ``hermes model set`` saves another in config.yaml, checked first. The CLI as a subprocess, and a run
afterwards against the wire-protocol server through the real SDK, to see the saved model is the one used."""

from __future__ import annotations

import json

from plugins_providers.testserver import reply

NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENROUTER_API_KEY": "", "OPENAI_BASE_URL": "",
           "ANTHROPIC_BASE_URL": ""}


def shown(hermes, env=None) -> dict:
    out = hermes("model", "--json", env={**NO_KEYS, **(env or {})})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_new_data_folder_shows_the_missing_model_and_every_provider_with_its_key(hermes, hermes_home):
    (hermes_home / "config.yaml").write_text("providers:\n  box:\n    api: http://127.0.0.1:9/v1\n")
    found = shown(hermes, {"GROQ_API_KEY": "gsk-test"})
    assert found["current"]["model"] == "" and found["current"]["problem"].startswith("no model")
    table = {row["name"]: row for row in found["providers"]}
    assert table["groq"] == {**table["groq"], "key_env": "GROQ_API_KEY", "key_set": True,
                             "api_mode": "chat_completions"}
    assert not table["anthropic"]["key_set"] and table["ollama"]["local"]
    assert table["box"]["plugin"] == "custom-providers"  # hermes-agent's endpoint of config.yaml
    assert table["chat_completions"]["plugin"] == "openai-chat"
    text = hermes("model", env={**NO_KEYS, "GROQ_API_KEY": "gsk-test"})
    assert text.returncode == 0 and "gsk-test" not in text.stdout
    assert "problem   no model" in text.stdout and "  + groq " in text.stdout and "  ~ ollama " in text.stdout


def test_set_saves_a_checked_model_keeping_the_files_shape_and_a_run_uses_it(hermes, hermes_home, wire_server):
    config = hermes_home / "config.yaml"
    config.write_text("# my settings\nagent:\n  max_turns: 7  # enough\n")
    out = hermes("model", "set", "claude-sonnet-4-5", env=NO_KEYS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "model: claude-sonnet-4-5 (provider anthropic, anthropic_messages)"
    assert "no API key: set the environment variable ANTHROPIC_API_KEY" in out.stderr  # saved all the same
    assert config.read_text() == "# my settings\nagent:\n  max_turns: 7  # enough\nmodel: claude-sonnet-4-5\n"
    current = shown(hermes)["current"]
    assert (current["provider"], current["base_url"], current["key_env"], current["key_set"], current["images"]) == (
        "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", False, "native")  # a model known to see
    assert "images    in the message (agent.image_input_mode)" in hermes("model", env=NO_KEYS).stdout
    for bad, said in ((("--provider", "antropic"), "unknown provider 'antropic' (did you mean 'anthropic'?)"),
                      (("--base-url", "localhost:8000"), "has no scheme: use http://localhost:8000")):
        refused = hermes("model", "set", "other", *bad, env=NO_KEYS)
        assert refused.returncode == 2 and said in refused.stderr and "config.yaml was not changed" in refused.stderr
    assert "other" not in config.read_text()
    wire_server.push(reply("from the saved model"))
    out = hermes("model", "set", "local-model", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions",
                 env=NO_KEYS)
    assert out.returncode == 0 and "warning" not in out.stderr, out.stderr  # a local server needs no key
    assert shown(hermes)["current"]["images"] == "text"  # a model not known to see: kept for vision_analyze
    ran = hermes("run", "hi", env={**NO_KEYS, "OPENAI_API_KEY": "sk-test"})
    assert ran.returncode == 0 and ran.stdout.strip() == "from the saved model", ran.stderr
    assert wire_server.requests[-1].body["model"] == "local-model"


def test_set_writes_hermes_agents_model_block_as_such_and_says_when_the_provider_stays(hermes, hermes_home):
    config = hermes_home / "config.yaml"
    config.write_text("model:\n  default: x  # mine\n  provider: ollama\n")
    out = hermes("model", "set", "claude-sonnet-4-5", env=NO_KEYS)
    assert out.returncode == 0, out.stderr
    assert config.read_text() == "model:\n  default: claude-sonnet-4-5 # mine\n  provider: ollama\n"
    assert "the provider stays ollama (config.yaml); `--provider anthropic`" in out.stderr
    out = hermes("model", "set", "anthropic/claude-sonnet-4", "--provider", "openrouter", env=NO_KEYS)
    assert out.returncode == 0, out.stderr
    assert "provider: openrouter" in config.read_text() and "stays" not in out.stderr
    current = shown(hermes)["current"]
    assert (current["provider"], current["api_mode"], current["key_env"]) == (
        "openrouter", "chat_completions", "OPENROUTER_API_KEY")


def test_list_asks_the_providers_api_for_its_models_through_either_sdk(hermes, hermes_home, make_wire_server):
    server = make_wire_server(api_key="sk-listing")
    server.models = ["zeta-1", "alpha-2"]
    keys = {**NO_KEYS, "OPENAI_API_KEY": "sk-listing", "ANTHROPIC_API_KEY": "sk-listing"}
    out = hermes("model", "list", "--base-url", server.openai_url, env=keys)
    assert out.returncode == 0 and out.stdout == "alpha-2\nzeta-1\n", out.stderr
    out = hermes("model", "list", "--base-url", server.url, "--api-mode", "anthropic_messages", "--json", env=keys)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"provider": "", "base_url": server.url, "models": ["alpha-2", "zeta-1"]}
    [openai_sdk, anthropic_sdk] = server.requests
    assert (openai_sdk.method, openai_sdk.path, anthropic_sdk.path) == ("GET", "/v1/models", "/v1/models")
    assert "anthropic-version" in anthropic_sdk.headers and "anthropic-version" not in openai_sdk.headers
    # config's endpoint is the one asked when no other is named
    (hermes_home / "config.yaml").write_text(f"base_url: {server.openai_url}\napi_mode: chat_completions\n")
    assert hermes("model", "list", env=keys).stdout == "alpha-2\nzeta-1\n"
    wrong = hermes("model", "list", env={**keys, "OPENAI_API_KEY": "sk-wrong"})
    assert wrong.returncode == 1 and "sk-wrong" not in wrong.stderr and "Traceback" not in wrong.stderr
    assert wrong.stderr.startswith(f"hermes: error: cannot list the models of {server.openai_url}: ")
    missing = hermes("model", "list", "--provider", "groq", env=keys)
    assert missing.returncode == 2 and "no API key: set the environment variable GROQ_API_KEY" in missing.stderr
