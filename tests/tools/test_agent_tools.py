"""agent-tools: todo (handler), clarify and delegate_task through the real
Agent with the scripted provider (children share the parent's provider, so one
dispatcher answers parent and children by looking at the request)."""

import json
import threading
import time
from types import SimpleNamespace

import pytest

from hermes.host.config import Config
from kernel import hookimpl
from kernel.protocols import ContextEngine
from kernel.types import Tool, ToolContext, ToolError
from plugins import agent_tools, core_tools

CHILD_MARK = "You are a subagent"


def _ctx(agent):
    return ToolContext(agent=agent, tool_name="t", tool_call_id="c1", task_id="t", session_id="s", turn_id="u")


def _tool_results(result):
    return [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]


def _first_user(request):
    return next(m["content"] for m in request.messages if m["role"] == "user")


def _tool_names(request):
    return sorted(t["name"] for t in request.tools)


# --------------------------------------------------------------------------
# todo


def test_todo_replace_merge_and_read():
    agent = SimpleNamespace(state={})
    run = lambda **a: agent_tools.todo(a, _ctx(agent))  # noqa: E731
    view = run(todos=[{"content": "read the code"}, {"id": "t2", "content": "fix the bug", "status": "in_progress"}])
    assert view["todos"] == [
        {"content": "read the code", "status": "pending", "id": "1"},
        {"id": "t2", "content": "fix the bug", "status": "in_progress"},
    ]
    assert view["summary"] == {"pending": 1, "in_progress": 1, "completed": 0, "cancelled": 0, "total": 2}
    view = run(todos=[{"id": "1", "status": "completed"}, {"content": "write a test"}], merge=True)
    assert [(t["id"], t["status"]) for t in view["todos"]] == [("1", "completed"), ("t2", "in_progress"), ("3", "pending")]
    assert run()["todos"] == view["todos"]  # no arguments: read
    assert agent.state["todo"][0]["content"] == "read the code"
    view = run(todos=[])  # replace with nothing: cleared
    assert view["todos"] == [] and view["summary"]["total"] == 0
    # the list sent as its JSON text, as some models encode nested values, is the same list
    view = run(todos=' [{"content": "again", "status": "completed"}]', merge="true")
    assert view["todos"] == [{"content": "again", "status": "completed", "id": "1"}]


def test_todo_bad_input_changes_nothing():
    agent = SimpleNamespace(state={})
    run = lambda **a: agent_tools.todo(a, _ctx(agent))  # noqa: E731
    run(todos=[{"content": "a"}])
    for args, message in [
        ({"todos": [{"content": "x", "status": "done"}]}, "not one of pending, in_progress, completed, cancelled"),
        ({"todos": [{"status": "pending"}]}, "needs a non-empty 'content'"),
        ({"todos": ["just text"]}, r"todos\[0\] must be an object"),
        ({"todos": [{"id": "a", "content": "x"}, {"id": "a", "content": "y"}]}, "appears twice"),
        ({"todos": "a, b"}, "'todos' must be a list"),
        ({"todos": '{"content": "x"}'}, "'todos' must be a list, got str"),  # JSON text, but of an object
        ({"todos": "[" * 100_000}, "'todos' must be a list, got str"),  # nested past the parser's depth
        ({"todos": "[{]"}, "'todos' must be a list, got str"),
        ({"todos": [{"id": "9", "status": "completed"}], "merge": True}, "needs a non-empty 'content'"),
    ]:
        with pytest.raises(ToolError, match=message):
            run(**args)
    assert agent.state["todo"] == [{"content": "a", "status": "pending", "id": "1"}]


# --------------------------------------------------------------------------
# clarify


class Answerer:
    def __init__(self, answer):
        self.answer, self.asked = answer, []

    from kernel import hookimpl

    @hookimpl
    def clarify(self, question, choices, agent):
        self.asked.append((question, choices))
        return self.answer


def test_clarify_asks_the_user_through_the_hook(make_agent):
    user = Answerer("postgres")
    agent = make_agent(agent_tools, callbacks=[user], script=[
        {"tool_calls": [("clarify", {"question": "Which database?", "choices": ["sqlite", "postgres"]})]}, "ok"])
    result = agent.run_conversation("set up the db")
    assert _tool_results(result) == [{"question": "Which database?", "answer": "postgres"}]
    assert user.asked == [("Which database?", ["sqlite", "postgres"])]


def test_clarify_without_a_user_tells_the_model_to_proceed(make_agent):
    agent = make_agent(agent_tools, script=[{"tool_calls": [("clarify", {"question": "Which database?"})]}, "ok"])
    [answer] = _tool_results(agent.run_conversation("set up the db"))
    assert answer["answer"] is None and "No user is available" in answer["note"] and "best judgement" in answer["note"]


def test_clarify_observers_hear_the_question_and_whether_it_was_answered(make_agent):
    from kernel import hookimpl

    heard = []

    class Observer:
        __name__ = "observer"

        @hookimpl
        def on_clarify_request(self, question, choices, agent):
            heard.append(("asked", question, choices))

        @hookimpl
        def on_clarify_response(self, question, answered, agent):
            heard.append(("ended", question, answered))

    ask = {"tool_calls": [("clarify", {"question": "Which database?", "choices": ["sqlite"]})]}
    for callbacks, answered in (([Answerer("sqlite")], True), ([Answerer("  ")], False), ([], False)):
        heard.clear()
        make_agent(agent_tools, Observer(), callbacks=callbacks, script=[ask, "ok"]).run_conversation("go")
        assert heard == [("asked", "Which database?", ["sqlite"]), ("ended", "Which database?", answered)]


def test_clarify_bad_input_is_an_error_result(make_agent):
    agent = make_agent(agent_tools, script=[{"tool_calls": [
        ("clarify", {"question": "?", "choices": ["a", "b", "c", "d", "e"]}),
        ("clarify", {"choices": ["a"]}),
        ("clarify", {"question": "q", "choices": [{"x": 1}]}),
    ]}, "ok"])
    errors = [r["error"] for r in _tool_results(agent.run_conversation("go"))]
    assert "at most 4 choices" in errors[0]
    assert "missing required argument 'question'" in errors[1]
    assert "list of short strings" in errors[2]
    assert agent_tools.CLARIFY_TOOL.interactive is True


# --------------------------------------------------------------------------
# delegate_task


class Dispatcher:
    """One script step for everybody: children answer per ``child``, the
    parent delegates once with ``call`` and then answers."""

    def __init__(self, call, child=lambda request: "child report"):
        self.call, self.child = call, child
        self.lock = threading.Lock()
        self.active = self.peak = 0
        self.child_requests = []

    def __call__(self, request):
        if CHILD_MARK in _first_user(request):
            with self.lock:
                self.child_requests.append(request)
                self.active += 1
                self.peak = max(self.peak, self.active)
            try:
                return self.child(request)
            finally:
                with self.lock:
                    self.active -= 1
        if any(m["role"] == "tool" for m in request.messages):
            return "parent done"
        return {"tool_calls": [("delegate_task", self.call)]}


def _delegating_agent(make_agent, dispatcher, config=None, plugins=(agent_tools,), **kw):
    return make_agent(*plugins, script=[dispatcher] * 60, config=config or {}, **kw)


def test_delegate_one_task_reports_the_childs_answer_and_fires_hooks(make_agent, recorder):
    rec = recorder("subagent_start", "subagent_stop")
    d = Dispatcher({"goal": "count the files", "context": "look in /srv/data"})
    agent = _delegating_agent(make_agent, d, plugins=(agent_tools, core_tools), callbacks=[rec])
    result = agent.run_conversation("how many files?")
    assert result["final_response"] == "parent done"
    [out] = _tool_results(result)
    [child] = out["results"]
    assert child["status"] == "completed" and child["summary"] == "child report" and child["goal"] == "count the files"
    assert out["summary"] == "1 of 1 delegated tasks completed"
    # the child saw the goal and context, and not the tools children may not use
    [req] = d.child_requests
    assert "count the files" in _first_user(req) and "look in /srv/data" in _first_user(req)
    assert _tool_names(req) == ["patch", "process", "read_file", "search_files", "terminal", "todo", "write_file"]
    [start], [stop] = rec.of("subagent_start"), rec.of("subagent_stop")
    assert start["parent_session_id"] == agent.session_id and start["child_goal"] == "count the files"
    assert start["child_role"] == "leaf" and start["child_session_id"] == child["session_id"] != agent.session_id
    assert stop["child_status"] == "completed" and stop["child_summary"] == "child report"
    assert stop["agent"] is agent and agent._children == []  # released


def test_children_never_get_more_tools_than_the_parent(make_agent):
    d = Dispatcher({"goal": "g"})
    agent = _delegating_agent(make_agent, d, plugins=(agent_tools, core_tools), toolsets=["safe", "delegation"])
    agent.run_conversation("go")
    assert _tool_names(d.child_requests[0]) == ["read_file", "search_files"]


class OutsideWorldTools:
    """Tools a plugin (or an adapted hermes-agent plugin) may offer that children must not get."""

    __name__ = "outside-world"

    @hookimpl
    def register_tools(self, register):
        for name in ("send_message", "execute_code", "cronjob", "weather"):
            register(Tool(name, name, {"type": "object", "properties": {}}, lambda args, ctx: "ok", toolset="outside"))


def test_blocked_tools_never_reach_children(make_agent):
    from plugins_memory import manager

    d = Dispatcher({"goal": "g"})
    agent = _delegating_agent(make_agent, d, plugins=(agent_tools, manager, OutsideWorldTools()))
    assert {"send_message", "execute_code", "cronjob", "memory", "clarify"} <= set(agent.tools)
    agent.run_conversation("go")
    assert _tool_names(d.child_requests[0]) == ["todo", "weather"]


class FetchTools:
    """A plugin offering a tool through ``agent_tools`` (as MCP does), in toolset ``outside``."""

    __name__ = "fetch-tools"

    @hookimpl
    def agent_tools(self, agent, starting):
        return [Tool("fetch_url", "fetch", {"type": "object", "properties": {}}, lambda args, ctx: "ok",
                     toolset="outside")]


class RegisteredFetchTools(FetchTools):
    """The same, its toolset registered (as MCP registers ``mcp-NAME``): ``-t outside`` chooses it."""

    @hookimpl
    def register_toolsets(self, register):
        register("outside", [], "fetching")


def test_a_child_asking_for_tools_its_parent_lacks_gets_none(make_agent):
    """The parent has neither todo nor fetch_url: a child asking for todo gets no tools, not every tool
    (fetch_url, a plugin's, was what it got)."""
    d = Dispatcher({"goal": "g", "toolsets": ["todo"]}, child=lambda request: "no tools here")
    agent = _delegating_agent(make_agent, d, plugins=(agent_tools, core_tools, FetchTools()),
                              toolsets=["safe", "delegation"])
    assert sorted(agent.tools) == ["delegate_task", "read_file", "search_files"]
    [out] = _tool_results(agent.run_conversation("go"))
    assert out["results"][0]["summary"] == "no tools here"
    assert _tool_names(d.child_requests[0]) == []


@pytest.mark.parametrize("asked, gets", [
    (None, ["fetch_url", "read_file", "search_files"]),
    (["outside"], ["fetch_url"]),
    (["all"], ["fetch_url", "read_file", "search_files"]),
    (["safe"], ["read_file", "search_files"]),
])
def test_a_child_gets_its_parents_run_time_tools_by_their_toolset(make_agent, asked, gets):
    """A plugin's agent_tools (an MCP server's) reach a child as the parent's other tools do."""
    d = Dispatcher({"goal": "g", **({"toolsets": asked} if asked else {})})
    agent = _delegating_agent(make_agent, d, plugins=(agent_tools, core_tools, RegisteredFetchTools()),
                              toolsets=["safe", "delegation", "outside"])
    assert sorted(agent.tools) == ["delegate_task", "fetch_url", "read_file", "search_files"]
    agent.run_conversation("go")
    assert _tool_names(d.child_requests[0]) == gets


def test_an_empty_toolset_list_offers_no_tools_and_none_offers_every_one(make_agent):
    plugins = (agent_tools, core_tools, FetchTools())
    assert set(make_agent(*plugins).tools) >= {"fetch_url", "terminal", "todo"}
    assert make_agent(*plugins, toolsets=[]).tools == {}
    assert make_agent(*plugins, config={"toolsets": []}).tools == {}


def test_toolsets_argument_narrows_and_unknown_toolset_is_an_error(make_agent):
    d = Dispatcher({"goal": "g", "toolsets": ["todo"]})
    _delegating_agent(make_agent, d, plugins=(agent_tools, core_tools)).run_conversation("go")
    assert _tool_names(d.child_requests[0]) == ["todo"]
    d = Dispatcher({"goal": "g", "toolsets": ["nonsense"]})
    [out] = _tool_results(_delegating_agent(make_agent, d, plugins=(agent_tools, core_tools)).run_conversation("go"))
    assert "unknown toolset 'nonsense'" in out["error"]


def test_depth_limit_default_children_cannot_delegate(make_agent):
    agent = SimpleNamespace(depth=1, config=Config({}))
    with pytest.raises(ToolError, match="depth limit reached .* depth 1, delegation.max_spawn_depth is 1"):
        agent_tools.make_delegate_task().handler({"goal": "g"}, _ctx(agent))


def test_depth_two_lets_a_child_delegate_once(make_agent):
    seen = []

    def child(request):
        seen.append((_first_user(request), _tool_names(request)))
        if "delegate_task" in _tool_names(request) and not any(m["role"] == "tool" for m in request.messages):
            return {"tool_calls": [("delegate_task", {"goal": "grandchild work"})]}
        return "leaf report" if "grandchild work" in _first_user(request) else "middle report"

    d = Dispatcher({"goal": "middle work"}, child)
    result = _delegating_agent(make_agent, d, config={"delegation": {"max_spawn_depth": 2}}).run_conversation("go")
    assert _tool_results(result)[0]["results"][0]["summary"] == "middle report"
    tools_by_goal = {("grandchild" if "grandchild work" in u else "middle"): t for u, t in seen}
    assert tools_by_goal == {"middle": ["delegate_task", "todo"], "grandchild": ["todo"]}

    seen.clear()  # hermes-agent's switch: no child delegates, whatever the depth allows
    off = {"delegation": {"max_spawn_depth": 2, "orchestrator_enabled": False}}
    _delegating_agent(make_agent, Dispatcher({"goal": "middle work"}, child), config=off).run_conversation("go")
    assert seen == [(seen[0][0], ["todo"])] and "middle work" in seen[0][0]


def test_many_tasks_run_at_most_max_concurrent_children_at_once(make_agent):
    def child(request):
        time.sleep(0.15)
        return "did " + _first_user(request).split("Task: ")[1].split("\n")[0]

    d = Dispatcher({"tasks": [{"goal": f"job {i}"} for i in range(5)] + ["job 5"], "context": "shared facts"}, child)
    result = _delegating_agent(make_agent, d, config={"delegation": {"max_concurrent_children": 2}}).run_conversation("go")
    [out] = _tool_results(result)
    assert [r["summary"] for r in out["results"]] == [f"did job {i}" for i in range(6)]
    assert all(r["status"] == "completed" for r in out["results"]) and d.peak == 2
    assert all("shared facts" in _first_user(r) for r in d.child_requests)


def test_bad_delegate_arguments(make_agent):
    for call, message in [
        ({}, "give a 'goal'"),
        ({"tasks": [{"goal": f"g{i}"} for i in range(11)]}, "at most 10 tasks"),
        ({"tasks": [{"context": "no goal"}]}, "tasks[0] needs a non-empty 'goal'"),
        ({"goal": 42}, "'goal' must be a string"),
    ]:
        d = Dispatcher(call)
        [out] = _tool_results(_delegating_agent(make_agent, d).run_conversation("go"))
        assert message in out["error"]
        assert d.child_requests == []


def test_child_budget_is_its_own(make_agent):
    def child(request):
        if request.tool_choice == "none":  # the grace call after the budget ran out
            return "ran out, partial report"
        return {"tool_calls": [("todo", {})]}

    d = Dispatcher({"goal": "loop forever"}, child)
    agent = _delegating_agent(make_agent, d, config={"delegation": {"max_iterations": 2}})
    result = agent.run_conversation("go")
    [child_out] = _tool_results(result)[0]["results"]
    assert child_out["status"] == "budget_exhausted" and child_out["summary"] == "ran out, partial report"
    assert len(d.child_requests) == 3 and child_out["api_calls"] == 3  # 2 + the grace call
    assert agent.budget.used == 2  # the parent's own budget is untouched by the child's calls


def _blocking_child(started):
    def child(request):
        started.set()
        while not request.cancelled:
            time.sleep(0.01)
        return "too late"

    return child


def test_parent_interrupt_reaches_running_children(make_agent):
    started = threading.Event()
    d = Dispatcher({"tasks": ["a", "b"]}, _blocking_child(started))
    agent = _delegating_agent(make_agent, d)
    box = {}
    thread = threading.Thread(target=lambda: box.update(result=agent.run_conversation("go")))
    thread.start()
    assert started.wait(5)
    deadline = time.monotonic() + 5
    while len(d.child_requests) < 2:  # both children running (an early interrupt leaves one not_started)
        assert time.monotonic() < deadline
        time.sleep(0.005)
    t0 = time.monotonic()
    agent.interrupt()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - t0 < 2
    result = box["result"]
    assert result["exit_reason"] == "interrupted_by_user"
    [out] = _tool_results(result)
    assert [r["status"] for r in out["results"]] == ["interrupted", "interrupted"]


def test_child_time_limit(make_agent):
    started = threading.Event()
    d = Dispatcher({"goal": "slow"}, _blocking_child(started))
    agent = _delegating_agent(make_agent, d, config={"delegation": {"child_timeout_seconds": 0.3}})
    t0 = time.monotonic()
    result = agent.run_conversation("go")
    assert time.monotonic() - t0 < 3
    [child_out] = _tool_results(result)[0]["results"]
    assert child_out["status"] == "timed_out" and "time limit" in child_out["summary"]
    assert result["final_response"] == "parent done"


def test_child_summaries_are_capped(make_agent):
    d = Dispatcher({"goal": "verbose"}, lambda request: "start " + "word " * 2000 + "end")
    result = _delegating_agent(make_agent, d, config={"delegation": {"max_summary_chars": 300}}).run_conversation("go")
    summary = _tool_results(result)[0]["results"][0]["summary"]
    assert summary.startswith("start") and summary.endswith("end") and "characters omitted" in summary
    assert len(summary) < 400


def test_register_hooks():
    got, sets = [], {}
    agent_tools.register_tools(register=got.append, config=Config({}))
    agent_tools.register_toolsets(register=lambda name, tools, description="": sets.setdefault(name, tools))
    assert {t.name: t.toolset for t in got} == {"todo": "todo", "clarify": "clarify", "delegate_task": "delegation"}
    assert sets["coding"] == ["core", "todo", "clarify", "delegation"]


def test_children_start_when_the_parent_has_context_engine_tools(make_agent):
    from kernel import hookimpl
    from kernel.types import Tool

    class Engine(ContextEngine):
        def update_from_response(self, usage):
            pass

        def should_compress(self, messages):
            return False

        def compress(self, messages, *, agent, reason, notes):
            return messages

        def tools(self):
            return [Tool("engine_recall", "recall", {"type": "object", "properties": {}}, lambda a, c: "x")]

    class EnginePlugin:
        @hookimpl
        def register_context_engines(self, register):
            register("compressor", lambda agent: Engine())

    d = Dispatcher({"goal": "g"})
    agent = _delegating_agent(make_agent, d, plugins=(agent_tools, EnginePlugin()))
    assert "engine_recall" in agent.tools
    [child] = _tool_results(agent.run_conversation("go"))[0]["results"]
    assert child["status"] == "completed" and _tool_names(d.child_requests[0]) == ["engine_recall", "todo"]


def test_the_subagents_model_keys_are_read_one_by_one_so_a_distro_may_set_one():
    """delegation.model from a distro's overrides (a dotted key) was not seen: the block was read as one mapping."""
    from hermes.host.config import Config
    from plugins.auxiliary import provider_config

    config = Config({"delegation": {"max_iterations": 5, "api_mode": "chat_completions"}})
    config.overrides["delegation.model"] = "cheap-1"
    block = provider_config(config, "delegation", prefix="delegation")
    assert (block.model, block.api_mode) == ("cheap-1", "chat_completions")
    assert provider_config(Config({"delegation": {"max_iterations": 5}}), "delegation", prefix="delegation") is None


def test_a_subagents_flagged_command_is_refused_unless_config_approves_it_unasked(make_agent, caplog):
    """Nobody can answer a subagent's approval question while the parent's turn runs: refused, unless hermes-agent's
    delegation.subagent_auto_approve says yes (each said in the log); a command carrying a key is never approved."""
    from plugins import approval

    def child(request):
        if any(m["role"] == "tool" for m in request.messages):
            return "child done"
        return {"tool_calls": [("terminal", {"command": "echo LAUNCH"})]}

    for auto, ran in ((False, False), (True, True)):
        d = Dispatcher({"goal": "launch"}, child=child)
        agent = _delegating_agent(make_agent, d, plugins=(agent_tools, core_tools, approval), config={
            "delegation": {"subagent_auto_approve": auto}, "approvals": {"extra_patterns": {"launch": "LAUNCH"}}})
        agent.run_conversation("go")
        said = [m["content"] for m in d.child_requests[-1].messages if m["role"] == "tool"][0]
        assert ("nobody was available to approve it" in said) is not ran and ('"output": "LAUNCH' in said) is ran
        assert ("approved without asking (delegation.subagent_auto_approve)" in caplog.text) is ran


def test_auto_approval_never_says_yes_to_a_key_leaving():
    from plugins.approval import AutoApprove

    approver = AutoApprove("approvals.cron_mode: approve")
    assert approver.approve_tool_call("terminal", "This command carries the value of $K (a key)", "secret_value") \
        is None
    assert approver.approve_tool_call("terminal", "rm -rf (recursive delete)", "recursive_delete") == "once"
