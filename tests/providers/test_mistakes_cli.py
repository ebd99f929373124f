"""Mistakes caught before the first call: each is one line saying what to do,
exit 1, and no request reaches the server."""

from __future__ import annotations

import json

import pytest
import yaml

from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)


@pytest.mark.parametrize("args, message", [
    (("--provider", "opena1", "-m", "gpt-test"),
     "unknown provider 'opena1' (did you mean 'openai'?); known: anthropic, deepinfra,"),
    (("--api-mode", "chat_completions", "--base-url", "127.0.0.1:8000/v1", "-m", "gpt-test"),
     "the base URL '127.0.0.1:8000/v1' has no scheme: use http://127.0.0.1:8000/v1 (or https://)"),
    # each was a call that failed after the retries (or an InvalidURL traceback's last line), naming no setting
    (("--api-mode", "chat_completions", "--base-url", "ftp://127.0.0.1/v1", "-m", "m"),
     "the base URL 'ftp://127.0.0.1/v1' must start with http:// or https://"),
    (("--api-mode", "anthropic_messages", "--base-url", "http://[::1/v1", "-m", "m"),
     "the base URL 'http://[::1/v1' is not a URL (Invalid IPv6 URL)"),
    (("--api-mode", "chat_completions", "--base-url", "http://127.0.0.1:80000/v1", "-m", "m"),
     "the base URL 'http://127.0.0.1:80000/v1' is not a URL (Port out of range 0-65535)"),
    (("--api-mode", "codex_responses", "--base-url", "http://my host/v1", "-m", "m"),
     "the base URL 'http://my host/v1' has a space in it"),
    (("--api-mode", "chat_completions", "--base-url", "{url}"),
     "no model: pass -m MODEL, or choose one with `hermes setup` (`hermes model set MODEL` in a script)"),
    (("-m", "claude-sonnet-4"), "no API key: set the environment variable ANTHROPIC_API_KEY"),  # its family's
])
def test_a_mistake_is_one_line_before_any_request(hermes, wire_server, cli_env, args, message):  # noqa: F811
    args = [a.replace("{url}", wire_server.openai_url) for a in args]
    for json_flag in ((), ("--json",)):
        out = hermes("run", *json_flag, *args, "hi", env={**cli_env, "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": ""})
        assert out.returncode == 1, out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"hermes: error: {message}"), out.stderr
        assert "the model call failed" not in out.stderr and out.stdout == ""
    assert wire_server.requests == []


def test_a_key_pasted_with_a_character_no_key_has_is_named_before_any_request(hermes, wire_server, cli_env):  # noqa: F811
    """A key copied with an ellipsis or a line break failed in the SDK as "bad_request: UnicodeEncodeError ... (header
    'Authorization')", or not at all until the server refused it, naming no variable."""
    for key, said in (("sk-abc\u2026", "'\u2026' at position 7"), ("sk-ab\ncd", "'\\n' at position 6")):
        out = hermes("run", "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "m", "hi",
                     env={**cli_env, "OPENAI_API_KEY": key})
        assert out.returncode == 1 and out.stderr.strip() == \
            f"hermes: error: the key in OPENAI_API_KEY has a character no API key has ({said}): set it again"
        assert key not in out.stderr
    assert wire_server.requests == []


def test_a_base_url_from_the_sdks_variable_is_checked_as_the_flag_is(hermes, cli_env):  # noqa: F811
    """OPENAI_BASE_URL="not a url" (which the SDK reads) went unchecked: three retries with backoff of an
    UnsupportedProtocol 'transport' failure, 7 s, before an error that did not name the variable."""
    for var, model, url, said in (("OPENAI_BASE_URL", "gpt-test", "not a url", "has no scheme: use http://not a url (or https://)"),
                                  ("ANTHROPIC_BASE_URL", "claude-test", "ftp://x", "must start with http:// or https://")):
        out = hermes("run", "-m", model, "hi", env={**cli_env, "OPENAI_API_KEY": "sk", "ANTHROPIC_API_KEY": "sk", var: url})
        assert out.returncode == 1 and out.stderr.strip() == f"hermes: error: the base URL '{url}' (from {var}) {said}"


@pytest.mark.parametrize("options, message", [
    ("timeout: abc", "the provider option 'timeout' must be a number of seconds above 0, got 'abc'"),
    ("idle_timeout: -3", "the provider option 'idle_timeout' must be a number of seconds above 0, got -3"),
])
def test_a_provider_option_that_is_not_seconds_is_one_line_naming_it(hermes, wire_server, cli_env, hermes_home,  # noqa: F811
                                                                      options, message):
    """It was `ValueError: could not convert string to float: 'abc'`, naming nothing."""
    (hermes_home / "config.yaml").write_text(f"provider_options:\n  {options}\n")
    for mode, url in (("chat_completions", wire_server.openai_url), ("anthropic_messages", wire_server.url)):
        out = hermes("run", "--api-mode", mode, "--base-url", url, "-m", "m", "hi",
                     env={**cli_env, "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"})
        assert out.returncode == 1 and out.stderr.strip() == f"hermes: error: {message}", out.stderr
    assert wire_server.requests == []


def test_an_unreachable_url_is_named_and_api_calls_count_calls_made(hermes, cli_env, hermes_home):  # noqa: F811
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (hermes_home / "config.yaml").write_text("agent:\n  api_max_retries: 0\n")
    url = f"http://127.0.0.1:{port}/v1"
    out = hermes("run", "--json", "--api-mode", "chat_completions", "--base-url", url, "-m", "m", "hi", env=cli_env)
    result = json.loads(out.stdout)
    assert out.returncode == 1 and result["exit_reason"] == "error"
    assert "connection failed" in result["error"] and url in result["error"]
    assert result["error"].endswith(": nothing listens there; is the local server running?")  # refused on loopback
    assert result["api_calls"] >= 1


def test_a_local_server_that_is_not_running_fails_at_once_and_moves_to_a_fallback(hermes, wire_server, cli_env,  # noqa: F811
                                                                                 hermes_home):
    """A refused connection on this machine was retried three times with backoff: 7 s and three "retrying" lines
    before the error, for a server that is simply not started (Ollama, llama.cpp). It is certain until the user
    acts, so it is said at once, or the fallback provider answers at once."""
    import time

    from plugins_providers.testserver import reply
    from tests.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    model = ("--api-mode", "chat_completions", "--base-url", url, "-m", "m")
    started = time.monotonic()
    out = hermes("run", *model, "hi", env=cli_env)
    assert time.monotonic() - started < 5, "retried with backoff"
    assert out.returncode == 1 and "retrying" not in out.stderr, out.stderr
    assert out.stderr.strip().endswith(f"({url}): nothing listens there; is the local server running?"), out.stderr
    (hermes_home / "config.yaml").write_text(
        f"fallback_providers:\n  - {{model: fb, api_mode: chat_completions, base_url: '{wire_server.openai_url}'}}\n")
    wire_server.push(reply("from the fallback"))
    started = time.monotonic()
    out = hermes("run", *model, "hi", env={**cli_env, "OPENAI_API_KEY": "sk-test"})
    assert time.monotonic() - started < 5 and "retrying" not in out.stderr, out.stderr
    assert out.returncode == 0 and out.stdout.strip() == "from the fallback", out.stderr
    assert len(wire_server.requests) == 1
    # through a proxy (HTTP_PROXY) that refuses, "nothing listens there" blamed the server: the proxy is named
    (hermes_home / "config.yaml").write_text("agent:\n  api_max_retries: 0\n")
    proxy = f"http://127.0.0.1:{free_port()}"
    out = hermes("run", "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "m", "hi",
                 env={**cli_env, "OPENAI_API_KEY": "sk-test", "HTTP_PROXY": proxy, "NO_PROXY": ""})
    assert out.returncode == 1 and out.stderr.strip().endswith(
        f"Connection refused ({wire_server.openai_url}, through the proxy {proxy})"), out.stderr
    assert len(wire_server.requests) == 1


def test_a_prompt_that_is_not_utf8_reaches_the_model_and_is_stored(wire_server, cli_env, hermes_home):  # noqa: F811
    """`cat notes.txt | hermes run -` with a Latin-1 file: its undecodable bytes became surrogates that neither the
    store nor the SDK can encode, and the turn failed with a UnicodeEncodeError of the session store's. Such bytes
    are U+FFFD now, from stdin and from the command line alike."""
    import os
    import subprocess

    from plugins_providers.testserver import reply
    from tests.conftest import ROOT, hermes_command

    wire_server.push(reply("from stdin"), reply("from argv"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), **cli_env, "HERMES_HOME": str(hermes_home), "OPENAI_API_KEY": "sk"}
    run = [*hermes_command(), "run", "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "m"]
    piped = subprocess.run([*run, "-"], input=b"caf\xe9 au lait", capture_output=True, env=env, timeout=60)
    assert piped.returncode == 0 and piped.stdout.decode().strip() == "from stdin", piped.stderr
    given = subprocess.run([*run, b"na\xefve"], capture_output=True, env=env, timeout=60)
    assert given.returncode == 0 and given.stdout.decode().strip() == "from argv", given.stderr
    sent = [r.body["messages"][-1]["content"] for r in wire_server.requests]
    assert sent == ["caf\ufffd au lait", "na\ufffdve"]
    listed = subprocess.run([*hermes_command(), "sessions", "list", "--json"], capture_output=True, env=env, timeout=60)
    assert len(json.loads(listed.stdout)) == 2, listed.stderr


def test_a_lone_or_split_surrogate_from_the_model_neither_stops_the_turn_nor_the_terminal(hermes, wire_server,  # noqa: F811
                                                                                          cli_env, hermes_home):
    """A server that escapes an emoji as a surrogate pair and splits it across two chunks (or sends half of one)
    gave a text no UTF-8 writer takes: the terminal's delta hook failed, then the session store, and the turn stopped
    with its UnicodeEncodeError. The pair is joined now and a lone one is U+FFFD, in the stream and the answer."""
    from plugins_providers.testserver import reply

    wire_server.push(reply(["smile ", "\ud83d", "\ude00"]), reply(["broken ", "\ud800", " end"]))
    model = ("--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "m")
    env = {**cli_env, "OPENAI_API_KEY": "sk"}
    joined = json.loads(hermes("run", *model, "--json", "hi", env=env).stdout)
    assert joined["exit_reason"] == "completed" and joined["final_response"] == "smile \U0001f600"
    shown = hermes("run", *model, "again", env=env)
    assert shown.returncode == 0 and shown.stdout.strip() == "broken \ufffd end", shown.stderr
    assert "UnicodeEncodeError" not in shown.stderr and "WARNING" not in shown.stderr, shown.stderr
    stored = json.loads(hermes("sessions", "show", joined["session_id"], "--json").stdout)
    assert stored["messages"][-1]["content"] == "smile \U0001f600"


def test_honest_endings_budget_without_answer_empty_answer_and_announced_retries(hermes, wire_server, cli_env,  # noqa: F811
                                                                                 hermes_home):
    from plugins_providers.testserver import error, reply

    model = ("--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "gpt-test")
    # the budget runs out and the grace call has no text either: exit 3, said on stderr, stdout empty
    calls = [("terminal", {"command": "true"})]
    wire_server.push(reply("", tool_calls=calls), reply(""))
    out = hermes("run", "--max-turns", "1", *model, "-t", "terminal", "loop", env=cli_env)
    assert out.returncode == 3 and out.stdout == ""
    assert "the iteration budget ran out before a final answer (raise it with --max-turns)" in out.stderr
    wire_server.push(reply("", tool_calls=calls), reply(""))
    out_json = hermes("run", "--json", "--max-turns", "1", *model, "-t", "terminal", "loop", env=cli_env)
    assert out_json.returncode == 3 and json.loads(out_json.stdout)["exit_reason"] == "budget_exhausted"
    # an empty answer is said, exit 0
    wire_server.push(reply(""))
    out = hermes("run", *model, "hi", env=cli_env)
    assert out.returncode == 0 and "hermes: the model returned an empty answer" in out.stderr
    # a retry is announced on stderr though no terminal is attached
    (hermes_home / "config.yaml").write_text("agent:\n  retry_base_delay: 0.01\n")
    wire_server.push(error(503), reply("after the retry"))
    out = hermes("run", *model, "hi", env=cli_env)
    assert out.returncode == 0 and out.stdout == "after the retry\n"
    assert [line for line in out.stderr.splitlines() if line.startswith("hermes: retrying: ")], out.stderr


def test_a_script_step_whose_content_is_not_text_is_a_clear_error(hermes, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": ["not", "text"]}]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "hi")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "bad script step: content must be a string" in out.stderr


def test_a_fallback_entry_that_cannot_work_is_said_at_the_start_not_in_the_outage(hermes, hermes_home, wire_server,
                                                                                    cli_env):  # noqa: F811
    """Fallback entries were first built when the primary failed: a typo in a provider, a missing key or a URL
    without a scheme surfaced only then, in the outage they are kept for. Each is one warning at the start now;
    the run goes on, and a working entry says nothing."""
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"fallback_providers": [
        {"modle": "z"}, {"model": "x", "provider": "openroutr"}, {"model": "y", "provider": "openrouter"},
        {"model": "w", "base_url": "127.0.0.1:9/v1"}, {"model": "fine", "api_mode": "chat_completions",
                                                        "base_url": wire_server.openai_url}]}))
    wire_server.push(reply("primary here"))
    env = {**cli_env, "OPENAI_API_KEY": "sk-test", "OPENROUTER_API_KEY": ""}
    out = hermes("run", "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "m", "hi", env=env)
    assert out.returncode == 0 and out.stdout.strip() == "primary here", out.stderr
    assert out.stderr.splitlines() == [
        "hermes: WARNING: fallback_providers[0] has no model ('modle' is no key); skipped",
        "hermes: WARNING: fallback provider (openroutr:x) cannot be used: unknown provider 'openroutr' (did you mean "
        "'openrouter'?); known: " + out.stderr.split("known: ")[1].split("\n")[0],
        "hermes: WARNING: fallback provider (openrouter:y) cannot be used: no API key: set the environment variable "
        "OPENROUTER_API_KEY (`hermes config set OPENROUTER_API_KEY ...` keeps it in the .env beside config.yaml; "
        "or name another one with api_key_env in config)",
        "hermes: WARNING: fallback provider (w) cannot be used: the base URL '127.0.0.1:9/v1' has no scheme: use "
        "http://127.0.0.1:9/v1 (or https://)"], out.stderr
    assert len(wire_server.requests) == 1


def test_an_auxiliary_model_that_cannot_work_is_said_at_the_start(hermes, hermes_home, wire_server,
                                                                   cli_env):  # noqa: F811
    """auxiliary.compression and auxiliary.approval were first built when a summary or a review was due: a typo
    there went unsaid until then (the summary fell back to a list of messages, the review to asking). Each is one
    warning at the start now; a block that works (a cheaper model on the same endpoint) says nothing."""
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({
        "auxiliary": {"compression": {"provider": "openroutr", "model": "x"},
                      "approval": {"model": "y", "provider": "openrouter"}}, "approvals": {"mode": "smart"}}))
    wire_server.push(reply("fine"))
    env = {**cli_env, "OPENAI_API_KEY": "sk-test", "OPENROUTER_API_KEY": ""}
    args = ("run", "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "m", "hi")
    out = hermes(*args, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "fine", out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith(
        "hermes: WARNING: auxiliary.compression (openroutr:x) cannot be used: unknown provider 'openroutr' (did you "
        "mean 'openrouter'?)") and lines[1] == (
        "hermes: WARNING: auxiliary.approval (openrouter:y) cannot be used: no API key: set the environment variable "
        "OPENROUTER_API_KEY (`hermes config set OPENROUTER_API_KEY ...` keeps it in the .env beside config.yaml; "
        "or name another one with api_key_env in config)"), out.stderr
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"auxiliary": {"compression": {"model": "cheaper"}}}))
    wire_server.push(reply("fine"))
    out = hermes(*args, env=env)
    assert (out.returncode, out.stderr) == (0, "")


def test_a_primary_that_cannot_work_falls_back_saying_why(hermes, hermes_home, wire_server, cli_env):  # noqa: F811
    """With fallbacks configured the start does not stop on the primary's mistake: the loop falls back. The
    line said 'openrouter:x failed (config)' and not what was wrong."""
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"fallback_providers": [
        {"model": "m", "api_mode": "chat_completions", "base_url": wire_server.openai_url}]}))
    wire_server.push(reply("from the fallback"))
    out = hermes("run", "-m", "x", "--provider", "openrouter", "hi",
                 env={**cli_env, "OPENAI_API_KEY": "sk-test", "OPENROUTER_API_KEY": ""})
    assert out.returncode == 0 and out.stdout.strip() == "from the fallback", out.stderr
    assert out.stderr.strip() == ("hermes: fallback: openrouter:x failed: config: no API key: set the environment "
                                  "variable OPENROUTER_API_KEY (`hermes config set OPENROUTER_API_KEY ...` keeps it in the .env "
                                  "beside config.yaml; or name another one with api_key_env in config); "
                                  "trying chat_completions:m"), out.stderr


def test_subagents_run_on_the_model_delegation_names(hermes, hermes_home, make_wire_server, cli_env):  # noqa: F811
    """hermes-agent's delegation.model / base_url / api_mode: subagents on a cheaper model or another
    endpoint. Were unknown keys here, and every child ran on the parent's model. A delegation model that
    cannot work is a warning at the start, as an auxiliary model is."""
    parent, cheap = make_wire_server(), make_wire_server()
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"delegation": {
        "model": "cheap-1", "base_url": cheap.openai_url, "api_mode": "chat_completions", "max_iterations": 5}}))
    parent.push(reply(tool_calls=[("delegate_task", {"goal": "count the files"})]), reply("the child counted 3"))
    cheap.push(reply("3 files"))
    out = hermes("run", "--json", "--api-mode", "chat_completions", "--base-url", parent.openai_url, "-m", "big-1",
                 "-t", "delegation", "go", env={**cli_env, "OPENAI_API_KEY": "sk-test"})
    assert out.returncode == 0 and out.stderr == "", out.stderr
    result = json.loads(out.stdout)
    assert result["final_response"] == "the child counted 3"
    assert "3 files" in result["messages"][2]["content"]
    assert [r.body["model"] for r in parent.requests] == ["big-1", "big-1"]
    assert [r.body["model"] for r in cheap.requests] == ["cheap-1"]

    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"delegation": {"provider": "openroutr"}}))
    parent.push(reply("fine"))
    out = hermes("run", "--api-mode", "chat_completions", "--base-url", parent.openai_url, "-m", "big-1", "hi",
                 env={**cli_env, "OPENAI_API_KEY": "sk-test"})
    assert out.returncode == 0 and out.stderr.startswith(
        "hermes: WARNING: delegation (openroutr:big-1) cannot be used: unknown provider 'openroutr'"), out.stderr


def test_a_delegation_key_written_in_config_is_used_and_said(hermes, hermes_home, make_wire_server,  # noqa: F811
                                                             cli_env):
    """hermes-agent's delegation.api_key: the subagents' endpoint's key, written in config.yaml. It was left unread,
    and the children sent the parent's key to the other endpoint."""
    parent, cheap = make_wire_server(), make_wire_server()
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"delegation": {
        "model": "cheap-1", "base_url": cheap.openai_url, "api_mode": "chat_completions", "api_key": "sk-child"}}))
    parent.push(reply(tool_calls=[("delegate_task", {"goal": "count"})]), reply("done"))
    cheap.push(reply("3"))
    out = hermes("run", "--api-mode", "chat_completions", "--base-url", parent.openai_url, "-m", "big-1",
                 "-t", "delegation", "go", env={**cli_env, "OPENAI_API_KEY": "sk-parent"})
    assert out.returncode == 0, out.stderr
    assert [r.headers["authorization"] for r in cheap.requests] == ["Bearer sk-child"]
    assert [r.headers["authorization"] for r in parent.requests] == ["Bearer sk-parent"] * 2
    assert "delegation.api_key: an API key written in config.yaml; it is used, but belongs in the environment" \
        in out.stderr
