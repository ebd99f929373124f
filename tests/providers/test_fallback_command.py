"""``hermes fallback`` (hermes-agent's): the chain listed, added to (checked as ``model set`` checks), removed from and
cleared, in config.yaml with its comments kept; then a run whose model is rate limited answers through the entry
added (real openai SDK against two wire-protocol servers). hermes-agent's older ``fallback_model`` and a key written
in an entry work too."""

from __future__ import annotations

import json

import yaml

from plugins_providers.testserver import error, reply
from tests.providers.test_model_command import NO_KEYS


def run(hermes, *args, env=None):
    return hermes(*args, env={**NO_KEYS, **(env or {})})


def test_add_list_remove_and_clear(hermes, hermes_home):
    config = hermes_home / "config.yaml"
    config.write_text("# mine\nmodel: gpt-4o-mini\n")
    assert "no fallback providers" in run(hermes, "fallback").stdout
    out = run(hermes, "fallback", "add", "claude-sonnet-4-5", env={"ANTHROPIC_API_KEY": "sk-ant"})
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout == "fallback 1: claude-sonnet-4-5 (anthropic, anthropic_messages, https://api.anthropic.com); " \
                         "key ANTHROPIC_API_KEY set\n"
    out = run(hermes, "fallback", "add", "llama3", "--provider", "ollama")
    assert out.returncode == 0 and out.stderr == "" and "key" not in out.stdout  # a local server: no key to set
    out = run(hermes, "fallback", "add", "qwen", "--provider", "groq")
    assert out.stderr == "hermes: warning: no API key: set the environment variable GROQ_API_KEY (`hermes config " \
                         "set GROQ_API_KEY ...` keeps it in the .env beside config.yaml; or name another one with " \
                         "api_key_env in config)\n"
    assert config.read_text().startswith("# mine\n")
    assert yaml.safe_load(config.read_text())["fallback_providers"] == [{"model": "claude-sonnet-4-5"}, {
        "model": "llama3", "provider": "ollama"}, {"model": "qwen", "provider": "groq"}]

    for args, said in ((("gpt-4o-mini",), "hermes: error: gpt-4o-mini is the model itself: a fallback must be "
                                         "another model or provider\n"),
                       (("llama3", "--provider", "ollama"), "hermes: error: llama3 is in the chain already (entry 2); "
                                                            "config.yaml was not changed\n"),
                       (("  ",), "hermes: error: a fallback needs a model: hermes fallback add MODEL [--provider "
                                 "NAME]\n"),
                       (("x", "--provider", "openroutr"), None)):
        out = run(hermes, "fallback", "add", *args)
        assert out.returncode == 2 and (said is None or out.stderr == said), out.stderr
    assert "unknown provider 'openroutr' (did you mean 'openrouter'?)" in out.stderr

    listed = json.loads(run(hermes, "fallback", "list", "--json").stdout)
    assert [(r["model"], r["provider"], r["key_set"]) for r in listed] == [
        ("claude-sonnet-4-5", "anthropic", False), ("llama3", "ollama", False), ("qwen", "groq", False)]
    text = run(hermes, "fallback", "ls").stdout
    assert text.startswith("1. claude-sonnet-4-5 (anthropic") and "\n3. qwen (groq" in text

    assert run(hermes, "fallback", "rm", "llama3").stdout == "removed llama3; 2 left\n"
    assert run(hermes, "fallback", "remove", "2").stdout == "removed qwen; 1 left\n"
    out = run(hermes, "fallback", "remove", "7")
    assert out.returncode == 2 and out.stderr == "hermes: error: '7' is no entry; the chain: 1. claude-sonnet-4-5\n"
    out = run(hermes, "fallback", "clear")
    assert out.returncode == 1 and out.stderr == "hermes: error: the fallback chain was not emptied: no answer came " \
                                                 "(end of input); pass --yes\n"
    assert run(hermes, "fallback", "clear", "--yes").returncode == 0
    assert yaml.safe_load(config.read_text()) == {"model": "gpt-4o-mini"}


def test_a_rate_limited_model_answers_through_the_entry_added(hermes, hermes_home, make_wire_server):
    primary, spare = make_wire_server(), make_wire_server()
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({
        "model": "big-1", "base_url": primary.openai_url, "api_mode": "chat_completions"}))
    out = run(hermes, "fallback", "add", "spare-1", "--base-url", spare.openai_url, "--api-mode", "chat_completions",
              "--api-key-env", "SPARE_KEY", env={"SPARE_KEY": "sk-spare"})
    assert out.returncode == 0 and out.stderr == "", out.stderr
    primary.push(error(429))
    spare.push(reply("from the spare"))
    out = run(hermes, "run", "hi", env={"OPENAI_API_KEY": "sk-main", "SPARE_KEY": "sk-spare"})
    assert out.returncode == 0 and out.stdout == "from the spare\n", out.stderr
    assert [r.headers["authorization"] for r in spare.requests] == ["Bearer sk-spare"]


def test_hermes_agents_older_fallback_model_and_a_written_key(hermes, hermes_home, make_wire_server):
    primary, spare = make_wire_server(), make_wire_server()
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({
        "model": "big-1", "base_url": primary.openai_url, "api_mode": "chat_completions",
        "fallback_model": {"model": "spare-1", "base_url": spare.openai_url, "api_mode": "chat_completions",
                           "api_key": "sk-written"}}))
    primary.push(error(429))
    spare.push(reply("from the spare"))
    out = run(hermes, "run", "hi", env={"OPENAI_API_KEY": "sk-main"})
    assert out.returncode == 0 and out.stdout == "from the spare\n", out.stderr
    assert [r.headers["authorization"] for r in spare.requests] == ["Bearer sk-written"]
    assert "fallback_providers[0].api_key: an API key written in config.yaml; it is used, but belongs in the " \
           "environment" in out.stderr
    assert run(hermes, "config", "check").returncode == 0

    assert run(hermes, "fallback", "add", "other-1", "--base-url", spare.openai_url).returncode == 0
    saved = yaml.safe_load((hermes_home / "config.yaml").read_text())  # the older key moved into the list
    assert "fallback_model" not in saved and [e["model"] for e in saved["fallback_providers"]] == ["spare-1", "other-1"]
    assert saved["fallback_providers"][0]["api_key"] == "sk-written"  # kept as written: the user moves it
