"""Model output that is odd but whole (issue 22, item 6), through ``hermes run``
against the wire-protocol server with the real SDKs: text that is not UTF-8
inside a stream, usage blocks that are not numbers, tool arguments nested
100,000 deep, a stream of keep-alive comments only, and a 100 kB tool call."""

from __future__ import annotations

import json
import time

import pytest

from plugins_providers.testserver import bad_bytes, keepalive, reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def _modes(server) -> list:
    return [("chat_completions", server.openai_url), ("anthropic_messages", server.url),
            ("codex_responses", server.openai_url)]


def _run(hermes, cli_env, mode, url, *args, timeout=60):  # noqa: F811
    return hermes("run", "--json", "--api-mode", mode, "--base-url", url, "-m", "m", *args, "go",
                  env={**cli_env, **KEYS}, timeout=timeout)


@pytest.mark.parametrize("index", [0, 1, 2], ids=["chat", "messages", "responses"])
def test_text_that_is_not_utf8_in_a_stream_is_retried(hermes, wire_server, cli_env, index):  # noqa: F811
    mode, url = _modes(wire_server)[index]
    wire_server.script([bad_bytes(after=1, text=["Hello ", "there", " world"]), reply("the whole answer")])
    out = _run(hermes, cli_env, mode, url)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["final_response"] == "the whole answer" and len(wire_server.requests) == 2
    assert "bad_request" not in out.stderr


@pytest.mark.parametrize("usage", [{"input": "lots", "output": 5}, {"input": -40, "output": 5},
                                   {"input": 10, "output": "x"}], ids=["string", "negative", "output"])
def test_a_usage_block_that_is_not_numbers_keeps_the_answer(hermes, wire_server, cli_env, usage):  # noqa: F811
    for mode, url in _modes(wire_server):
        wire_server.push(reply("a complete answer", usage=usage))
        out = _run(hermes, cli_env, mode, url)
        assert out.returncode == 0, (mode, out.stderr)
        result = json.loads(out.stdout)
        assert result["final_response"] == "a complete answer", mode
        assert all(v >= 0 for v in result["usage"].values() if isinstance(v, (int, float)))
        assert "Traceback" not in out.stderr, (mode, out.stderr)
        if any(isinstance(v, str) for v in usage.values()):
            assert "usage block is not numbers" in out.stderr, (mode, out.stderr)  # said, not silently dropped


def test_tool_arguments_nested_100000_deep_are_an_error_the_model_reads(hermes, wire_server, cli_env):  # noqa: F811
    deep = "[" * 100_000 + "]" * 100_000
    wire_server.script([reply(tool_calls=[("read_file", deep)]), reply("gave up on that")])
    out = _run(hermes, cli_env, "chat_completions", wire_server.openai_url, "-t", "file")
    assert out.returncode == 0 and "Traceback" not in out.stderr and "RecursionError" not in out.stderr, out.stderr
    result = json.loads(out.stdout)
    tool = next(m for m in result["messages"] if m["role"] == "tool")
    assert "arguments" in tool["content"] and result["final_response"] == "gave up on that"
    resumed = hermes("sessions", "show", result["session_id"], "--json")  # the stored history reads back
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr


def test_a_stream_of_keepalive_comments_only_counts_as_idle(hermes, wire_server, cli_env):  # noqa: F811
    for mode, url in _modes(wire_server):
        wire_server.script([keepalive(30, text="never sent"), reply("after the retry")])
        started = time.monotonic()
        out = _run(hermes, cli_env, mode, url, "--timeout", "2", timeout=60)
        took = time.monotonic() - started
        assert out.returncode == 0 and took < 20, (mode, took, out.stderr)
        assert json.loads(out.stdout)["final_response"] == "after the retry"


def test_a_100_kb_tool_call_is_judged_and_refused_quickly(hermes, wire_server, cli_env, tmp_path):  # noqa: F811
    command = "echo " + "x" * 100_000
    wire_server.script([reply(tool_calls=[("terminal", {"command": command})]), reply("ok")])
    started = time.monotonic()
    out = hermes("run", "--json", "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "m",
                 "-t", "terminal", "go", env={**cli_env, **KEYS}, cwd=tmp_path, timeout=60)
    assert out.returncode == 0 and time.monotonic() - started < 20, out.stderr
    tool = next(m for m in json.loads(out.stdout)["messages"] if m["role"] == "tool")
    assert "too long to check" in tool["content"]
