"""Mixture of Agents (the moa plugin) through the command line, against the wire-protocol server with the real
openai SDK: reference models asked side by side at each model call of a turn, their advice at the end of the acting
model's request and never in the history; in chat, /moa PROMPT for one turn, fanout user_turn, a reference that
fails, the presets listed, a trace written and a broken preset in hermes doctor."""

from __future__ import annotations

import json
import threading

import yaml

from plugins_providers.testserver import error, reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)
from tests.terminal.conftest import terminal  # noqa: F401  (fixture)


def by_model(wire_server, acting: list):
    """Answer each request by its model: a reference advises, the acting model takes its next scripted step."""
    lock = threading.Lock()

    def answer(request):
        model = request.body["model"]
        if model.startswith("ref-bad"):
            return error(400, message="no such model")
        if model.startswith("ref-"):
            return reply(f"{model} says: read app.py first")
        with lock:
            return acting.pop(0) if acting else reply("(nothing scripted)")

    wire_server.default = answer


def test_references_advise_at_every_call_and_the_history_keeps_none_of_it(hermes, hermes_home, wire_server,
                                                                         cli_env, tmp_path):  # noqa: F811
    (tmp_path / "app.py").write_text("print('hi')\n")
    slot = {"base_url": wire_server.openai_url, "api_mode": "chat_completions", "api_key_env": "OPENAI_API_KEY"}
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"moa": {"active_preset": "team", "presets": {"team": {
        "reference_models": [{"model": "ref-a"}, {"model": "ref-b", **slot}], "aggregator": {"model": "agg"},
        "max_tokens": 300}}}}))
    by_model(wire_server, [reply(tool_calls=[("read_file", {"path": "app.py"})]), reply("It prints hi.")])
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "gpt-test",
                 "-t", "file", "what does app.py do?", env={**cli_env, "OPENAI_API_KEY": "sk-test"}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "It prints hi."
    asked = {}
    for request in wire_server.requests:
        asked.setdefault(request.body["model"], []).append(request.body)
    assert sorted(asked) == ["agg", "ref-a", "ref-b"]  # the conversation's own model is not called: agg acts
    assert len(asked["ref-a"]) == len(asked["ref-b"]) == len(asked["agg"]) == 2  # per_iteration
    first, second = (body["messages"] for body in asked["ref-a"])
    assert first[0]["role"] == "system" and "You advise an AI agent" in first[0]["content"]
    assert "## User\nwhat does app.py do?" in first[1]["content"] and "tools" not in asked["ref-a"][0]
    assert "[calls read_file(" in second[1]["content"] and "print('hi')" in second[1]["content"]
    for body in asked["agg"]:
        last = body["messages"][-1]["content"]
        assert "ref-a says: read app.py first" in last and "ref-b says" in last and body["max_tokens"] == 300
        assert {t["function"]["name"] for t in body["tools"]} >= {"read_file"}
    assert asked["agg"][1]["messages"][-2]["role"] == "tool"  # after the tool result: a message of its own
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    stored = hermes("sessions", "show", session, "--json").stdout
    assert "It prints hi." in stored and "read app.py first" not in stored


def test_moa_in_chat_for_one_turn_once_per_turn_with_a_failing_reference(terminal, hermes, hermes_home,  # noqa: F811
                                                                          wire_server):
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"moa": {"save_traces": True, "presets": {"default": {
        "reference_models": ["ref-a", "ref-bad"], "fanout": "user_turn"}, "broken": {"reference_models": []}}},
        "auxiliary": {"title_generation": {"enabled": False}}}))  # the title's call would take the model's answer
    by_model(wire_server, [reply(tool_calls=[("terminal", {"command": "true"})]), reply("first answer"),
                           reply("second answer")])
    chat, home = terminal([], "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "main",
                          "-t", "terminal", env={"OPENAI_API_KEY": "sk-test", "NO_COLOR": "1"})
    chat.expect("hermes> ", timeout=30)
    chat.line("/moa")
    chat.expect("usage: /moa PROMPT", timeout=10)
    assert "default: ref-a, ref-bad advise, the conversation's model acts (user turn)" in chat.seen
    assert "broken: cannot run: moa.presets.broken.reference_models: expected a list" in chat.seen
    chat.line("/moa what now?")
    chat.expect("first answer", timeout=30)
    chat.expect("hermes> ")
    assert "[moa] asking ref-a, ref-bad" in chat.seen and "[moa] no advice from ref-bad" in chat.seen
    chat.line("and then?")
    chat.expect("second answer", timeout=30)
    chat.expect("hermes> ")
    chat.keys("\x04")
    assert chat.close() == 0
    models = [r.body["model"] for r in wire_server.requests]
    assert models.count("ref-a") == 1 and models.count("main") == 3  # once for the /moa turn; none for the next
    last_of_moa = [r.body for r in wire_server.requests if r.body["model"] == "main"][1]["messages"][-1]["content"]
    assert "ref-a says: read app.py first" in last_of_moa  # user_turn: the same advice at the turn's later call
    traces = list((home / "moa-traces").glob("*.jsonl"))
    record = json.loads(traces[0].read_text().splitlines()[0])
    assert record["preset"] == "default" and record["answers"][0]["model"].endswith("ref-a")
    assert "ref-bad" in record["failed"][0] and "no such model" in record["failed"][0]
    doctor = hermes("doctor", "--offline").stdout
    assert "moa.presets.broken.reference_models: expected a list of models to consult" in doctor
