"""The ``compressor`` engine through the real Agent loop (scripted provider)."""

from __future__ import annotations

import pytest

from kernel import hookimpl
from kernel.messages import validate
from kernel.types import Compress, ProviderError
from plugins import compressor
from plugins.compressor import SUMMARY_INSTRUCTIONS, SUMMARY_PREFIX
from plugins_memory import manager
from plugins_memory.base import MemoryBackend
from plugins.commands.hookspecs import SLASH_COMMANDS

SMALL = {"model_context_length": 1024, "compression": {"threshold": 0.5, "protect_first_n": 1, "protect_last_n": 2}}


def is_summary_request(request) -> bool:
    return bool(request.messages) and request.messages[0].get("content") == SUMMARY_INSTRUCTIONS


class Model:
    """A scripted model: long answers, a summary when asked for one (or a failure)."""

    def __init__(self, summary="SUMMARY: the user asked questions 0 and 1", summary_error=None):
        self.summary, self.summary_error = summary, summary_error
        self.summary_prompts = []

    def __call__(self, request):
        if is_summary_request(request):
            self.summary_prompts.append(request.messages[-1]["content"])
            assert request.tools == []  # a summary call offers no tools
            return self.summary_error or self.summary
        n = sum(1 for m in request.messages if m["role"] == "user")
        return f"answer {n} " + "z" * 600


def script(model, n=12):
    return [model] * n


def test_preflight_compression_continues_in_a_child_session(make_agent, recorder):
    rec = recorder("on_session_start", "on_session_finalize", "on_pre_compress")
    model = Model()
    agent = make_agent(compressor, script=script(model), config=SMALL, callbacks=[rec])
    assert agent.context_engine is not None and agent.context_engine.threshold_tokens == 512
    first = agent.session_id
    agent.chat("question 0 " + "q" * 600)
    agent.chat("question 1 " + "q" * 600)
    assert agent.session_id == first and agent.context_engine.compression_count == 0

    result = agent.run_conversation("question 2 " + "q" * 600)
    assert result["exit_reason"] == "completed" and result["final_response"].startswith("answer")
    assert agent.context_engine.compression_count == 1
    # lineage: the conversation continues in a new session whose parent is the old one
    assert result["session_id"] == agent.session_id != first
    assert agent.parent_session_id == first
    starts = rec.of("on_session_start")
    assert [s["reason"] for s in starts] == ["new", "compression"]
    assert starts[1]["session_id"] == agent.session_id and starts[1]["parent_session_id"] == first
    assert [(f["session_id"], f["reason"]) for f in rec.of("on_session_finalize")] == [(first, "compression")]
    assert len(rec.of("on_pre_compress")) == 1 and rec.names().index("on_pre_compress") < rec.names().index("on_session_finalize")

    # the summary came from the model, and the next request carries it
    assert len(model.summary_prompts) == 1 and "question 1" in model.summary_prompts[0]  # the middle
    assert "question 0" not in model.summary_prompts[0]  # the protected head
    validate(agent.messages)
    assert any(SUMMARY_PREFIX in str(m["content"]) and model.summary in str(m["content"]) for m in agent.messages)
    last = agent.scripted.requests[-1]
    assert not is_summary_request(last) and any(model.summary in str(m["content"]) for m in last.messages)
    assert agent.messages[-2]["content"].endswith("question 2 " + "q" * 600)  # the new question is intact


def test_summary_falls_back_when_the_model_call_fails(make_agent):
    model = Model(summary_error=ProviderError("overloaded", reason="server", status_code=529))
    agent = make_agent(compressor, script=script(model), config=SMALL)
    for i in range(3):
        result = agent.run_conversation(f"question {i} " + "q" * 600)
        assert result["exit_reason"] == "completed"
    assert agent.context_engine.compression_count == 1 and agent.context_engine.fallback_count == 1
    summary = next(m["content"] for m in agent.messages if SUMMARY_PREFIX in str(m["content"]))
    assert "unavailable" in summary and "- assistant: answer" in summary
    validate(agent.messages)


def test_hermes_agents_abort_on_summary_failure_leaves_the_history_as_it_is(make_agent, caplog):
    model = Model(summary_error=ProviderError("overloaded", reason="server", status_code=529))
    config = {**SMALL, "compression": {**SMALL.get("compression", {}), "abort_on_summary_failure": True}}
    agent = make_agent(compressor, script=script(model), config=config)
    for i in range(3):
        assert agent.run_conversation(f"question {i} " + "q" * 600)["exit_reason"] == "completed"
    assert agent.context_engine.compression_count == 0 and agent.context_engine.fallback_count == 0
    assert not any(SUMMARY_PREFIX in str(m["content"]) for m in agent.messages)
    assert sum(m["role"] == "user" for m in agent.messages) == 3  # nothing dropped or listed in its place
    assert "not compressed: the summary model call failed (" in caplog.text and "overloaded" in caplog.text


class OverflowPolicy:
    __name__ = "overflow-policy"

    @hookimpl
    def on_provider_error(self, failure):
        return Compress() if failure.error.reason == "context_overflow" else None


def test_context_overflow_compresses_with_the_real_engine_and_retries(make_agent):
    overflow = ProviderError("prompt is too long", reason="context_overflow", status_code=400)
    model = Model()
    agent = make_agent(
        compressor, OverflowPolicy(),
        script=[model, model, overflow, model, model],  # turn 3: overflow, summary, retry
    )
    agent.chat("question 0")
    agent.chat("question 1")
    old = agent.session_id
    result = agent.run_conversation("question 2")
    assert result["exit_reason"] == "completed" and result["final_response"].startswith("answer")
    assert agent.context_engine.compression_count == 1 and agent.parent_session_id == old
    assert len(model.summary_prompts) == 1
    validate(agent.messages)


class NotesBackend(MemoryBackend):
    name = "notes"

    def __init__(self):
        self.ended, self.switches = [], []

    def on_session_switch(self, new_session_id, *, parent_session_id="", **kwargs):
        self.switches.append((new_session_id, parent_session_id))

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def on_pre_compress(self, messages):
        return "MEMO: the user's name is Ada"

    def on_session_end(self, messages):
        self.ended.append(list(messages))


class NotesPlugin:
    __name__ = "notes-memory"

    def __init__(self):
        self.backend = NotesBackend()

    @hookimpl
    def register_memory_backends(self, register):
        register("notes", lambda config: self.backend)


def test_memory_notes_reach_the_summary_and_the_old_session_ends(make_agent):
    model = Model()
    notes = NotesPlugin()
    config = {**SMALL, "memory": {"provider": "notes"}}
    agent = make_agent(manager, notes, compressor, script=script(model), config=config)
    first = agent.session_id
    for i in range(3):
        agent.chat(f"question {i} " + "q" * 600)
    assert agent.context_engine.compression_count == 1
    assert "MEMO: the user's name is Ada" in model.summary_prompts[0]
    manager.runtime(agent).worker.drain(5)
    assert notes.backend.switches == [(agent.session_id, first)]  # told about the new, linked session
    # the backend saw the end of the old session with its full, uncompressed history
    (ended,) = notes.backend.ended
    assert sum(1 for m in ended if m["role"] == "user") == 3
    assert not any(SUMMARY_PREFIX in str(m["content"]) for m in ended)


def test_slash_compress_and_context(make_agent):
    model = Model()
    agent = make_agent(compressor, script=script(model))
    commands = agent.host.registry[SLASH_COMMANDS]
    assert "nothing to compress" in commands["compress"].value("", agent)
    for i in range(3):
        agent.chat(f"question {i}")
    old = agent.session_id
    reply = commands["compress"].value("", agent)
    assert reply.startswith("compressed 6 messages to ") and agent.parent_session_id == old and old in reply
    validate(agent.messages)
    assert "compressions so far: 1" in commands["context"].value("", agent)


def test_slash_compress_here_focus_and_preview(make_agent):
    """hermes-agent's /compress here N (the last N exchanges kept whole), focus TOPIC (the summary keeps it in
    detail) and --preview (what would be summarised; nothing changes)."""
    model = Model()
    agent = make_agent(compressor, script=script(model, 20))
    compress = agent.host.registry[SLASH_COMMANDS]["compress"].value
    for i in range(6):
        agent.chat(f"question {i}")
    session, messages = agent.session_id, list(agent.messages)
    assert compress("--preview", agent) == ("/compress would summarise messages 4 to 7 of 12 (~324 tokens), keeping "
                                            "the first 3 and the last 5 as they are; nothing is changed")
    assert agent.messages == messages and agent.session_id == session and not model.summary_prompts
    assert compress("here two", agent) == compress("sideways", agent) == \
        "usage: /compress [here N | focus TOPIC | --preview]"
    assert compress("here 2", agent).startswith("compressed 12 messages to ")
    users = [m["content"] for m in agent.messages if m["role"] == "user"]
    assert users[-1] == "question 5" and users[-2].endswith("[End of summary]\n\nquestion 4")  # the last 2 kept
    assert agent.context_engine.protect_last_n == 20  # back to config's after the command
    for i in range(6, 9):
        agent.chat(f"question {i}")
    assert compress("focus the pytest flags", agent).startswith("compressed ")
    assert model.summary_prompts[-1].endswith("keep in detail what concerns: the pytest flags")
    assert "keep in detail" not in model.summary_prompts[0] and agent.context_engine.focus == ""


class AuxProviders:
    """A second model provider ``aux``: records its requests, answers or fails."""

    __name__ = "aux-providers"

    def __init__(self, answer="AUX SUMMARY: questions 0 and 1", error=None):
        self.answer, self.error = answer, error
        self.requests, self.configs = [], []

    @hookimpl
    def register_model_providers(self, register):
        plugin = self

        class Aux:
            def complete(self, request, emit):
                from kernel.types import ModelResponse

                plugin.requests.append(request)
                if plugin.error is not None:
                    raise plugin.error
                return ModelResponse(content=plugin.answer)

        def factory(config):
            plugin.configs.append(config)
            return Aux()

        register("aux", factory)


def _three_questions(agent):
    for i in range(3):
        assert agent.run_conversation(f"question {i} " + "q" * 600)["exit_reason"] == "completed"


def test_summary_comes_from_the_auxiliary_model(make_agent, recorder):
    rec = recorder("on_stream_delta")
    aux = AuxProviders()
    model = Model()
    config = {**SMALL, "auxiliary": {"compression": {"model": "cheap-model", "api_mode": "aux",
                                                    "base_url": "http://127.0.0.1:9/v1", "timeout": 7}}}
    agent = make_agent(compressor, aux, script=script(model), config=config, callbacks=[rec])
    _three_questions(agent)
    assert agent.context_engine.compression_count == 1 and agent.context_engine.fallback_count == 0
    assert model.summary_prompts == []  # the conversation's model wrote no summary
    (request,) = aux.requests
    assert request.model == "cheap-model" and request.tools == [] and request.messages[0]["content"] == SUMMARY_INSTRUCTIONS
    assert "question 1" in request.messages[-1]["content"]
    (built,) = aux.configs
    assert built.base_url == "http://127.0.0.1:9/v1" and built.options()["timeout"] == 7
    assert any("AUX SUMMARY" in str(m["content"]) for m in agent.messages)
    assert all("AUX SUMMARY" not in d["text"] for d in rec.of("on_stream_delta"))  # never shown as an answer
    validate(agent.messages)


def test_auxiliary_model_name_alone_keeps_the_conversations_endpoint(make_agent):
    model = Model()
    config = {**SMALL, "auxiliary": {"compression": {"model": "summary-model", "provider": "auto"}}}
    agent = make_agent(compressor, script=script(model), config=config)
    _three_questions(agent)
    summary_requests = [r for r in agent.scripted.requests if is_summary_request(r)]
    assert [r.model for r in summary_requests] == ["summary-model"]
    assert {r.model for r in agent.scripted.requests if not is_summary_request(r)} == {"test-model"}


def test_a_failing_auxiliary_model_falls_back_to_the_deterministic_summary(make_agent):
    aux = AuxProviders(error=ProviderError("overloaded", reason="server", status_code=529))
    model = Model()
    config = {**SMALL, "auxiliary": {"compression": {"model": "cheap-model", "api_mode": "aux"}}}
    agent = make_agent(compressor, aux, script=script(model), config=config)
    _three_questions(agent)
    assert len(aux.requests) == 1 and model.summary_prompts == []
    assert agent.context_engine.compression_count == 1 and agent.context_engine.fallback_count == 1
    summary = next(m["content"] for m in agent.messages if SUMMARY_PREFIX in str(m["content"]))
    assert "unavailable" in summary and "- assistant: answer" in summary
    validate(agent.messages)


def test_the_default_policy_compresses_once_on_overflow_then_gives_up(make_agent):
    from plugins import fallback

    overflow = ProviderError("prompt is too long", reason="context_overflow", status_code=400)
    model = Model()
    agent = make_agent(compressor, fallback, script=[model, model, overflow, model, model, overflow, model, overflow])
    agent.chat("question 0")
    agent.chat("question 1")
    old = agent.session_id
    result = agent.run_conversation("question 2")  # overflow, summary, the retry answers
    assert result["exit_reason"] == "completed" and agent.parent_session_id == old
    assert agent.context_engine.compression_count == 1

    result = agent.run_conversation("question 3")  # overflow, summary, overflow again: no loop
    assert result["exit_reason"] == "error" and "too long" in result["error"]
    assert agent.context_engine.compression_count == 2
    assert len(agent.scripted.requests) == 8  # the script was used up exactly: one retry, not more
    validate(agent.messages)


def test_an_interrupt_does_not_wait_for_a_slow_auxiliary_model(make_agent, recorder):
    """The auxiliary summary goes through the agent's one model-call path:
    the API hooks see it, and an interrupt abandons it at once."""
    import threading
    import time

    from kernel import hookimpl
    from kernel.types import ModelResponse
    from plugins import auxiliary
    from plugins.compressor import _summarizer

    released, cancelled = threading.Event(), []

    class Slow:
        __name__ = "slow"

        @hookimpl
        def register_model_providers(self, register):
            class P:
                def complete(self, request, emit):
                    released.wait(10)
                    cancelled.append(request.cancelled)
                    return ModelResponse(content="too late")

            register("slow", lambda cfg: P())

    rec = recorder("pre_api_request")
    agent = make_agent(Slow(), script=[], callbacks=[rec])
    aux = auxiliary.provider_config(agent.config.__class__({"auxiliary": {"compression": {"model": "m", "api_mode": "slow"}}}),
                                    "compression")
    summarize = _summarizer(agent, aux, 128_000)
    threading.Timer(0.1, agent.interrupt).start()
    started = time.monotonic()
    from kernel.types import Interrupted

    with pytest.raises(Interrupted):  # not an Exception: the compressor's own handlers cannot swallow it
        summarize("text")
    assert time.monotonic() - started < 2
    assert [p["call"].api_mode for p in rec.of("pre_api_request")] == ["slow"]  # the hooks saw the auxiliary call
    assert agent.provider_config.api_mode == "scripted"  # the conversation's provider is untouched
    released.set()
    deadline = time.monotonic() + 5
    while not cancelled and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cancelled == [True]  # the provider can see the request was abandoned
