import json
import threading

import pytest

from kernel.budget import IterationBudget


def test_consume_remaining_used():
    b = IterationBudget(3)
    assert [b.consume() for _ in range(4)] == [True, True, True, False]
    assert b.used == 3 and b.remaining == 0
    b.reset()
    assert b.used == 0 and b.remaining == 3
    with pytest.raises(ValueError):
        IterationBudget(0)


def test_consume_is_thread_safe():
    b = IterationBudget(1000)
    granted = []

    def worker():
        for _ in range(300):
            granted.append(b.consume())

    threads = [threading.Thread(target=worker) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert granted.count(True) == 1000 and b.used == 1000


def test_pressure_levels():
    b = IterationBudget(10)
    levels = []
    for _ in range(10):
        b.consume()
        levels.append(b.pressure())
    assert levels[:6] == [None] * 6
    assert levels[6:9] == ["caution", "caution", "warning"]
    assert levels[9] == "exhausted"


TOOL_STEP = {"tool_calls": [["echo", {"text": "x"}]]}


def test_pressure_goes_into_the_tool_result_json_not_a_new_message(make_agent, echo_plugin):
    agent = make_agent(echo_plugin, script=[TOOL_STEP] * 8 + ["final"], max_turns=10)
    result = agent.run_conversation("go")
    assert result["exit_reason"] == "completed"
    tool_results = [m for m in result["messages"] if m["role"] == "tool"]
    notes = [json.loads(m["content"]).get("_budget") for m in tool_results]
    assert notes[:6] == [None] * 6
    assert notes[6].startswith("CAUTION") and notes[7].startswith("CAUTION")
    assert all(json.loads(m["content"])["echo"] == "x" for m in tool_results)
    # no extra messages: user, then (assistant, tool) x 8, then the answer
    assert [m["role"] for m in result["messages"]] == ["user"] + ["assistant", "tool"] * 8 + ["assistant"]


def test_budget_exhausted_gets_one_grace_call_without_tools(make_agent, echo_plugin):
    agent = make_agent(echo_plugin, script=[TOOL_STEP] * 3 + [{"content": "summary of work", "tool_calls": [["echo", {}]]}],
                       max_turns=3)
    result = agent.run_conversation("go")
    assert result["exit_reason"] == "budget_exhausted"
    assert result["final_response"] == "summary of work"
    assert result["api_calls"] == 4
    grace = agent.scripted.requests[-1]
    assert grace.tool_choice == "none"
    last_tool = [m for m in grace.messages if m["role"] == "tool"][-1]
    assert "exhausted" in json.loads(last_tool["content"])["_budget"]
    # the grace answer's tool calls were dropped: the history stays valid
    assert "tool_calls" not in result["messages"][-1]
    from kernel.messages import validate

    validate(result["messages"])


def test_child_budget_is_its_own(make_agent, echo_plugin):
    parent = make_agent(echo_plugin, script=["x"])
    child = parent.spawn_child(max_iterations=7)  # delegate_task passes delegation.max_iterations
    assert child.budget.max_total == 7 and child.budget is not parent.budget
    assert parent.budget.max_total == 90
    parent.release_child(child)
