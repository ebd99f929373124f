"""Plugin isolation in-process: the guard, containment, deadlines, interrupts,
tool batches in three phases, tool-name clashes and async hooks.

This module also runs under the oldest and the newest pluggy that
pyproject.toml allows (tests/kernel/test_pluggy_versions.py)."""

from __future__ import annotations

import json
import logging
import threading
import time

import pluggy
import pytest

from hermes.host.config import Config
from hermes.host.isolation import WATCHDOG
from hermes.host.plugins import PluginHost
from kernel.messages import UNANSWERED
from kernel import hookimpl, hookspecs
from kernel.types import Approve, Block, Interrupted, Rewrite, Tool

from tests.conftest import Approver


@pytest.fixture(autouse=True)
def _fresh_watchdog():
    """Each test sets its own deadline; abandoned hooks of one test stay there."""
    before = WATCHDOG.timeout
    yield
    WATCHDOG.timeout = before


def _styles():
    """One hook implementation per parameter style, each recording what it got."""
    got = {}

    class Positional:
        __name__ = "positional"

        @hookimpl(specname="on_status")
        def hook(self, status, detail):
            got["positional"] = (status, detail)

    class Defaulted:
        __name__ = "defaulted"

        @hookimpl(specname="on_status")
        def hook(self, status, detail="(default)", agent=None):
            got["defaulted"] = (status, detail, agent is not None)

    class KeywordOnly:
        __name__ = "keyword-only"

        @hookimpl(specname="on_status")
        def hook(self, status, *, detail="(default)"):
            got["keyword-only"] = (status, detail)

    class VarKeyword:
        __name__ = "var-keyword"

        @hookimpl(specname="on_status")
        def hook(self, status, **rest):
            got["var-keyword"] = (status, sorted(rest))

    def module_style_function(status, detail="(default)"):
        got["function"] = (status, detail)

    fn_plugin = type("FnPlugin", (), {"__name__": "function"})()
    fn_plugin.on_status = hookimpl(module_style_function)
    return got, [Positional(), Defaulted(), KeywordOnly(), VarKeyword(), fn_plugin]


def test_every_parameter_style_behaves_as_under_bare_pluggy(make_agent):
    """What each style receives is what pluggy itself passes it (pluggy 1.7 passes
    defaulted parameters by keyword; older ones leave the default)."""
    bare_got, bare_plugins = _styles()
    pm = pluggy.PluginManager("hermes")
    pm.add_hookspecs(hookspecs)
    for plugin in bare_plugins:
        pm.register(plugin, name=plugin.__name__)
    pm.hook.on_status(status="s", detail="d", agent=object())

    got, plugins = _styles()
    agent = make_agent(*plugins, script=["ok"])
    agent.emit("on_status", status="s", detail="d")
    assert got == bare_got
    assert set(got) == {"positional", "defaulted", "keyword-only", "var-keyword", "function"}
    assert got["positional"] == ("s", "d")


def test_a_registration_hook_with_a_defaulted_config_gets_what_pluggy_gives():
    seen = {}

    class Late:
        __name__ = "late"

        @hookimpl
        def register_tools(self, register, config=None):
            seen["config"] = config
            register(Tool("late_tool", "t", {"type": "object", "properties": {}}, lambda a, c: "ok"))

    cfg = Config({})
    host = PluginHost.from_objects([Late()], cfg)
    assert host.registry.tools["late_tool"].plugin == "late"
    passes_defaults = tuple(int(p) for p in pluggy.__version__.split(".")[:2]) >= (1, 7)
    assert seen["config"] is (cfg if passes_defaults else None)


class Raiser:
    """Raises ``exc`` from pre_llm_call and on_session_start."""

    def __init__(self, exc):
        self.exc, self.__name__ = exc, f"raises-{type(exc).__name__}"

    @hookimpl
    def pre_llm_call(self):
        raise self.exc

    @hookimpl
    def on_session_start(self):
        raise self.exc


@pytest.mark.parametrize("exc", [SystemExit(3), SystemExit("bye"), GeneratorExit(), RuntimeError("bug")],
                         ids=["exit-code", "exit-text", "generator-exit", "exception"])
def test_base_exceptions_in_hooks_are_contained_and_attributed(make_agent, exc, caplog):
    plugin = Raiser(exc)
    agent = make_agent(plugin, script=["fine"])
    with caplog.at_level(logging.WARNING, "hermes.plugins"):
        result = agent.run_conversation("hi")
    assert result["exit_reason"] == "completed" and result["final_response"] == "fine"
    failures = agent.host.failures
    assert {(f.plugin, f.hook) for f in failures.seen} == {(plugin.__name__, "pre_llm_call"),
                                                          (plugin.__name__, "on_session_start")}
    assert type(exc).__name__ in failures.of(plugin.__name__, "pre_llm_call")[-1].error
    assert plugin.__name__ in caplog.text


def test_a_watch_sees_the_failures_of_its_own_thread_and_quiet_ones_are_not_logged(caplog):
    class Broken:
        __name__ = "broken-watch"

        @hookimpl
        def session_info(self, session_id, agent):
            raise RuntimeError(f"no title for {session_id}")

    host = PluginHost.from_objects([Broken()], Config({}))
    other: list = []
    with host.failures.watch(quiet=True) as seen:
        worker = threading.Thread(target=lambda: other.append(host.pm.hook.session_info(session_id="b", agent=None)))
        worker.start()
        worker.join()
        assert host.pm.hook.session_info(session_id="a", agent=None) is None
    assert [f.error for f in seen.failures] == ["RuntimeError: no title for a"]  # not the other thread's
    assert list(seen.plugins) == ["broken-watch"]
    assert [f.error for f in host.failures.of("broken-watch", "session_info")] == [
        "RuntimeError: no title for b", "RuntimeError: no title for a"]  # both kept
    assert "no title for b" in caplog.text and "no title for a" not in caplog.text  # the quiet one: the caller says it


def test_a_plugin_whose_register_hookspecs_fails_is_not_loaded():
    class Specs:
        __name__ = "bad-specs"

        @hookimpl
        def register_hookspecs(self, add):
            raise ValueError("spec bug")

    host = PluginHost.from_objects([Specs()], Config({}))
    assert host.pm.get_plugin("bad-specs") is None
    assert host.record("bad-specs").error == "register_hookspecs failed: ValueError: spec bug"


def test_a_plugin_raising_keyboard_interrupt_is_not_the_user(make_agent, monkeypatch):
    """Under the hermes command (its own SIGINT handler) a KeyboardInterrupt a
    plugin raises is just a failure; a real Ctrl+C arrives as Interrupted."""
    import signal

    previous = signal.signal(signal.SIGINT, lambda *a: None)
    try:
        agent = make_agent(Raiser(KeyboardInterrupt()), script=["fine"])
        result = agent.run_conversation("hi")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result["exit_reason"] == "completed"
    assert agent.host.failures.of("raises-KeyboardInterrupt", "pre_llm_call")


WRONG_ANSWERS = {  # hook -> an answer of the wrong type
    "choose_provider": "openai", "on_provider_error": "retry", "pre_llm_call": 42, "system_prompt": {"x": 1},
    "transform_tool_result": 5, "transform_llm_output": 7, "pre_tool_call": "block", "approve_tool_call": "yes",
    "resolve_api_mode": 42,
}


@pytest.mark.parametrize("hook", sorted(WRONG_ANSWERS))
def test_an_answer_of_the_wrong_type_does_not_end_the_turn(make_agent, echo_plugin, hook, caplog):
    """choose_provider answering a string used to end run_conversation itself
    in an AttributeError. Every answer the loop reads is checked: a wrong one
    counts as no answer."""
    import inspect

    params = ", ".join(inspect.signature(getattr(hookspecs, hook)).parameters)
    scope: dict = {"ANSWER": WRONG_ANSWERS[hook]}
    exec(f"def {hook}(self, {params}):\n    return ANSWER\n", scope)  # noqa: S102
    wrong = type("Wrong", (), {"__name__": "wrong", hook: hookimpl(scope[hook])})()
    failing = hook == "on_provider_error"
    script = [{"error": {"reason": "server", "status_code": 500}}] if failing else \
        [{"tool_calls": [["echo", {"text": "hi"}]]}, "done"]
    agent = make_agent(echo_plugin, wrong, script=script)
    result = agent.run_conversation("go")
    if failing:  # no decision: the call's failure is the turn's error, said in one line
        assert result.exit_reason == "error" and result.error == "scripted:test-model: server (500): scripted failure"
    else:
        assert result.exit_reason == "completed" and result.final_response == "done", result.error
        ran = json.loads(result.messages[2]["content"])
        # a guard's answer that cannot be read blocks the call (fails closed); the others are ignored
        assert ran == ({"error": "blocked: a pre_tool_call implementation answered str, not Block, Approve or Rewrite"}
                       if hook == "pre_tool_call" else {"echo": "hi"})
    assert not any(r.exc_info for r in caplog.records)  # nothing reached the turn's last-resort handler


def test_the_users_interrupt_passes_every_guard(make_agent):
    class Swallower:
        __name__ = "swallower"

        @hookimpl
        def pre_llm_call(self, agent):
            agent.interrupt()
            try:
                raise Interrupted()
            except BaseException:  # a plugin that swallows everything
                return {"context": "swallowed"}

    agent = make_agent(Swallower(), script=["never"])
    result = agent.run_conversation("hi")
    assert result["exit_reason"] == "interrupted_by_user"
    assert agent.scripted.requests == []
    assert not agent.host.failures.seen  # an interrupt is not the plugin's failure


class Sleeper:
    """``hook`` sleeps ``seconds`` (recording each entry), then answers."""

    def __init__(self, hook, seconds, answer=None):
        self.__name__ = f"sleepy-{hook}"
        self.entered, self.seconds, self.answer = [], seconds, answer

        def sleep(agent):
            self.entered.append(time.monotonic())
            time.sleep(self.seconds)
            return self.answer

        setattr(self, hook, hookimpl(specname=hook)(sleep))


@pytest.mark.parametrize("key", ["hook_timeout", "hook_callback_timeout"])  # the second is hermes-agent's name
def test_a_hook_past_its_deadline_is_abandoned_and_not_called_again(make_agent, key):
    import plugins.hermes_compat  # declares hermes-agent's name (the host knows only its own)

    hung = Sleeper("pre_llm_call", 60, answer={"context": "too late"})
    compat = [plugins.hermes_compat] if key == "hook_callback_timeout" else []
    agent = make_agent(hung, *compat, script=["one", "two"], config={"plugins": {key: 0.5}})
    started = time.monotonic()
    result = agent.run_conversation("hi")
    assert time.monotonic() - started < 5
    assert result["exit_reason"] == "completed" and result["final_response"] == "one"
    assert "too late" not in json.dumps(agent.scripted.requests[0].messages)
    [failure] = agent.host.failures.of(hung.__name__, "pre_llm_call")
    assert "timed out after 0.5s" in failure.error
    agent.run_conversation("again")
    assert len(hung.entered) == 1  # abandoned: not called again in this process


def test_the_watchdog_never_walks_another_threads_stack(make_agent, monkeypatch):
    """Walking other threads' frames (sys._current_frames, f_back) crashed
    CPython 3.11 with a SIGSEGV in the watchdog thread during our test run.
    Deadlines come from the table of guarded calls alone: a hook hung on a
    worker thread is still abandoned, and the table is empty afterwards."""
    import sys

    walked = []
    monkeypatch.setattr(sys, "_current_frames", lambda: walked.append(1) or {})
    hung = Sleeper("pre_llm_call", 0.0)

    def spin(agent):  # Python work: off the main thread an abandonment lands at the next line, not in a sleep
        end = time.monotonic() + 30
        while time.monotonic() < end:
            pass
        return {"context": "too late"}

    hung.pre_llm_call = hookimpl(specname="pre_llm_call")(spin)
    agent = make_agent(hung, script=["one"], config={"plugins": {"hook_timeout": 0.5}})
    box = {}
    worker = threading.Thread(target=lambda: box.update(result=agent.run_conversation("hi")))
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and box["result"]["final_response"] == "one"
    assert "timed out after 0.5s" in agent.host.failures.of(hung.__name__, "pre_llm_call")[-1].error
    assert walked == [] and not any(slot[0] for slot in WATCHDOG.slots.values()) and WATCHDOG.marks == {}


def test_a_call_cut_short_inside_plugin_code_leaves_no_entry_behind(make_agent):
    """An asynchronous exception can land between a guard putting its entry in the thread's slot and its ``try``;
    when the plugin swallows it, the guard around that plugin's code puts its own outer entry back, or the
    watchdog would see a call that never ends and time the thread out later."""
    from hermes.host.isolation import guard_function, Failures

    failures, ghost = Failures(), (("ghost", "on_status"), Failures())

    def strand():  # what a cut-short inner guard leaves
        slot = WATCHDOG.slot()
        slot[0] = (ghost, slot[0])

    def inner(status, detail):
        strand()
        raise RuntimeError("cut short")

    guarded_inner = guard_function(inner, "inner", "on_status", failures)

    def outer(status, detail):
        assert WATCHDOG.current_plugin() == "outer"
        guarded_inner(status, detail)  # contained: the inner guard drops its own entry and the stray above it
        assert WATCHDOG.current_plugin() == "outer"
        strand()
        return "outer's answer"

    guarded = guard_function(outer, "outer", "on_status", failures)
    assert guarded("s", "d") == "outer's answer"
    assert WATCHDOG.slot() == [None] and [f.plugin for f in failures.seen] == ["inner"]
    assert WATCHDOG.current_plugin() == ""


def test_a_hook_that_finishes_late_has_its_answer_ignored(make_agent):
    late = Sleeper("pre_llm_call", 0.0, answer={"context": "late context"})

    def busy(agent):  # pure Python work that overruns (no sleep to interrupt)
        late.entered.append(time.monotonic())
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            try:
                pass
            except BaseException:
                pass
        return {"context": "late context"}

    late.pre_llm_call = hookimpl(specname="pre_llm_call")(busy)
    agent = make_agent(late, script=["ok"], config={"plugins": {"hook_timeout": 0.5}})
    result = agent.run_conversation("hi")
    assert result["final_response"] == "ok"
    assert "late context" not in json.dumps(agent.scripted.requests[0].messages)
    assert "timed out" in agent.host.failures.of(late.__name__, "pre_llm_call")[-1].error


def test_a_guard_past_its_deadline_blocks_the_call(make_agent, echo_plugin):
    guard = Sleeper("pre_tool_call", 60)
    agent = make_agent(echo_plugin, guard, config={"plugins": {"hook_timeout": 0.5}},
                       script=[{"tool_calls": [["echo", {"text": "a"}], ["echo", {"text": "b"}]]}, "done"])
    result = agent.run_conversation("go")
    tool_results = [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]
    assert all("blocked" in r["error"] and "timed out" in r["error"] for r in tool_results)
    assert len(guard.entered) == 1  # the second call is blocked at once, not after another 0.5 s


def test_a_hung_streaming_hook_does_not_hold_the_model_call(make_agent, recorder):
    """Streamed events reach the hooks on the agent's thread while the call runs
    on its own: a hook that hangs is abandoned at its deadline and the answer is
    whole."""

    class Stuck:
        __name__ = "stuck-stream"
        calls = 0

        @hookimpl
        def on_stream_delta(self, text):
            Stuck.calls += 1
            time.sleep(60)

    rec = recorder("on_stream_delta")
    agent = make_agent(Stuck(), script=["the whole answer", "next"], stream=True, callbacks=[rec],
                       config={"plugins": {"hook_timeout": 0.5}})
    started = time.monotonic()
    result = agent.run_conversation("hi")
    assert time.monotonic() - started < 5
    assert result["exit_reason"] == "completed" and result["final_response"] == "the whole answer"
    assert result["api_calls"] == 1 and Stuck.calls == 1
    assert "timed out" in agent.host.failures.of("stuck-stream", "on_stream_delta")[-1].error
    assert agent.run_conversation("again")["final_response"] == "next"
    assert Stuck.calls == 1  # abandoned for good
    assert "".join(c["text"] for c in rec.of("on_stream_delta")).endswith("next")  # the others still stream


def test_an_interrupt_never_waits_for_a_hook(make_agent):
    hung = Sleeper("pre_llm_call", 60)
    agent = make_agent(hung, script=["never"], config={"plugins": {"hook_timeout": 30}})
    threading.Timer(0.3, agent.interrupt).start()
    started = time.monotonic()
    result = agent.run_conversation("hi")
    assert time.monotonic() - started < 2
    assert result["exit_reason"] == "interrupted_by_user" and agent.scripted.requests == []
    assert not agent.host.failures.seen


def test_async_hooks_are_awaited_under_the_same_deadline(make_agent):
    import asyncio

    class Async:
        __name__ = "async-plugin"

        @hookimpl
        async def pre_llm_call(self):
            await asyncio.sleep(0.01)
            return {"context": "from a coroutine"}

        @hookimpl
        async def on_session_start(self):
            await asyncio.sleep(60)

    agent = make_agent(Async(), script=["ok"], config={"plugins": {"hook_timeout": 0.5}})
    started = time.monotonic()
    result = agent.run_conversation("hi")
    assert time.monotonic() - started < 5 and result["final_response"] == "ok"
    assert "from a coroutine" in json.dumps(agent.scripted.requests[0].messages)
    assert "timed out" in agent.host.failures.of("async-plugin", "on_session_start")[-1].error


def test_a_wrapper_that_fails_before_yielding_does_not_break_the_hook(make_agent):
    class Wrapper:
        __name__ = "bad-wrapper"

        @hookimpl(wrapper=True)
        def pre_llm_call(self):
            raise RuntimeError("wrapper bug")
            yield  # noqa: unreachable; makes it a generator

    class Context:
        __name__ = "context"

        @hookimpl
        def pre_llm_call(self):
            return {"context": "still here"}

    agent = make_agent(Context(), Wrapper(), script=["ok"])
    result = agent.run_conversation("hi")
    assert result["final_response"] == "ok"
    assert "still here" in json.dumps(agent.scripted.requests[0].messages)
    assert "wrapper bug" in agent.host.failures.of("bad-wrapper", "pre_llm_call")[-1].error


# ------------------------------------------------------------ tool batches


def test_decisions_are_serial_and_the_plan_uses_the_rewritten_arguments(make_agent, echo_plugin):
    """Two parallel writes to different paths, rewritten to one path, must not
    run at the same time; every decision runs on the agent's thread, in order."""
    decided = []

    class Rewriter:
        __name__ = "rewriter"

        @hookimpl
        def pre_tool_call(self, call):
            decided.append((call.id, threading.current_thread() is threading.main_thread()))
            if call.name == "write":
                return Rewrite({"path": "same.txt"})

    calls = [["write", {"path": "a.txt"}, "c1"], ["write", {"path": "b.txt"}, "c2"], ["echo", {"text": "x"}, "c3"]]
    agent = make_agent(echo_plugin, Rewriter(), script=[{"tool_calls": calls}, "done"])
    agent.run_conversation("go")
    # in call order; a rewritten call is judged once more on its final arguments
    assert [call for call, _ in decided] == ["c1", "c1", "c2", "c2", "c3"]
    assert all(on_main for _, on_main in decided)
    writes = [(what, at) for what, at in echo_plugin.events if what[0] == "write"]
    assert [what for what, _ in writes] == [("write", "same.txt"), ("write", "same.txt")]
    assert writes[1][1] - writes[0][1] >= 0.045  # the second waited for the first


def test_approval_questions_are_never_asked_at_once(make_agent, echo_plugin):
    active, peak, asked = [0], [0], []
    lock = threading.Lock()

    class Careful(Approver):
        @hookimpl
        def approve_tool_call(self, tool_name, args, message):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            asked.append(args["text"])
            time.sleep(0.05)
            with lock:
                active[0] -= 1
            return True

    class AskFirst:
        __name__ = "ask-first"

        @hookimpl
        def pre_tool_call(self, call):
            return Approve("may I?") if call.name == "echo" else None

    calls = [["echo", {"text": t}] for t in ("one", "two", "three")]
    agent = make_agent(echo_plugin, AskFirst(), callbacks=[Careful(answer=True)],
                       script=[{"tool_calls": calls}, "done"])
    result = agent.run_conversation("go")
    assert peak[0] == 1 and asked == ["one", "two", "three"]
    outs = [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]
    assert outs == [{"echo": "one"}, {"echo": "two"}, {"echo": "three"}]


def test_post_tool_call_fires_once_per_call_on_every_outcome(make_agent, echo_plugin, recorder):
    rec = recorder("post_tool_call")

    class Blocker:
        __name__ = "blocker"

        @hookimpl
        def pre_tool_call(self, call):
            return Block("no") if call.name == "sleep" else None

    calls = [["echo", {"text": "a"}, "ok"], ["boom", {}, "raises"], ["nope", {}, "unknown"],
             ["sleep", {"id": 1}, "blocked"], {"id": "badjson", "function": {"name": "echo", "arguments": "{"}}]
    agent = make_agent(echo_plugin, Blocker(), callbacks=[rec], script=[{"tool_calls": calls}, "done"])
    agent.run_conversation("go")
    seen = [(c["call"].id, c["outcome"].status) for c in rec.of("post_tool_call")]
    assert seen == [("ok", "ok"), ("raises", "error"), ("unknown", "error"), ("blocked", "blocked"),
                    ("badjson", "error")]


def test_an_interrupt_during_a_batch_leaves_every_call_answered(make_agent, echo_plugin):
    class Interrupter:
        __name__ = "interrupter"

        @hookimpl
        def pre_tool_call(self, call, agent):
            if call.name == "sleep":
                agent.interrupt()

    calls = [["echo", {"text": "a"}, "c1"], ["sleep", {"id": 1}, "c2"], ["echo", {"text": "b"}, "c3"]]
    agent = make_agent(echo_plugin, Interrupter(), script=[{"tool_calls": calls}, "never"])
    result = agent.run_conversation("go")
    assert result["exit_reason"] == "interrupted_by_user"
    tools = [m for m in result["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["c1", "c2", "c3"]
    assert all("interrupted" in m["content"] for m in tools)  # c1 had not run yet: decisions come first


def test_a_tool_that_calls_sys_exit_is_an_error_result(make_agent):
    class Exiter:
        __name__ = "exiter"

        @hookimpl
        def register_tools(self, register):
            def leave(args, ctx):
                raise SystemExit(2)

            register(Tool("leave", "x", {"type": "object", "properties": {}}, leave))

    agent = make_agent(Exiter(), script=[{"tool_calls": [["leave", {}]]}, "after"])
    result = agent.run_conversation("go")
    assert result["final_response"] == "after"
    assert "SystemExit" in next(m["content"] for m in result["messages"] if m["role"] == "tool")


# ------------------------------------------------------------ compression


def test_ctrl_c_during_the_summary_call_leaves_history_and_session_alone(make_agent):
    from plugins import compressor
    from plugins.compressor import SUMMARY_INSTRUCTIONS

    small = {"model_context_length": 1024, "compression": {"threshold": 0.5, "protect_first_n": 1, "protect_last_n": 2}}
    holder = {}

    def model(request):
        if request.messages and request.messages[0].get("content") == SUMMARY_INSTRUCTIONS:
            threading.Timer(0.2, holder["agent"].interrupt).start()
            time.sleep(3)
            return "SUMMARY"
        return "answer " + "z" * 600

    agent = holder["agent"] = make_agent(compressor, script=[model] * 6, config=small)
    agent.chat("question 0 " + "q" * 600)
    agent.chat("question 1 " + "q" * 600)
    session, before = agent.session_id, [dict(m) for m in agent.messages]
    started = time.monotonic()
    result = agent.run_conversation("question 2 " + "q" * 600)
    assert time.monotonic() - started < 2
    assert result["exit_reason"] == "interrupted_by_user"
    assert agent.session_id == session and result["session_id"] == session
    assert agent.messages[:-2] == before and agent.messages[-2]["content"].startswith("question 2")
    assert agent.messages[-1] == {"role": "assistant", "content": UNANSWERED}  # the unanswered prompt stays a turn of its own
    assert agent.context_engine.fallback_count == 0  # no fallback summary replaced the history
    holder["agent"] = None  # the next summary call is not interrupted
    agent.context_engine.summarize = lambda text: "SUMMARY"
    started = time.monotonic()
    assert agent.run_conversation("question 3")["exit_reason"] == "completed"
    assert time.monotonic() - started < 1.5  # the abandoned call's thread was not reused


# ------------------------------------------------------------ tool-name clashes


def _tool_plugin(name, tool="shared_tool"):
    class P:
        @hookimpl
        def register_tools(self, register):
            register(Tool(tool, f"from {name}", {"type": "object", "properties": {}}, lambda a, c: name))

    plugin = P()
    plugin.__name__ = name
    return plugin


def test_a_tool_name_clash_is_a_warning_and_the_user_can_choose(caplog):
    with caplog.at_level(logging.WARNING, "hermes.plugins"):
        host = PluginHost.from_objects([_tool_plugin("first"), _tool_plugin("second")], Config({}))
        reg = host.registry
    assert reg.tools["shared_tool"].plugin == "first"
    assert [t.plugin for t in reg.shadowed["shared_tool"]] == ["second"]
    assert "'shared_tool' is registered by plugins 'second', 'first'; using 'first'" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, "hermes.plugins"):
        chosen = PluginHost.from_objects([_tool_plugin("first"), _tool_plugin("second")],
                                         Config({"tools": {"prefer": {"shared_tool": "second"}}})).registry
    assert chosen.tools["shared_tool"].plugin == "second" and caplog.text == ""  # the user chose: no warning


def test_waiting_for_a_person_or_a_model_call_is_not_overrunning(make_agent, echo_plugin):
    """The deadline is for the plugin's own work: a person answering the
    approval question, or a model call the kernel makes for a hook, may take
    longer."""

    class SlowPerson(Approver):
        @hookimpl
        def approve_tool_call(self, tool_name, args, message):
            time.sleep(1.0)
            return True

    class AskFirst:
        __name__ = "ask-first"

        @hookimpl
        def pre_tool_call(self):
            return Approve("may I?")

    class Summarizer:
        __name__ = "summarizer"

        @hookimpl
        def pre_llm_call(self, agent, is_first_turn):
            if is_first_turn:
                return {"context": "note: " + agent.complete_once([{"role": "user", "content": "summarize"}])}

    config = {"plugins": {"hook_timeout": 0.5}}
    script = [{"content": "a slow summary", "delay": 1.0}, {"tool_calls": [["echo", {"text": "a"}]]}, "done"]
    agent = make_agent(echo_plugin, AskFirst(), Summarizer(), callbacks=[SlowPerson(answer=True)],
                       script=script, config=config)
    result = agent.run_conversation("go")
    assert result["final_response"] == "done"
    assert not agent.host.failures.seen
    assert "note: a slow summary" in json.dumps(agent.scripted.requests[1].messages)
    assert json.loads(next(m["content"] for m in result["messages"] if m["role"] == "tool")) == {"echo": "a"}
