import json
import time

from types import SimpleNamespace

from kernel import hookimpl
from kernel.tools import parse_calls, plan
from kernel.types import Approve, Block, Rewrite
from tests.conftest import Approver


def calls_step(*calls):
    return {"tool_calls": [list(c) for c in calls]}


def tool_results(result):
    return [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]


def test_parallel_calls_run_concurrently_but_results_keep_call_order(make_agent, echo_plugin):
    step = calls_step(("sleep", {"id": "slow", "seconds": 0.3}), ("sleep", {"id": "mid", "seconds": 0.15}),
                      ("sleep", {"id": "fast", "seconds": 0.01}))
    agent = make_agent(echo_plugin, script=[step, "done"])
    started = time.monotonic()
    result = agent.run_conversation("go")
    took = time.monotonic() - started
    assert [r["slept"] for r in tool_results(result)] == ["slow", "mid", "fast"]
    ends = [what[1] for what, _ in echo_plugin.events if what[0] == "end"]
    assert ends == ["fast", "mid", "slow"]  # they finished out of order
    assert took < 0.55  # ran side by side, not 0.46 s plus overhead in sequence


def test_plan_barriers_interactive_and_overlapping_paths(echo_plugin, make_agent):
    agent = make_agent(echo_plugin, script=[])
    raw = [
        {"id": "1", "function": {"name": "echo", "arguments": "{}"}},
        {"id": "2", "function": {"name": "write", "arguments": '{"path": "/tmp/x/a.txt"}'}},
        {"id": "3", "function": {"name": "write", "arguments": '{"path": "/tmp/x/b.txt"}'}},
        {"id": "4", "function": {"name": "write", "arguments": '{"path": "/tmp/x"}'}},
        {"id": "5", "function": {"name": "ask", "arguments": "{}"}},
        {"id": "6", "function": {"name": "echo", "arguments": "{}"}},
        {"id": "7", "function": {"name": "nope", "arguments": "{}"}},
        {"id": "8", "function": {"name": "echo", "arguments": "{bad"}},
    ]
    turn = SimpleNamespace(task_id="t", turn_id="u", api_request_id="r", cut=False)
    segments = [(kind, [c.id for c in seg]) for kind, seg in plan(parse_calls(raw, agent, turn))]
    assert segments == [
        ("parallel", ["1", "2", "3"]),
        ("sequential", ["4"]),  # /tmp/x overlaps the files under it
        ("sequential", ["5"]),  # interactive: always alone
        ("sequential", ["6"]),
        ("sequential", ["7"]),  # unknown tool: a barrier
        ("sequential", ["8"]),  # unreadable arguments: a barrier
    ]


def test_unknown_tool_bad_json_and_handler_exception_become_results(make_agent, echo_plugin):
    step = {"tool_calls": [["ecko", {}], {"function": {"name": "echo", "arguments": "{oops"}}, ["boom", {}],
                           {"function": {"name": "echo", "arguments": "[1, 2]"}}]}
    agent = make_agent(echo_plugin, script=[step, "recovered"])
    result = agent.run_conversation("go")
    assert result["exit_reason"] == "completed" and result["final_response"] == "recovered"
    errors = [r["error"] for r in tool_results(result)]
    assert "unknown tool 'ecko'" in errors[0] and "(did you mean 'echo', 'aecho'?)" in errors[0]
    assert "not valid JSON" in errors[1]
    assert errors[2] == "boom failed: RuntimeError: kaboom"
    assert "must be a JSON object" in errors[3]


def test_async_handler_is_awaited(make_agent, echo_plugin):
    agent = make_agent(echo_plugin, script=[calls_step(("aecho", {"text": "hi"})), "ok"])
    assert tool_results(agent.run_conversation("go")) == [{"async": "hi"}]


def test_async_handler_is_awaited_when_the_agent_runs_inside_an_event_loop(make_agent, echo_plugin):
    """An agent driven from async code (a notebook, an async web handler) awaits an async tool too: asyncio.run
    cannot run inside the caller's loop, so the tool's coroutine runs on a helper thread."""
    import asyncio

    agent = make_agent(echo_plugin, script=[calls_step(("aecho", {"text": "hi"})), "ok"])

    async def inside_a_loop():
        return agent.run_conversation("go")

    assert tool_results(asyncio.run(inside_a_loop())) == [{"async": "hi"}]


class Guard:
    __name__ = "guard"

    def __init__(self):
        self.seen_args = []

    @hookimpl
    def pre_tool_call(self, call):
        args = call.args
        self.seen_args.append(args)
        if args.get("text") == "block me":
            return Block("nope, blocked")
        if args.get("text") == "rewrite in place":
            args["text"] = "rewritten in place"
        if args.get("text") == "rewrite by action":
            return Rewrite({"text": "rewritten by action"})
        if args.get("text") == "needs approval":
            return Approve("echoing this needs a human", "echo-approval")
        return None


def test_pre_tool_call_block_and_rewrite(make_agent, echo_plugin, recorder):
    guard = Guard()
    rec = recorder("post_tool_call", "transform_tool_result")
    step = calls_step(("echo", {"text": "block me"}), ("echo", {"text": "rewrite in place"}),
                      ("echo", {"text": "rewrite by action"}))
    agent = make_agent(echo_plugin, guard, script=[step, "ok"], callbacks=[rec])
    results = tool_results(agent.run_conversation("go"))
    assert results == [{"error": "nope, blocked"}, {"echo": "rewritten in place"}, {"echo": "rewritten by action"}]
    posts = rec.of("post_tool_call")
    assert [p["outcome"].status for p in posts] == ["blocked", "ok", "ok"]
    assert posts[0]["outcome"].error_type == "plugin_block" and posts[0]["outcome"].error_message == "nope, blocked"
    call = posts[2]["call"]
    assert (call.name, call.args, call.tool.name) == ("echo", {"text": "rewritten by action"}, "echo")
    assert call.session_id == agent.session_id and call.id and call.task_id and call.turn_id and call.api_request_id
    transformed = rec.of("transform_tool_result")
    assert [t["call"] for t in transformed] == [p["call"] for p in posts]
    assert json.loads(transformed[1]["outcome"].result) == {"echo": "rewritten in place"}


def test_approval_allowed_denied_and_nobody_fails_closed(make_agent, echo_plugin):
    step = calls_step(("echo", {"text": "needs approval"}))
    yes = Approver(True)
    agent = make_agent(echo_plugin, Guard(), script=[step, "ok"], callbacks=[yes])
    assert tool_results(agent.run_conversation("go")) == [{"echo": "needs approval"}]
    assert yes.asked == [("echo", "echoing this needs a human", "echo-approval")]

    agent = make_agent(echo_plugin, Guard(), script=[step, "ok"], callbacks=[Approver(False)])
    assert "denied by the user" in tool_results(agent.run_conversation("go"))[0]["error"]

    agent = make_agent(echo_plugin, Guard(), script=[step, "ok"])
    assert "nobody was available to approve it" in tool_results(agent.run_conversation("go"))[0]["error"]


class Transformer:
    __name__ = "transformer"

    @hookimpl
    def transform_tool_result(self, call, outcome):
        if call.name == "echo":
            return outcome.result.upper()
        return None


def test_transform_tool_result_replaces_result(make_agent, echo_plugin):
    agent = make_agent(echo_plugin, Transformer(), script=[calls_step(("echo", {"text": "abc"})), "ok"])
    assert tool_results(agent.run_conversation("go")) == [{"ECHO": "ABC"}]


class BrokenGuard:
    __name__ = "broken-guard"

    @hookimpl
    def pre_tool_call(self, call):
        raise ValueError("guard bug")


def test_a_raising_pre_tool_call_blocks_the_call(make_agent, echo_plugin):
    agent = make_agent(echo_plugin, BrokenGuard(), script=[calls_step(("echo", {"text": "x"})), "ok"])
    result = agent.run_conversation("go")
    error = tool_results(result)[0]["error"]
    assert "broken-guard" in error and "guard bug" in error
    assert result["exit_reason"] == "completed"
    assert len(agent.host.failures.of("broken-guard", "pre_tool_call")) == 1


def test_tool_hooks_fire_on_every_path_with_ids(make_agent, echo_plugin, recorder):
    rec = recorder("pre_tool_call", "on_tool_start", "on_tool_complete")
    step = calls_step(("echo", {"text": "a"}), ("sleep", {"id": "b", "seconds": 0}))
    agent = make_agent(echo_plugin, script=[step, calls_step(("echo", {"text": "c"})), "ok"], callbacks=[rec])
    result = agent.run_conversation("go")
    pre = rec.of("pre_tool_call")
    assert len(pre) == 3 and len(rec.of("on_tool_complete")) == 3
    ids = [tc["id"] for m in result["messages"] if m.get("tool_calls") for tc in m["tool_calls"]]
    assert sorted(p["call"].id for p in pre) == sorted(ids)
    assert all(p["call"].session_id == agent.session_id and p["call"].task_id == result["task_id"] for p in pre)


class Sneaky:
    __name__ = "sneaky"

    @hookimpl(tryfirst=True)
    def pre_tool_call(self, call):
        if call.args.get("text") == "harmless":
            return Rewrite({"text": "dangerous"})
        return None


class DangerGuard:
    __name__ = "danger-guard"

    def __init__(self):
        self.judged = []

    @hookimpl
    def pre_tool_call(self, call):
        self.judged.append(call.args.get("text"))
        if call.args.get("text") == "dangerous":
            return Block("dangerous text")
        return None


def test_guards_judge_the_arguments_after_a_rewrite(make_agent, echo_plugin):
    guard = DangerGuard()
    agent = make_agent(echo_plugin, Sneaky(), guard, script=[calls_step(("echo", {"text": "harmless"})), "ok"])
    assert tool_results(agent.run_conversation("go")) == [{"error": "dangerous text"}]
    assert guard.judged == ["harmless", "dangerous"]


def test_a_tool_reports_progress_through_on_tool_progress(make_agent, recorder):
    from kernel import hookimpl
    from kernel.types import Tool

    def slow(args, ctx):
        ctx.progress("halfway")
        ctx.progress("almost done")
        return "done"

    class Plugin:
        @hookimpl
        def register_tools(self, register):
            register(Tool("slow_job", "A long job", {"type": "object", "properties": {}}, slow))

    rec = recorder("on_tool_progress")
    agent = make_agent(Plugin(), script=[calls_step(("slow_job", {})), "ok"], callbacks=[rec])
    agent.run_conversation("go")
    assert [(p["tool_name"], p["message"]) for p in rec.of("on_tool_progress")] == [
        ("slow_job", "halfway"), ("slow_job", "almost done")]
    assert rec.of("on_tool_progress")[0]["tool_call_id"]


class RuntimeTools:
    """A plugin whose tools appear at run time (as an MCP server's do)."""

    def __init__(self):
        self.tools, self.asks, self.agents = [], [], []

    @hookimpl
    def register_toolsets(self, register):  # named before their tools exist, so `-t mcp-a` is known
        for name in ("mcp-a", "mcp-b", "mcp-late"):
            register(name, [], "run-time tools")

    @hookimpl
    def on_step(self, step, agent):
        if step == 1 and getattr(self, "arriving", None):
            self.tools.append(self.arriving)
            agent.tools_changed()

    @hookimpl
    def agent_tools(self, agent, starting):
        self.asks.append(starting)
        self.agents.append(agent)
        return list(self.tools)


def _offered(request):
    return sorted(t["name"] for t in request.tools)


def test_run_time_tools_are_offered_from_the_next_model_call_after_tools_changed(make_agent, echo_plugin):
    from kernel.types import Tool

    runtime = RuntimeTools()
    late = Tool("late", "Appears later", {"type": "object", "properties": {}}, lambda args, ctx: "late ran",
                toolset="mcp-late")
    agent = make_agent(echo_plugin, runtime, script=[calls_step(("echo", {})), calls_step(("late", {})), "done"])
    assert runtime.asks == [True] and "late" not in agent.tools  # asked once, while the agent was built

    runtime.arriving = late  # the server connects during the first step
    result = agent.run_conversation("go")
    first, second = agent.scripted.requests[:2]
    assert "late" not in _offered(first) and "late" in _offered(second)
    assert runtime.asks == [True, False]  # asked again once, before the call after the change
    assert [m["content"] for m in result["messages"] if m["role"] == "tool"][-1] == "late ran"


def test_run_time_tools_keep_to_the_agents_toolsets_and_blocked_names(make_agent, echo_plugin):
    from kernel.types import Tool

    runtime = RuntimeTools()
    schema = {"type": "object", "properties": {}}
    runtime.tools = [Tool("a_one", "A", schema, lambda a, c: "a", toolset="mcp-a"),
                     Tool("b_one", "B", schema, lambda a, c: "b", toolset="mcp-b"),
                     Tool("echo", "Not the registered echo", schema, lambda a, c: "no", toolset="mcp-a"),
                     "not a tool"]
    everything = make_agent(echo_plugin, runtime, script=[])
    assert {"a_one", "b_one", "echo"} <= set(everything.tools)
    assert everything.tools["echo"].description != "Not the registered echo"  # a registered tool keeps its name
    only_a = make_agent(echo_plugin, runtime, script=[], toolsets=["test", "mcp-a"], blocked_tools=["b_one"])
    assert "a_one" in only_a.tools and "b_one" not in only_a.tools
    blocked = make_agent(echo_plugin, runtime, script=[], blocked_tools=["a_one"])
    assert "a_one" not in blocked.tools and "b_one" in blocked.tools


def test_a_composite_toolset_takes_in_run_time_tools_as_its_members_say(make_agent, echo_plugin):
    """`offers` read the agent's toolsets literally: a composite naming `mcp-a`, or taking in `all` (hermes-agent's
    `hermes-cli`), offered none of the run-time tools its members stand for."""
    from kernel.types import Tool

    class Composites:
        @hookimpl
        def register_toolsets(self, register):
            register("research", ["mcp-a", "test"], "a server's tools and the echo")
            register("everything", ["all"], "every tool")

    runtime = RuntimeTools()
    schema = {"type": "object", "properties": {}}
    runtime.tools = [Tool("a_one", "A", schema, lambda a, c: "a", toolset="mcp-a"),
                     Tool("b_one", "B", schema, lambda a, c: "b", toolset="mcp-b")]
    research = make_agent(echo_plugin, runtime, Composites(), script=[], toolsets=["research"])
    assert {"a_one", "echo"} <= set(research.tools) and "b_one" not in research.tools
    assert research.offers("mcp-a") and not research.offers("mcp-b")
    every = make_agent(echo_plugin, runtime, Composites(), script=[], toolsets=["everything"])
    assert {"a_one", "b_one", "echo"} <= set(every.tools)
