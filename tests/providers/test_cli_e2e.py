"""``hermes run`` as a subprocess against the wire server."""

import json
import os
from importlib.metadata import entry_points

import pytest

from plugins_providers.testserver import error, reply
from tests.conftest import ROOT
from tests.kernel.fakedist import make_dist

OURS = {
    "openai-chat": "plugins_providers.openai_chat",
    "openai-responses": "plugins_providers.openai_responses",
    "anthropic-messages": "plugins_providers.anthropic_messages",
    "provider-resolve": "plugins_providers.resolve",
    "fallback": "plugins.fallback",
}


@pytest.fixture
def cli_env(tmp_path):
    """Entry points for the provider plugins: the installed ones if present,
    else a fake dist-info on PYTHONPATH (how a pip-installed plugin is found)."""
    installed = {ep.value for ep in entry_points(group="hermes.plugins")}
    missing = {name: target for name, target in OURS.items() if target not in installed}
    if not missing:
        return {}
    root = tmp_path / "site"
    root.mkdir()
    make_dist(root, "hermes-providers-under-test", "0.0.1", {})
    meta = next(root.glob("*.dist-info"))
    (meta / "entry_points.txt").write_text("[hermes.plugins]\n" + "".join(f"{n} = {t}\n" for n, t in missing.items()))
    return {"PYTHONPATH": os.pathsep.join([str(ROOT), str(root)])}


def test_hermes_run_through_chat_completions(hermes, wire_server, cli_env):
    wire_server.push(reply("Hello from the wire."))
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "test", "say hi", env=cli_env)
    assert out.returncode == 0, out.stderr
    assert "Hello from the wire." in out.stdout
    (req,) = wire_server.requests
    assert req.path == "/v1/chat/completions" and req.body["model"] == "test" and req.stream
    assert req.body["messages"][-1] == {"role": "user", "content": "say hi"}
    assert req.headers["x-stainless-retry-count"] == "0"


def test_hermes_run_json_with_fallback(hermes, wire_server, make_wire_server, cli_env, hermes_home):
    fb = make_wire_server()
    (hermes_home / "config.yaml").write_text(json.dumps({
        "fallback_providers": [{"model": "claude-test", "base_url": fb.url, "api_mode": "anthropic_messages"}],
    }))
    wire_server.push(error(429, retry_after=30))
    fb.push(reply("fallback answered"))
    out = hermes("run", "--json", "--base-url", wire_server.openai_url, "--api-mode", "codex_responses", "-m", "gpt-test", "hi", env=cli_env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["final_response"] == "fallback answered" and result["exit_reason"] == "completed"
    assert len(wire_server.requests) == 1 and fb.requests[0].body["model"] == "claude-test"


def test_hermes_run_missing_key_is_one_clear_error(hermes, cli_env):
    out = hermes("run", "--base-url", "https://api.example.invalid/v1", "--api-mode", "chat_completions", "-m", "x", "hi", env=cli_env)
    assert out.returncode != 0
    assert "OPENAI_API_KEY" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("api_mode", ["chat_completions", "codex_responses", "anthropic_messages"])
def test_an_answer_cut_at_the_output_limit_is_continued_in_one_answer(hermes, wire_server, cli_env, hermes_home,
                                                                        api_mode):
    """A model that reached its max_tokens (finish_reason "length", status "incomplete", stop_reason "max_tokens")
    ended the turn with half an answer and exit 0, unsaid. The loop asks for the rest; the screen shows one answer."""
    from kernel.messages import GO_ON

    url = wire_server.url if api_mode == "anthropic_messages" else wire_server.openai_url
    wire_server.push(reply("The robots were", finish_reason="length"), reply(" built in a day."))
    key = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
    out = hermes("run", "--base-url", url, "--api-mode", api_mode, "-m", "m", "a story", env={**cli_env, **key})
    assert out.returncode == 0 and out.stdout == "The robots were built in a day.\n", (out.stdout, out.stderr)
    assert "finally given" not in out.stderr
    first, second = wire_server.requests
    sent = second.body.get("messages") or second.body.get("input")
    said = [m.get("content") for m in sent[-2:]]
    assert json.dumps(said[0]).count("The robots were") == 1 and GO_ON in json.dumps(said[1]), said
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    shown = hermes("sessions", "show", "--json", session)
    stored = [m for m in json.loads(shown.stdout)["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in stored] == ["The robots were built in a day."]


@pytest.mark.parametrize("api_mode", ["chat_completions", "codex_responses", "anthropic_messages"])
def test_provider_options_reach_the_request_and_a_typo_or_wrong_type_is_said(hermes, wire_server, cli_env,
                                                                             hermes_home, api_mode):
    """`provider_options: {temperature: 0.2}` (config.yaml's documented way) never reached a request: the
    providers read sampling settings only from a request's `extra`, which nothing filled."""
    url = wire_server.url if api_mode == "anthropic_messages" else wire_server.openai_url
    run = ("run", "--base-url", url, "--api-mode", api_mode, "-m", "m", "hi")
    env = {**cli_env, "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
    config = hermes_home / "config.yaml"
    config.write_text("provider_options:\n  temperature: 0.2\n  top_p: 0.5\n  tempreature: 1\n  max_tokens: 300\n"
                      "  extra_headers: {X-Title: hermes-test, X-Retries: 1, X-None: null}\n"
                      "  extra_body: {route: {order: [a, b]}}\n")
    wire_server.push(reply("ok"))
    out = hermes(*run, env=env)
    assert out.returncode == 0 and out.stdout == "ok\n", out.stderr
    body = wire_server.requests[0].body
    assert (body["temperature"], body["top_p"]) == (0.2, 0.5), body  # the Anthropic SDK sends them in extra_body
    # the OpenAI providers ignored a max_tokens here ("not one the chat_completions provider reads")
    assert body[{"codex_responses": "max_output_tokens"}.get(api_mode, "max_tokens")] == 300, body
    # mappings were dropped unsaid (a ProviderConfig had to be hashable): OpenRouter's headers, a router's body
    headers = {k.lower(): v for k, v in wire_server.requests[0].headers.items()}
    assert (headers["x-title"], headers["x-retries"], "x-none" in headers) == ("hermes-test", "1", False), headers
    assert body["route"] == {"order": ["a", "b"]}, body
    warned = [line for line in out.stderr.splitlines() if "tempreature" in line]
    assert len(warned) == 1 and f"is not one the {api_mode} provider reads (did you mean 'temperature'?)" in warned[0]
    config.write_text("provider_options:\n  temperature: hot\n")
    out = hermes(*run, env=env)
    assert out.returncode == 1 and len(wire_server.requests) == 1, out.stderr
    assert out.stderr.strip().endswith("the provider option 'temperature' must be a number, got 'hot'"), out.stderr
    config.write_text("provider_options:\n  extra_headers: Bearer-sk-secret\n")
    out = hermes(*run, env=env)
    assert out.returncode == 1 and len(wire_server.requests) == 1, out.stderr
    assert out.stderr.strip().endswith("'extra_headers' must be a mapping (name: value), got a str"), out.stderr
    assert "sk-secret" not in out.stderr


def test_a_usage_file_is_written_when_the_turn_ends_and_when_it_fails(hermes, wire_server, cli_env, tmp_path):
    """hermes-agent's `hermes -z PROMPT --usage-file PATH`: the report a pipeline accounts for its spend with."""
    wire_server.push(reply("Counted.", usage={"input": 12, "output": 3}))
    report = tmp_path / "reports" / "usage.json"
    out = hermes("-z", "count it", "--usage-file", report, "-m", "gpt-test", "--base-url", wire_server.openai_url,
                 "--api-mode", "chat_completions", env=cli_env)
    assert out.returncode == 0 and out.stdout == "Counted.\n", out.stderr
    written = json.loads(report.read_text())
    assert {k: written[k] for k in ("input_tokens", "output_tokens", "total_tokens", "api_calls", "model",
                                    "completed", "failed", "estimated_cost_usd")} == {
        "input_tokens": 12, "output_tokens": 3, "total_tokens": 15, "api_calls": 1, "model": "gpt-test",
        "completed": True, "failed": False, "estimated_cost_usd": None}
    assert written["session_id"] and "failure" not in written
    wire_server.push(error(400, message="This model's context is too long."))
    failed = hermes("run", "too much", "--usage-file", report, "-m", "gpt-test", "--base-url",
                    wire_server.openai_url, "--api-mode", "chat_completions", env=cli_env)
    written = json.loads(report.read_text())
    assert failed.returncode == 1 and written["failed"] and not written["completed"] and written["api_calls"] == 1
    assert "context is too long" in written["failure"]
    unbuilt = hermes("run", "hi", "--usage-file", report, "--api-mode", "chat_completions", env={**cli_env,
                                                                                              "OPENAI_API_KEY": ""})
    written = json.loads(report.read_text())
    assert unbuilt.returncode != 0 and written["failed"] and written["api_calls"] == 0 and written["failure"]
