"""hermes-agent's tool_loop_guardrails through the real loop (scripted model, the real file and terminal tools): the
model is told when it repeats a failing or fruitless call, and with hard stops such a call is not run again."""

from __future__ import annotations

import json

from plugins import core_tools, loop_guard


def _calls(*pairs) -> dict:
    return {"tool_calls": [list(pair) for pair in pairs]}


def _results(result) -> list:
    return [m["content"] for m in result["messages"] if m["role"] == "tool"]


def test_a_call_failing_again_unchanged_is_said_to_the_model(make_agent, tmp_path):
    missing = {"path": str(tmp_path / "nowhere.txt")}
    agent = make_agent(core_tools, loop_guard, script=[*[_calls(("read_file", missing))] * 3, "gave up",
                                                       _calls(("read_file", missing)), "still not there"])
    results = _results(agent.run_conversation("read it"))
    assert "[hermes:" not in results[0]
    assert results[1].endswith("[hermes: read_file has now failed 2 times with these same arguments. Read the error "
                               "and change something (the arguments, the approach or the tool) instead of repeating "
                               "it.]")
    assert "failed 3 times" in results[2]
    again = _results(agent.run_conversation("and again"))  # a new turn counts anew
    assert len(again) == 4 and "[hermes:" not in again[-1]


def test_one_tool_failing_with_other_arguments_and_exit_codes_count_too(make_agent, tmp_path):
    agent = make_agent(core_tools, loop_guard, config={"approvals": {"mode": "off"}}, script=[
        _calls(("terminal", {"command": "exit 3"})), _calls(("terminal", {"command": "exit 4"})),
        _calls(("terminal", {"command": "exit 5"})), _calls(("terminal", {"command": "true"})),
        _calls(("terminal", {"command": "exit 6"})), "done"])
    results = _results(agent.run_conversation("go"))
    assert json.loads(results[0].split("\n\n[hermes:")[0])["exit_code"] == 3
    assert "[hermes:" not in results[1]
    assert "terminal has failed 3 times in this turn" in results[2]
    assert "[hermes:" not in results[4]  # a success in between starts the count again


def test_a_read_only_call_giving_the_same_answer_and_hard_stops(make_agent, tmp_path):
    page = tmp_path / "notes.txt"
    page.write_text("the same\n")
    missing = {"path": str(tmp_path / "nowhere.txt")}
    config = {"tool_loop_guardrails": {"hard_stop_enabled": True, "hard_stop_after": {
        "exact_failure": 2, "idempotent_no_progress": 3, "same_tool_failure": 3}}}
    agent = make_agent(core_tools, loop_guard, config=config, script=[
        *[_calls(("read_file", {"path": str(page)}))] * 4,
        *[_calls(("read_file", missing))] * 3, _calls(("search_files", {"pattern": "x", "path": str(tmp_path / "no")})),
        _calls(("read_file", {"path": str(tmp_path / "other.txt")})), _calls(("read_file", {"path": str(page)})),
        "stopped"])
    results = _results(agent.run_conversation("go"))
    assert "the same" in results[0] and "[hermes:" not in results[0]
    assert results[1].endswith("[hermes: read_file gave this same result 2 times for these arguments. Use it, or ask "
                               "something else, instead of repeating the call.]")
    assert results[3].startswith("{") and "Not run: read_file already gave the same result 3 times" in results[3]
    assert "failed 2 times with these same arguments" in results[5]
    assert "Not run: read_file already failed 2 times with these same arguments" in results[6]
    assert "read_file failed 3 times in this turn: it will not be run again in it." in results[8]
    assert "Not run: read_file failed 3 times in this turn" in results[9]  # any arguments, this turn
    assert agent.run_conversation("new turn") is not None


def test_the_keys_are_hermes_agents_and_off_means_off(make_agent, tmp_path):
    missing = {"path": str(tmp_path / "nowhere.txt")}
    agent = make_agent(core_tools, loop_guard, config={"tool_loop_guardrails": {"warnings_enabled": False}},
                       script=[*[_calls(("read_file", missing))] * 6, "done"])
    assert not any("[hermes:" in r for r in _results(agent.run_conversation("go")))  # hard stops: off by default
    assert {key.name for key in agent.config.keys.values() if key.name.startswith("tool_loop_guardrails.")} == {
        "tool_loop_guardrails.warnings_enabled", "tool_loop_guardrails.hard_stop_enabled",
        *(f"tool_loop_guardrails.{which}.{kind}" for which in ("warn_after", "hard_stop_after")
          for kind in ("exact_failure", "same_tool_failure", "idempotent_no_progress"))}
