"""The loop at the model's output limit (finish_reason "length"): a cut answer is continued and kept whole, a cut
tool call says why; and how a provider is labelled."""

import threading

from kernel.messages import GO_ON, validate
from kernel.types import ProviderConfig


def test_an_answer_cut_at_the_output_limit_is_continued_and_stored_whole(make_agent, echo_plugin, recorder):
    """finish_reason "length" (the model's max_tokens) used to end the turn with half an answer, unsaid."""
    rec = recorder("on_stream_delta", "append_messages")
    cut = {"content": "The robots were ", "finish_reason": "length"}
    agent = make_agent(echo_plugin, script=[cut, {"content": "built in ", "finish_reason": "length"}, "a day."],
                       callbacks=[rec])
    result = agent.run_conversation("a story")
    assert result["final_response"] == "The robots were built in a day." and result["api_calls"] == 3
    assert result["messages"] == [{"role": "user", "content": "a story"},
                                  {"role": "assistant", "content": "The robots were built in a day."}]
    assert [m for batch in rec.of("append_messages") for m in batch["messages"]] == result["messages"]
    assert "".join(d["text"] for d in rec.of("on_stream_delta")) == "The robots were built in a day."
    # each call after a cut sees what was written so far and is asked to go on; nothing of that is stored
    second, third = agent.scripted.requests[1].messages, agent.scripted.requests[2].messages
    assert second[-2:] == [{"role": "assistant", "content": "The robots were "}, {"role": "user", "content": GO_ON}]
    assert third[-2] == {"role": "assistant", "content": "The robots were built in "}
    # at most three times; a cut with no text (a reasoning model's budget spent on thinking) is not continued
    agent.scripted.steps.extend([dict(cut, content=f"{i} ") for i in range(5)] + [dict(cut, content="")])
    result = agent.run_conversation("longer")
    assert result["final_response"] == "0 1 2 3 " and result["api_calls"] == 4
    result = agent.run_conversation("x")  # the next turn starts fresh; a cut that brings nothing ends the answer
    assert result["final_response"] == "4 " and result["api_calls"] == 2
    agent.scripted.steps.append(dict(cut, content=""))
    result = agent.run_conversation("y")
    assert result["final_response"] == "" and result["api_calls"] == 1
    # a cut answer that then calls a tool keeps its text with the call; the grace call's answer is not continued
    agent = make_agent(echo_plugin, max_turns=2, script=[
        cut, {"content": "then ", "tool_calls": [["echo", {"text": "x"}]]},
        {"content": "Summary: ", "finish_reason": "length"}, "never asked"])
    result = agent.run_conversation("work")
    assert result["messages"][1]["content"] == "The robots were then " and result["messages"][1]["tool_calls"]
    assert result["exit_reason"] == "budget_exhausted" and result["final_response"] == "Summary: "
    validate(result["messages"])


def test_a_cut_tool_call_says_why_and_an_interrupted_continuation_keeps_what_was_shown(make_agent, echo_plugin):
    # arguments cut off by the output limit: the model hears why, not only "not valid JSON" (and sends less next time)
    cut_call = {"tool_calls": [{"function": {"name": "echo", "arguments": '{"text": "a long fi'}}], "finish_reason": "length"}
    broken = {"tool_calls": [{"function": {"name": "echo", "arguments": '{"text": "x'}}]}  # not cut: no such hint
    agent = make_agent(echo_plugin, script=[cut_call, broken, "done"])
    result = agent.run_conversation("write it")
    first, second = [m["content"] for m in result["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in first and "your answer reached its output limit inside them: send less" in first
    assert "not valid JSON" in second and "output limit" not in second
    # Ctrl+C while the model goes on with a cut answer: the part shown stays the answer, not a "no answer" marker
    agent = make_agent(script=[{"content": "The robots were ", "finish_reason": "length"},
                               {"content": "never shown", "delay": 5}])
    threading.Timer(0.5, agent.interrupt).start()
    result = agent.run_conversation("a story")
    assert result["exit_reason"] == "interrupted_by_user" and len(agent.scripted.requests) == 2
    assert result["messages"] == [{"role": "user", "content": "a story"},
                                  {"role": "assistant", "content": "The robots were "}]
    agent.scripted.steps.append("fine")
    validate(agent.run_conversation("go on")["messages"])


def test_a_provider_is_labelled_by_what_names_it():
    """`hermes run -m ollama/llama3` was "provider:ollama/llama3" in every error and in `sessions list`."""
    assert ProviderConfig(model="ollama/llama3").label() == "ollama/llama3"
    assert ProviderConfig(model="m", provider="openrouter").label() == "openrouter:m"
    assert ProviderConfig(model="m", api_mode="chat_completions").label() == "chat_completions:m"
    assert ProviderConfig(api_mode="scripted").label() == "scripted" and ProviderConfig().label() == "provider"
