import threading
import time

import pytest

from hermes.host.config import Config
from hermes.host.plugins import PluginHost
from kernel import hookimpl
from kernel.protocols import ContextEngine
from kernel.agent import Agent, AgentError
from kernel.messages import UNANSWERED, validate
from kernel.types import (
    Compress,
    GiveUp,
    ProviderConfig,
    ProviderError,
    RefreshCredentials,
    Retry,
    SwitchProvider,
)

LIFECYCLE = ("on_session_start", "system_prompt", "pre_llm_call", "pre_api_request", "post_api_request",
             "post_llm_call", "transform_llm_output", "on_session_end", "on_step", "append_messages",
             "on_session_finalize", "on_stream_delta", "on_thinking", "on_status")


def test_turn_lifecycle_order_and_result(make_agent, echo_plugin, recorder):
    rec = recorder(*LIFECYCLE)
    agent = make_agent(echo_plugin, script=[{"tool_calls": [["echo", {"text": "x"}]]}, "the answer"], callbacks=[rec])
    result = agent.run_conversation("question", task_id="task-1")
    assert result["final_response"] == "the answer"
    assert result["exit_reason"] == "completed" and result["task_id"] == "task-1"
    assert result["api_calls"] == 2 and result["usage"]["total_tokens"] == 30
    assert result["model"] == "test-model" and result["session_id"] == agent.session_id
    names = [n for n in rec.names() if n not in ("on_stream_delta", "on_thinking", "on_status")]
    assert names == [
        "on_session_start", "system_prompt", "append_messages", "pre_llm_call",
        # the assistant message with its tool calls is stored before the tools run, the results with the answer
        "pre_api_request", "post_api_request", "append_messages", "on_step",
        "pre_api_request", "post_api_request", "on_step",
        "transform_llm_output", "append_messages", "post_llm_call", "on_session_end",
    ]
    end = rec.of("on_session_end")[0]
    assert end["completed"] is True and end["interrupted"] is False and end["task_id"] == "task-1"
    assert "".join(d["text"] for d in rec.of("on_stream_delta")) == "the answer"
    stored = [m for batch in rec.of("append_messages") for m in batch["messages"]]
    assert stored == result["messages"]
    validate(result["messages"])
    # second turn: no new session start, session end fires again (every turn)
    agent.scripted.steps.append("again")
    agent.run_conversation("more")
    assert rec.names().count("on_session_start") == 1 and rec.names().count("on_session_end") == 2
    agent.close()
    assert rec.of("on_session_finalize") == [{"session_id": agent.session_id, "platform": "cli",
                                              "reason": "shutdown", "agent": agent}]


class Context:
    __name__ = "context"

    @hookimpl
    def system_prompt(self):
        return "You are tested."

    @hookimpl
    def pre_llm_call(self, user_message):
        return {"context": f"remember: {user_message} matters"}


def test_system_prompt_cached_and_context_is_ephemeral(make_agent):
    agent = make_agent(Context(), script=["a", "b"], config={"agent": {"system_prompt": "Base identity."}})
    result = agent.run_conversation("first")
    sent = agent.scripted.requests[0].messages
    assert sent[0] == {"role": "system", "content": "Base identity.\n\nYou are tested."}
    assert sent[1]["content"] == "first\n\nremember: first matters"
    assert result["messages"][0] == {"role": "user", "content": "first"}  # not stored
    agent.run_conversation("second")
    sent2 = agent.scripted.requests[1].messages
    assert sent2[0] is not None and sent2[0]["content"] == sent[0]["content"]
    assert sent2[1]["content"] == "first"  # the old turn's context is gone
    assert sent2[3]["content"] == "second\n\nremember: second matters"


class Shouter:
    __name__ = "shouter"

    @hookimpl
    def transform_llm_output(self, response_text):
        return response_text.upper()


def test_transform_llm_output_replaces_answer(make_agent):
    agent = make_agent(Shouter(), script=["quiet"])
    result = agent.run_conversation("x")
    assert result["final_response"] == "QUIET" and result["messages"][-1]["content"] == "QUIET"


def test_interrupt_during_slow_model_call(make_agent, recorder):
    rec = recorder("on_stream_delta", "on_session_end")
    agent = make_agent(script=[{"content": "never shown", "delay": 5}], callbacks=[rec])
    timer = threading.Timer(0.2, agent.interrupt, kwargs={"message": "stop, do this instead"})
    timer.start()
    started = time.monotonic()
    result = agent.run_conversation("slow please")
    took = time.monotonic() - started
    assert result["exit_reason"] == "interrupted_by_user"
    assert took - 0.2 < 0.1, took  # the wait ends at once, well within 100 ms
    assert result["interrupt_message"] == "stop, do this instead"
    assert result["messages"] == [{"role": "user", "content": "slow please"}, {"role": "assistant", "content": UNANSWERED}]  # nothing partial
    assert rec.of("on_stream_delta") == []
    assert rec.of("on_session_end")[0]["interrupted"] is True
    # the next turn works and the history stays valid
    agent.scripted.steps.append("fine")
    again = agent.run_conversation("stop, do this instead")
    assert again["final_response"] == "fine"
    assert again["messages"][2] == {"role": "user", "content": "stop, do this instead"}  # on its own, not glued
    validate(again["messages"])


def test_redirect_enters_history_at_next_iteration(make_agent, echo_plugin):
    agent = make_agent(echo_plugin, script=[{"tool_calls": [["sleep", {"id": "1", "seconds": 0.2}]]}, "ok"])
    threading.Timer(0.05, agent.redirect, args=("also check the tests",)).start()
    result = agent.run_conversation("work")
    roles = [m["role"] for m in result["messages"]]
    assert roles == ["user", "assistant", "tool", "user", "assistant"]
    assert result["messages"][3]["content"] == "also check the tests"
    validate(result["messages"])


class Policy:
    __name__ = "policy"

    def __init__(self, decisions):
        self.decisions, self.failures = list(decisions), []

    @hookimpl
    def on_provider_error(self, failure):
        self.failures.append(failure)
        return self.decisions.pop(0) if self.decisions else None


def test_policy_retry_then_success_fires_api_hooks_every_time(make_agent, recorder):
    rec = recorder("pre_api_request", "api_request_error", "post_api_request")
    err = ProviderError("overloaded", reason="server", status_code=529)
    policy = Policy([Retry(0.01)])
    agent = make_agent(policy, script=[err, "ok"], callbacks=[rec])
    result = agent.run_conversation("x")
    assert result["final_response"] == "ok" and result["api_calls"] == 2
    assert len(rec.of("pre_api_request")) == 2
    errs = rec.of("api_request_error")
    assert len(errs) == 1 and errs[0]["error"] is err and errs[0]["attempt"] == 1
    assert errs[0]["call"].number == 1 and errs[0]["call"].duration >= 0
    (post,) = rec.of("post_api_request")
    assert post["call"].number == 2 and post["response"].content == "ok" and post["call"].ended_at >= post["call"].started_at
    assert policy.failures[0].attempt == 1 and policy.failures[0].error is err


def test_no_policy_means_give_up_with_error(make_agent):
    agent = make_agent(script=[ProviderError("bad key", reason="auth", status_code=401)])
    result = agent.run_conversation("x")
    assert result["exit_reason"] == "error" and "bad key" in result["error"]
    assert result["final_response"] is None


def test_switch_provider_continues_on_the_fallback(make_agent):
    from plugins_providers.scripted import ScriptedProvider

    backup = ScriptedProvider(["from backup"])

    class Backup:
        __name__ = "backup"

        @hookimpl
        def register_model_providers(self, register):
            register("backup", lambda cfg: backup)

    target = ProviderConfig(model="b-model", api_mode="backup")
    agent = make_agent(Backup(), Policy([SwitchProvider(target)]), script=[ProviderError("429", reason="rate_limit")])
    result = agent.run_conversation("x")
    assert result["final_response"] == "from backup"
    assert result["model"] == "b-model" and result["provider"] == "backup:b-model"
    assert backup.requests[0].model == "b-model"


def test_refresh_credentials_then_retry(make_agent):
    calls = []

    class Refreshing:
        __name__ = "refreshing"

        @hookimpl
        def register_model_providers(self, register):
            class P:
                def complete(self, request, emit):
                    calls.append("call")
                    if calls.count("refresh") == 0:
                        raise ProviderError("expired", reason="auth", status_code=401)
                    from kernel.types import ModelResponse

                    return ModelResponse(content="fresh")

                def refresh_credentials(self):
                    calls.append("refresh")
                    return True

            register("refreshing", lambda cfg: P())

    agent = make_agent(Refreshing(), Policy([RefreshCredentials(), RefreshCredentials()]), api_mode="refreshing")
    assert agent.run_conversation("x")["final_response"] == "fresh"
    assert calls == ["call", "refresh", "call"]


def test_optional_methods_come_from_the_protocols_and_a_provider_without_them_is_contained(make_agent, caplog):
    from kernel.protocols import Provider
    from kernel.types import ModelResponse

    calls = []

    class Plain(Provider):  # only complete(): refresh_credentials and close are the Protocol's defaults
        def complete(self, request, emit):
            calls.append("call")
            if len(calls) == 1:
                raise ProviderError("expired", reason="auth", status_code=401)
            return ModelResponse(content="second try")

    class Bare:  # no base class, no optional method
        def complete(self, request, emit):
            raise ProviderError("expired", reason="auth", status_code=401)

    class Providers:
        __name__ = "providers"

        @hookimpl
        def register_model_providers(self, register):
            register("plain", lambda cfg: Plain())
            register("bare", lambda cfg: Bare())

    assert Provider.refresh_credentials(Plain()) is False and ContextEngine.tools(None) == []
    # the default says the key did not change: the policy is asked again instead of repeating the call
    agent = make_agent(Providers(), Policy([RefreshCredentials(), Retry(0)]), api_mode="plain")
    assert agent.run_conversation("x")["final_response"] == "second try" and calls == ["call", "call"]
    agent.close()  # Provider.close: nothing to do, nothing raised
    bare = make_agent(Providers(), Policy([RefreshCredentials(), GiveUp("gave up")]), api_mode="bare")
    result = bare.run_conversation("x")
    assert result["exit_reason"] == "error" and result["error"] == "gave up"
    assert "refreshing credentials of bare" in caplog.text  # its missing method is a warning, not a crash
    bare.close()


def test_context_overflow_compresses_once_and_retries(make_agent):
    class Engine(ContextEngine):
        def __init__(self, agent):
            self.compressed = 0

        def update_from_response(self, usage):
            pass

        def should_compress(self, messages):
            return False

        def compress(self, messages, *, agent, reason, notes):
            self.compressed += 1
            return [{"role": "user", "content": "[summary]"}] + messages[-1:]

    class Engines:
        __name__ = "engines"

        @hookimpl
        def register_context_engines(self, register):
            register("compressor", Engine)

    overflow = ProviderError("too long", reason="context_overflow", status_code=400)
    agent = make_agent(Engines(), Policy([Compress(), Compress()]), script=["a", overflow, "after compression"])
    agent.run_conversation("one")
    old_session = agent.session_id
    result = agent.run_conversation("two")
    assert result["final_response"] == "after compression"
    assert agent.context_engine.compressed == 1
    assert agent.session_id != old_session and agent.parent_session_id == old_session
    assert agent.scripted.requests[-1].messages[0]["content"] == "[summary]\n\ntwo"


def test_give_up_message_from_policy(make_agent):
    agent = make_agent(Policy([GiveUp("all providers down: a, b")]), script=[ProviderError("x", reason="server")])
    assert agent.run_conversation("x")["error"] == "all providers down: a, b"


class Raising:
    __name__ = "raising"

    @hookimpl
    def on_session_start(self):
        raise RuntimeError("observer bug")

    @hookimpl
    def post_api_request(self):
        raise RuntimeError("observer bug 2")


def test_a_raising_hook_is_isolated_and_attributed(make_agent, recorder):
    rec = recorder("on_session_start", "post_api_request")
    agent = make_agent(Raising(), script=["fine"], callbacks=[rec])
    result = agent.run_conversation("x")
    assert result["final_response"] == "fine"
    assert len(rec.of("on_session_start")) == 1 and len(rec.of("post_api_request")) == 1
    assert agent.host.failures.of("raising", "on_session_start")[-1].error == "RuntimeError: observer bug"


def test_callbacks_of_one_agent_never_fire_for_another(make_agent, recorder):
    mine, theirs = recorder("on_stream_delta"), recorder("on_stream_delta")
    a = make_agent(script=["for a"], callbacks=[mine])
    b = Agent(a.host, ProviderConfig(api_mode="scripted", model="m"), callbacks=[theirs])
    a.scripted.steps.append("for b")
    a.run_conversation("x")
    b.run_conversation("y")
    assert "".join(d["text"] for d in mine.of("on_stream_delta")) == "for a"
    assert "".join(d["text"] for d in theirs.of("on_stream_delta")) == "for b"
    b.close()


def test_conversation_history_is_repaired_and_used(make_agent):
    agent = make_agent(script=["answer"])
    history = [{"role": "system", "content": "from history"}, {"role": "user", "content": "a"},
               {"role": "user", "content": "b"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c1", "function": {"name": "t", "arguments": "{broken"}}]}]
    result = agent.run_conversation("now", conversation_history=history)
    sent = agent.scripted.requests[0].messages
    assert sent[0]["content"] == "from history"
    validate(sent)
    assert result["messages"][-1]["content"] == "answer"


def test_resume_loads_through_the_hook(make_agent):
    stored = {"s1": [{"role": "user", "content": "old question"}, {"role": "assistant", "content": "old answer"}]}

    class Store:
        __name__ = "store"

        @hookimpl
        def load_session(self, session_id):
            return stored.get(session_id)

    agent = make_agent(Store(), script=["new answer"], session_id="s1")
    result = agent.run_conversation("new question")
    assert [m["content"] for m in result["messages"]] == ["old question", "old answer", "new question", "new answer"]


def test_complete_once_uses_the_same_hooks_and_stores_nothing(make_agent, recorder):
    rec = recorder("pre_api_request", "append_messages", "on_stream_delta")
    agent = make_agent(script=["summary text"], callbacks=[rec])
    text = agent.complete_once([{"role": "user", "content": "summarise"}], task="compression")
    assert text == "summary text" and len(rec.of("pre_api_request")) == 1
    assert rec.of("pre_api_request")[0]["call"].aux_task == "compression"  # the hooks can tell it from the chat
    assert rec.of("append_messages") == [] and agent.messages == []
    assert rec.of("on_stream_delta") == [] and agent.scripted.requests[0].stream is False  # never shown to the user
    assert agent.scripted.requests[0].tools == []


def test_no_provider_enabled_is_a_clear_error():
    host = PluginHost.from_objects([], Config({}), providers=False)
    with pytest.raises(AgentError, match="no model provider is enabled"):
        Agent(host)


def test_unknown_toolset_is_a_clear_error(make_agent, echo_plugin):
    with pytest.raises(AgentError, match="unknown toolset 'tset' \\(did you mean 'test'"):
        make_agent(echo_plugin, toolsets=["tset"])
    agent = make_agent(echo_plugin, toolsets=["test"], blocked_tools=["boom"])
    assert "boom" not in agent.tools and "echo" in agent.tools


def test_interrupt_reaches_running_children(make_agent):
    parent = make_agent(script=[{"content": "child never answers", "delay": 5}])
    child = parent.spawn_child()
    results = {}
    worker = threading.Thread(target=lambda: results.update(child.run_conversation("sub task").to_dict()))
    worker.start()
    deadline = time.monotonic() + 20
    while not parent.scripted.requests and time.monotonic() < deadline:  # the child is with the model
        time.sleep(0.01)
    parent.interrupt()
    worker.join(timeout=2)
    assert not worker.is_alive()
    assert results["exit_reason"] == "interrupted_by_user"
    assert child.parent is parent and child.depth == 1
    parent.release_child(child)
    assert parent._children == []


def test_console_shows_a_working_indicator_on_a_terminal():
    import io

    from plugins.terminal.console import Console

    class Tty(io.StringIO):
        def isatty(self):
            return True

    out, err = io.StringIO(), Tty()
    console = Console(stream_to=out, status_to=err, interactive=False)
    console.on_thinking(active=True)
    time.sleep(0.25)
    console.on_thinking(active=False)
    assert "thinking" in err.getvalue()
    console.on_tool_start(tool_name="terminal", args={"command": "ls"}, tool_call_id="c1", agent=None)
    console.on_tool_complete(tool_name="terminal", tool_call_id="c1", result="exit 2: ls: cannot open\ndetails",
                             duration_ms=3.0, status="error", agent=None)
    console.on_stream_delta(agent=None, text="answer")
    console.end_answer()
    assert "-> terminal(command='ls')" in err.getvalue() and "terminal error (3 ms): exit 2: ls: cannot open details" in err.getvalue()
    assert out.getvalue() == "answer\n"
    assert console.approve_tool_call(tool_name="t", args={}, message="m", agent=None) is None  # no terminal


def test_console_never_erases_streamed_text(monkeypatch):
    import io

    monkeypatch.setenv("NO_COLOR", "1")  # the screen's text, without colour codes around it

    from plugins.terminal.console import Console

    class Terminal(io.StringIO):  # stdout and stderr on one screen
        def isatty(self):
            return True

    screen = Terminal()
    console = Console(stream_to=screen, status_to=screen, interactive=False)
    console.on_thinking(active=True)
    time.sleep(0.15)  # the spinner draws
    console.on_stream_delta(agent=None, text="Let me look.")
    console.on_thinking(active=False)
    console.on_tool_start(tool_name="read_file", args={"path": "x"}, tool_call_id="c1", agent=None)
    console.on_tool_complete(tool_name="read_file", tool_call_id="c1", result="x", duration_ms=1.0, status="ok",
                             agent=None)
    console.on_stream_delta(agent=None, text="Done.")
    console.on_thinking(active=False)
    console.end_answer()
    text = screen.getvalue()
    after_first = text.split("Let me look.", 1)[1]
    assert after_first.startswith("\n-> read_file")  # a new line, not an erase
    assert text.endswith("Done.\n")  # nothing drawn or erased after the answer


def test_every_provider_built_gets_the_agent_timeouts(make_agent):
    from kernel.types import ModelResponse

    seen = []

    class Recording:
        __name__ = "recording"

        @hookimpl
        def register_model_providers(self, register):
            class P:
                def complete(self, request, emit):
                    return ModelResponse(content="ok")

            def factory(cfg):
                seen.append(cfg.options())
                return P()

            register("recording", factory)

    agent = make_agent(Recording(), api_mode="recording", config={"agent": {"api_timeout": 42},
                                                                  "provider_options": {"prompt_cache": True}})
    agent.run_conversation("x")
    agent.provider_for(ProviderConfig(model="fallback", api_mode="recording"))
    assert seen == [{"prompt_cache": True, "timeout": 42.0, "idle_timeout": 60.0},
                    {"timeout": 42.0, "idle_timeout": 60.0}]


def test_a_misspelled_callback_is_a_clear_error(make_agent):
    class Typo:
        @hookimpl
        def on_stream_delt(self, text):
            pass

    with pytest.raises(AgentError, match="unknown hook.*on_stream_delt"):
        make_agent(callbacks=[Typo()])


def test_console_prints_a_rewritten_answer_after_the_stream():
    import io

    from plugins.terminal.console import Console

    out, err = io.StringIO(), io.StringIO()
    console = Console(stream_to=out, status_to=err, interactive=False)
    console.on_thinking(active=True)
    console.on_stream_delta(agent=None, text="quiet")
    console.on_thinking(active=False)
    console.end_answer("QUIET")  # transform_llm_output changed it
    assert out.getvalue() == "quiet\nQUIET\n"
    console.on_thinking(active=True)
    console.on_stream_delta(agent=None, text="same")
    console.end_answer("same")
    assert out.getvalue().endswith("QUIET\nsame\n")
    console.end_answer("not streamed at all")
    assert out.getvalue().endswith("same\nnot streamed at all\n")


def test_a_refresh_that_changes_nothing_asks_the_policy_again_instead_of_calling(make_agent):
    calls = []

    class SameKey:
        __name__ = "same-key"

        @hookimpl
        def register_model_providers(self, register):
            class P:
                def complete(self, request, emit):
                    calls.append("call")
                    raise ProviderError("bad key", reason="auth", status_code=401)

                def refresh_credentials(self):
                    calls.append("refresh")
                    return False  # the same key again

            register("same-key", lambda cfg: P())

    policy = Policy([RefreshCredentials(), GiveUp("moved on")])
    agent = make_agent(SameKey(), policy, api_mode="same-key")
    result = agent.run_conversation("x")
    assert calls == ["call", "refresh"] and result["error"] == "moved on"
    assert [f.attempt for f in policy.failures] == [1, 2]


def test_run_conversation_returns_a_turn_result(make_agent):
    from kernel.types import TurnResult

    agent = make_agent(script=["the answer"])
    result = agent.run_conversation("question")
    assert isinstance(result, TurnResult)
    assert (result.final_response, result.exit_reason, result.api_calls, result.interrupted) == (
        "the answer", "completed", 1, False)
    data = result.to_dict()
    assert data["final_response"] == result["final_response"] == "the answer"  # hermes-agent's dict shape too
    assert set(data) == {"final_response", "messages", "exit_reason", "error", "interrupted", "interrupt_message",
                         "api_calls", "usage", "session_id", "task_id", "model", "provider"}


def test_a_parallel_call_whose_thread_begins_after_the_interrupt_never_runs(make_agent):
    """The interrupt stops the tools inside plugin code; a call still queued for a pool thread (a ninth beside
    eight, or a thread the machine started late) must not begin once the turn is interrupted."""
    from kernel.tools import MAX_WORKERS
    from kernel.types import Tool

    ran = []

    def handler(args, ctx):
        if args["n"] == 0:
            ctx.agent.interrupt()  # the first to run stops the turn; the others wait until it did
            return "interrupted it"
        ran.append(args["n"])
        deadline = time.monotonic() + 5
        while not ctx.agent.interrupted and time.monotonic() < deadline:
            time.sleep(0.01)
        return "saw it"

    class Parallel:
        @hookimpl
        def register_tools(self, register):
            register(Tool("wait", "wait", {"type": "object", "properties": {"n": {"type": "integer"}}}, handler,
                          parallel_safe=True))

    calls = [["wait", {"n": n}] for n in range(MAX_WORKERS + 1)]
    agent = make_agent(Parallel(), script=[{"tool_calls": calls}, "never asked"])
    result = agent.run_conversation("go")
    assert result["exit_reason"] == "interrupted_by_user"
    assert MAX_WORKERS not in ran  # queued behind the eight: its thread reached it after the interrupt
    last = [m for m in result["messages"] if m["role"] == "tool"][-1]
    assert "interrupted" in last["content"]


def test_a_user_message_of_text_and_images_reaches_the_model_whole_and_hooks_get_its_text(make_agent, recorder):
    """A turn's message may be content parts (an image the user attached): the model gets them (with the
    pre_llm_call context as one more part), the store keeps them, and the hooks of hermes-agent's plugins, which
    take a string, get its text."""
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    rec = recorder("append_messages", "post_llm_call")
    agent = make_agent(Context(), script=["A dot."], callbacks=[rec])
    result = agent.run_conversation([{"type": "text", "text": "what is it?"}, image])
    assert result["exit_reason"] == "completed" and result["final_response"] == "A dot."
    assert agent.scripted.requests[0].messages[-1]["content"] == [
        {"type": "text", "text": "what is it?"}, image, {"type": "text", "text": "remember: what is it? matters"}]
    assert [m["content"] for batch in rec.of("append_messages") for m in batch["messages"] if m["role"] == "user"] \
        == [[{"type": "text", "text": "what is it?"}, image]]
    assert [call["user_message"] for call in rec.of("post_llm_call")] == ["what is it?"]
    agent.close()


def test_a_user_message_that_is_no_text_enters_the_history_as_text(make_agent, echo_plugin, recorder):
    """Bytes that were not UTF-8 (stdin, argv: Python keeps them as lone surrogates) or a JSON "\\ud800" in a user
    message stopped the turn at the first UTF-8 writer, the session store. The kernel takes them as U+FFFD (a split
    surrogate pair as its character), for a turn and for a message sent while it runs."""
    from kernel.messages import valid_text

    assert valid_text("caf\udce9 \ud83d\ude00 x\ud800") == "caf\ufffd \U0001f600 x\ufffd"
    assert valid_text(None) is None and valid_text("plain") == "plain"
    rec = recorder("append_messages")
    agent = make_agent(echo_plugin, script=["ok", "ok"], callbacks=[rec])
    agent.redirect("and na\udcefve")
    result = agent.run_conversation("caf\udce9")
    stored = [m["content"] for batch in rec.of("append_messages") for m in batch["messages"] if m["role"] == "user"]
    assert result["exit_reason"] == "completed" and stored == ["caf\ufffd", "and na\ufffdve"]
    agent.close()
    agent = make_agent(echo_plugin, script=[{"tool_calls": [["echo", {"text": "half \ud83d"}]]}, "ok"], callbacks=[rec])
    assert agent.run_conversation("echo it")["exit_reason"] == "completed"  # a tool's output is text too
    assert [m["content"] for batch in rec.of("append_messages") for m in batch["messages"] if m["role"] == "tool"] \
        == ['{"echo": "half \ufffd"}']
    agent.close()
