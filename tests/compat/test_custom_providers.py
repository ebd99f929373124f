"""hermes-agent's own endpoints in config.yaml (``providers:``, ``custom_providers:``): a config.yaml of hermes-agent's
naming one stopped every run with "unknown provider". `hermes run` as a subprocess against the wire-protocol server,
through the real SDKs."""

from __future__ import annotations

from plugins_providers.testserver import reply


def test_a_named_endpoint_of_providers_serves_the_run(hermes, hermes_home, make_wire_server):
    server = make_wire_server(api_key="sk-local")
    server.push(reply("from the local box"))
    (hermes_home / "config.yaml").write_text(
        "model:\n  provider: local\n"
        f"providers:\n  local:\n    name: Local Box\n    api: {server.openai_url}\n    key_env: LOCAL_BOX_KEY\n"
        "    default_model: llama3\n    extra_headers: {X-Team: agents, X-Tier: 2}\n    extra_body: {keep_alive: 5m}\n"
        "  off:\n    api: http://127.0.0.1:9/v1\n    enabled: false\n"
        "  openrouter:\n    api: http://127.0.0.1:9/v1\n")
    out = hermes("run", "hi", env={"LOCAL_BOX_KEY": "sk-local"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "from the local box" and "unknown" not in out.stderr
    assert "providers.openrouter: 'openrouter' is a built-in provider's name, and the built-in one is used" \
        in out.stderr
    [sent] = server.requests
    assert sent.path == "/v1/chat/completions" and sent.body["model"] == "llama3"  # its default model
    assert (sent.headers.get("x-team"), sent.headers.get("x-tier"), sent.body["keep_alive"]) == ("agents", "2", "5m")
    # named by its display name, or as custom:<name>, with another model
    for name in ("local-box", "custom:local"):
        server.push(reply("again"))
        again = hermes("run", "--provider", name, "-m", "other", "hi", env={"LOCAL_BOX_KEY": "sk-local"})
        assert again.returncode == 0 and again.stdout.strip() == "again", again.stderr
        assert server.requests[-1].body["model"] == "other"
    disabled = hermes("run", "--provider", "off", "hi")
    assert disabled.returncode != 0 and "unknown provider 'off'" in disabled.stderr
    assert "custom-providers" in hermes("plugins", "list").stdout


def test_the_older_list_an_anthropic_endpoint_and_a_key_in_the_file(hermes, hermes_home, make_wire_server):
    server = make_wire_server(api_key="sk-inline")
    server.push(reply("messages API"))
    (hermes_home / "config.yaml").write_text(
        "model: {default: claude-x, provider: 'custom:my-box'}\n"
        f"custom_providers:\n  - name: My Box\n    base_url: {server.url}\n    apiMode: anthropic_messages\n"
        "    api_key: sk-inline\n  - name: broken\n    base_url: not-a-url\n")
    out = hermes("run", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "messages API" and server.requests[0].path == "/v1/messages"
    assert "an API key written in config.yaml" in out.stderr and "sk-inline" not in out.stderr
    assert "custom_providers[1]: no base URL" in out.stderr
