"""hermes-agent's agent.service_tier and prompt_caching.cache_ttl through the real SDKs over the wire: OpenAI's own API
gets the tier in its words, another endpoint is not asked for it (said once), and Claude's cache markers last an hour
when config says 1h."""

from __future__ import annotations

from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def test_openais_own_api_gets_the_tier_and_another_endpoint_does_not(hermes, wire_server, cli_env,
                                                                     hermes_home):  # noqa: F811
    """The wire server stands in for api.openai.com behind a proxy (HTTP_PROXY), so the request goes to that host."""
    proxied = {**cli_env, **KEYS, "HTTP_PROXY": wire_server.url, "http_proxy": wire_server.url, "NO_PROXY": "",
               "no_proxy": ""}
    config = hermes_home / "config.yaml"
    for api_mode, setting, sent in (("chat_completions", "fast", "priority"), ("codex_responses", "flex", "flex"),
                                    ("chat_completions", "on", "priority"), ("chat_completions", "normal", None)):
        config.write_text(f"base_url: http://api.openai.com/v1\nagent:\n  service_tier: {setting}\n")
        wire_server.push(reply("ok"))
        out = hermes("run", "--api-mode", api_mode, "-m", "gpt-5.2", "hi", env=proxied)
        assert out.returncode == 0 and "service_tier" not in out.stderr, out.stderr
        request = wire_server.requests[-1]
        assert request.headers["host"] == "api.openai.com" and request.body.get("service_tier") == sent, setting

    config.write_text("agent:\n  service_tier: fast\n")  # a compatible server may refuse the field: not sent
    wire_server.push(reply("ok"), reply("ok"))
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "gpt-5.2",
                 "hi", env={**cli_env, **KEYS})
    assert out.returncode == 0 and "service_tier" not in wire_server.requests[-1].body
    assert out.stderr == "hermes: WARNING: agent.service_tier is sent to OpenAI's own API, and to Claude Opus 4.6 on " \
                         "Anthropic's as its fast mode: 127.0.0.1 (gpt-5.2) is not asked for it\n"
    config.write_text("agent:\n  service_tier: turbo\n")
    wrong = hermes("run", "--base-url", wire_server.openai_url, "-m", "gpt-5.2", "hi", env={**cli_env, **KEYS})
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "agent.service_tier: expected one of" in \
        wrong.stderr


def test_claude_opus_4_6_gets_its_fast_mode_on_anthropics_api_and_another_claude_nothing(hermes, wire_server, cli_env,
                                                                                         hermes_home):  # noqa: F811
    """agent.service_tier: fast on Anthropic's own API (the wire server behind HTTP_PROXY) is Claude's fast mode:
    `speed: fast` with its beta header, for Opus 4.6 alone; another Claude answers 400 to the field, so gets none."""
    proxied = {**cli_env, **KEYS, "HTTP_PROXY": wire_server.url, "http_proxy": wire_server.url, "NO_PROXY": "",
               "no_proxy": ""}
    (hermes_home / "config.yaml").write_text("base_url: http://api.anthropic.com\nagent:\n  service_tier: fast\n"
                                             "provider_options:\n  extra_headers: {anthropic-beta: mine-2026}\n")
    for model, fast in (("claude-opus-4-6", True), ("claude-opus-4-7", False)):
        wire_server.push(reply("ok"))
        out = hermes("run", "--api-mode", "anthropic_messages", "-m", model, "hi", env=proxied)
        assert out.returncode == 0, out.stderr
        request = wire_server.requests[-1]
        assert request.headers["host"] == "api.anthropic.com"
        assert request.body.get("speed") == ("fast" if fast else None), model
        betas = request.headers.get("anthropic-beta", "")
        assert ("fast-mode-2026-02-01" in betas) is fast and "mine-2026" in betas  # the user's header kept
        assert ("service_tier" in out.stderr) is not fast, out.stderr


def test_claudes_cache_markers_last_an_hour_when_config_says_1h(hermes, wire_server, cli_env,
                                                                hermes_home):  # noqa: F811
    config = hermes_home / "config.yaml"
    for ttl, marker in (("1h", {"type": "ephemeral", "ttl": "1h"}), ("5m", {"type": "ephemeral"})):
        config.write_text(f"prompt_caching:\n  cache_ttl: {ttl}\nprovider_options:\n  prompt_cache: true\n")
        wire_server.push(reply("ok"))
        out = hermes("run", "--base-url", wire_server.url, "--api-mode", "anthropic_messages", "-m",
                     "claude-sonnet-4-5", "hi", env={**cli_env, **KEYS})
        assert out.returncode == 0, out.stderr
        body = wire_server.requests[-1].body
        assert body["system"][-1]["cache_control"] == marker
        assert body["messages"][-1]["content"][-1]["cache_control"] == marker
    config.write_text("prompt_caching:\n  cache_ttl: 2h\n")
    wrong = hermes("run", "--base-url", wire_server.url, "-m", "claude-sonnet-4-5", "hi", env={**cli_env, **KEYS})
    assert wrong.returncode == 2 and "prompt_caching.cache_ttl: expected one of 5m, 1h" in wrong.stderr


def test_openrouter_is_asked_for_its_response_cache(hermes, wire_server, cli_env, hermes_home):  # noqa: F811
    """hermes-agent's openrouter.response_cache (on) and _ttl: a call to OpenRouter (the wire server stands in, its
    provider named) carries the cache headers, beside the user's own; off, or HERMES_OPENROUTER_CACHE=0, none; the
    environment's TTL wins over config's; another provider is never asked."""
    env = {**cli_env, "OPENROUTER_API_KEY": "sk-or-test", "OPENAI_API_KEY": "sk-test"}
    config = hermes_home / "config.yaml"
    model = ("--base-url", wire_server.openai_url, "-m", "anthropic/claude-sonnet-4.6")
    cases = (("provider_options:\n  extra_headers: {X-Mine: a}\n", {}, "openrouter", ("true", "300")),
             ("openrouter:\n  response_cache_ttl: 60\n", {"HERMES_OPENROUTER_CACHE_TTL": "90"}, "openrouter",
              ("true", "90")),
             ("openrouter:\n  response_cache: false\n", {}, "openrouter", (None, None)),
             ("", {"HERMES_OPENROUTER_CACHE": "0"}, "openrouter", (None, None)),
             ("", {}, "openai", (None, None)))
    for text, more, provider, sent in cases:
        config.write_text(text)
        wire_server.push(reply("ok"))
        out = hermes("run", "--provider", provider, *model, "hi", env={**env, **more})
        assert out.returncode == 0, out.stderr
        headers = wire_server.requests[-1].headers
        assert (headers.get("x-openrouter-cache"), headers.get("x-openrouter-cache-ttl")) == sent, (text, more)
    assert wire_server.requests[0].headers["x-mine"] == "a"
