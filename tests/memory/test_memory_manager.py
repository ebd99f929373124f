"""The ``memory`` plugin through the real Agent loop (scripted provider)."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from kernel import hookimpl
from kernel.protocols import ContextEngine
from plugins_memory import manager
from plugins_memory.base import MemoryBackend
from plugins_memory.file_memory import parse_entries
from plugins.commands.hookspecs import SLASH_COMMANDS


def system_of(request) -> str:
    return request.messages[0]["content"] if request.messages and request.messages[0]["role"] == "system" else ""


def last_user(request) -> str:
    return [m for m in request.messages if m["role"] == "user"][-1]["content"]


def tool_results(agent) -> list:
    return [json.loads(m["content"]) for m in agent.messages if m["role"] == "tool"]


class RecordingBackend(MemoryBackend):
    """A backend that records every call; behaviour set per test."""

    name = "recording"

    def __init__(self, prefetch_text="", prefetch_delay=0.0, fail=False, available=True):
        self.calls = []
        self.prefetch_text = prefetch_text
        self.prefetch_delay = prefetch_delay
        self.fail = fail
        self.available = available
        self.release = threading.Event()  # ends a slow prefetch early at teardown

    def _call(self, name, *args, **kwargs):
        self.calls.append((name, args, kwargs))
        if self.fail:
            raise RuntimeError(f"{name} exploded")

    def names(self):
        return [c[0] for c in self.calls]

    def is_available(self):
        self.calls.append(("is_available", (), {}))
        return self.available

    def initialize(self, session_id, **kwargs):
        self._call("initialize", session_id, **kwargs)

    def system_prompt_block(self):
        self._call("system_prompt_block")
        return "BACKEND BLOCK"

    def prefetch(self, query, *, session_id=""):
        self.calls.append(("prefetch", (query,), {"session_id": session_id}))
        if self.prefetch_delay:
            self.release.wait(self.prefetch_delay)
        if self.fail:
            raise RuntimeError("prefetch exploded")
        return self.prefetch_text

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        self._call("sync_turn", user_content, assistant_content, session_id=session_id, messages=messages)

    def on_memory_write(self, action, target, content, metadata=None):
        self._call("on_memory_write", action, target, content)

    def on_pre_compress(self, messages):
        self._call("on_pre_compress", messages)
        return "remember: the user is called Ada"

    def on_session_end(self, messages):
        self._call("on_session_end", messages)

    def on_delegation(self, task, result, *, child_session_id="", **kwargs):
        self._call("on_delegation", task, result, child_session_id=child_session_id)

    def shutdown(self):
        self._call("shutdown")


class BackendPlugin:
    __name__ = "recording-memory"

    def __init__(self, backend):
        self.backend = backend

    @hookimpl
    def register_memory_backends(self, register):
        register(self.backend.name, lambda config: self.backend)


def with_backend(make_agent, backend, script, **config):
    cfg = {"memory": {"provider": backend.name, **config}}
    return make_agent(manager, BackendPlugin(backend), script=script, config=cfg)


# ---------------------------------------------------------------- file memory


def test_memory_tool_writes_disk_at_once_and_snapshot_is_frozen(make_agent, hermes_home):
    (hermes_home / "memories").mkdir()
    (hermes_home / "memories" / "MEMORY.md").write_text("old fact\n", encoding="utf-8")
    seen_on_disk = []

    def second_step(request):
        seen_on_disk.append(parse_entries((hermes_home / "memories" / "MEMORY.md").read_text(encoding="utf-8")))
        return "saved"

    agent = make_agent(
        manager,
        script=[
            {"tool_calls": [("memory", {"action": "add", "target": "memory", "content": "new fact"})]},
            second_step,
            "ok",
        ],
    )
    assert agent.chat("remember this") == "saved"
    assert seen_on_disk == [["old fact", "new fact"]]  # on disk before the next model call
    assert tool_results(agent)[0]["success"] is True
    first, second = agent.scripted.requests
    assert "old fact" in system_of(first) and "new fact" not in system_of(first)
    assert system_of(second) == system_of(first)  # frozen for the session (prompt caching)
    agent.chat("again")
    assert "new fact" not in system_of(agent.scripted.requests[-1])
    assert "memory" in agent.tools and agent.tools["memory"].toolset == "memory"
    assert "(memory: 2200 chars, user: 1375 chars)" in agent.tools["memory"].description

    fresh = make_agent(manager, script=["hi"])  # the next session sees the write
    fresh.chat("hello")
    assert "new fact" in system_of(fresh.scripted.requests[0])


def test_memory_tool_over_limit_error_reaches_the_model(make_agent, hermes_home):
    agent = make_agent(
        manager,
        config={"memory": {"memory_char_limit": 30}},
        script=[
            {"tool_calls": [("memory", {"action": "add", "target": "memory", "content": "x" * 40})]},
            "understood",
        ],
    )
    assert agent.chat("save a lot") == "understood"
    error = tool_results(agent)[0]["error"]
    assert "limit of 30" in error and "0/30" in error and "remove" in error
    assert not (hermes_home / "memories" / "MEMORY.md").exists()
    # the model saw the error in its next request
    assert "limit of 30" in agent.scripted.requests[1].messages[-1]["content"]


def test_memory_disabled_registers_nothing(make_agent):
    agent = make_agent(manager, config={"memory": {"memory_enabled": False, "user_profile_enabled": False}}, script=["hi"])
    agent.chat("hello")
    assert "memory" not in agent.tools
    assert system_of(agent.scripted.requests[0]) == ""


# ---------------------------------------------------------------- external backends


def test_backend_lifecycle_through_the_loop(make_agent):
    backend = RecordingBackend(prefetch_text="the user likes tea")
    agent = with_backend(make_agent, backend, ["hello Ada"])
    assert agent.chat("what do I like?") == "hello Ada"
    request = agent.scripted.requests[0]
    assert "BACKEND BLOCK" in system_of(request)
    user = last_user(request)
    assert user.startswith("what do I like?")
    assert "<memory-context>" in user and "the user likes tea" in user and user.rstrip().endswith("</memory-context>")
    # the recalled text is for this request only: never in the stored history
    assert agent.messages[0] == {"role": "user", "content": "what do I like?"}

    rt = manager.runtime(agent)
    assert rt.worker.drain(5)
    sync = [c for c in backend.calls if c[0] == "sync_turn"][0]
    assert sync[1] == ("what do I like?", "hello Ada")
    assert sync[2]["session_id"] == agent.session_id and sync[2]["messages"][-1]["content"] == "hello Ada"
    init = [c for c in backend.calls if c[0] == "initialize"][0]
    assert init[1] == (agent.session_id,) and init[2]["platform"] == "cli" and "hermes_home" in init[2]

    agent.close()
    assert backend.names()[-2:] == ["on_session_end", "shutdown"]
    assert "memory" not in agent.state


def test_slow_backend_does_not_block_the_turn(make_agent, caplog):
    backend = RecordingBackend(prefetch_text="late", prefetch_delay=5.0)
    agent = with_backend(make_agent, backend, ["fast answer", "second answer"], prefetch_timeout=0.2)
    try:
        started = time.monotonic()
        with caplog.at_level(logging.WARNING):
            assert agent.chat("hi") == "fast answer"
        took = time.monotonic() - started
        assert took < 2.0, took
        assert "<memory-context>" not in last_user(agent.scripted.requests[0])
        assert "longer than 0.2s" in caplog.text
        # next turn: the earlier prefetch still runs, so the backend is skipped at once
        started = time.monotonic()
        assert agent.chat("again") == "second answer"
        assert time.monotonic() - started < 0.2 + 1.0
        assert [c[0] for c in backend.calls].count("prefetch") == 1
        assert "still busy" in caplog.text
    finally:
        backend.release.set()


def test_failing_backend_never_breaks_the_turn(make_agent, caplog):
    backend = RecordingBackend(prefetch_text="x")
    agent = with_backend(make_agent, backend, ["still fine", "fine again"])
    assert manager.active_backend(agent) is backend  # built and initialised
    backend.fail = True  # everything from now on raises
    with caplog.at_level(logging.WARNING):
        result = agent.run_conversation("hi")
        assert result["exit_reason"] == "completed" and result["final_response"] == "still fine"
        assert agent.chat("more") == "fine again"
        manager.runtime(agent).worker.drain(5)
        agent.close()
    assert "prefetch failed" in caplog.text and "sync_turn failed" in caplog.text
    assert "shutdown failed" in caplog.text
    assert not agent.host.failures.seen  # the manager handled every failure itself


def test_backend_failing_to_initialize_falls_back_to_file_memory(make_agent, caplog):
    backend = RecordingBackend(fail=True)
    with caplog.at_level(logging.WARNING):
        agent = with_backend(make_agent, backend, ["ok"])
        assert agent.chat("hi") == "ok"
    assert manager.active_backend(agent) is None
    assert "failed to initialize" in caplog.text
    assert "memory" in agent.tools


@pytest.mark.parametrize("provider, message", [("nope", "not a registered memory backend"), ("recording", "not available")])
def test_unknown_or_unavailable_backend_is_logged(make_agent, caplog, provider, message):
    backend = RecordingBackend(available=False)
    with caplog.at_level(logging.WARNING):
        agent = make_agent(manager, BackendPlugin(backend), script=["ok"], config={"memory": {"provider": provider}})
        assert agent.chat("hi") == "ok"
    assert message in caplog.text and manager.active_backend(agent) is None


def test_memory_tool_writes_are_mirrored_to_the_backend(make_agent):
    backend = RecordingBackend()
    agent = with_backend(
        make_agent,
        backend,
        [{"tool_calls": [("memory", {"action": "add", "target": "user", "content": "name: Ada"})]}, "noted"],
    )
    agent.chat("I am Ada")
    manager.runtime(agent).worker.drain(5)
    assert ("on_memory_write", ("add", "user", "name: Ada"), {}) in backend.calls


def test_child_agents_get_no_external_backend(make_agent):
    backend = RecordingBackend(prefetch_text="secret")
    parent = with_backend(make_agent, backend, ["parent", "child"])
    parent.chat("hi")
    child = parent.spawn_child()
    try:
        child.chat("sub task")
        assert manager.active_backend(child) is None
        assert "<memory-context>" not in last_user(parent.scripted.requests[-1])
    finally:
        parent.release_child(child)


def test_pre_compress_returns_the_backends_notes_and_the_engine_gets_them(make_agent):
    backend = RecordingBackend()
    agent = with_backend(make_agent, backend, ["ok"])
    agent.chat("hi")
    assert manager.on_pre_compress(messages=list(agent.messages), agent=agent) == "remember: the user is called Ada"
    got = []

    class Engine(ContextEngine):
        def update_from_response(self, usage):
            pass

        def should_compress(self, messages):
            return False

        def compress(self, messages, *, agent, reason, notes):
            got.append(notes)
            return messages[-1:]

    agent.context_engine = Engine()
    assert agent.compress("manual") is True
    assert got == [["remember: the user is called Ada"]]  # the kernel passed on what on_pre_compress returned


def test_slash_memory_shows_files_and_backend(make_agent, hermes_home):
    agent = make_agent(
        manager, script=[{"tool_calls": [("memory", {"action": "add", "target": "user", "content": "name: Ada"})]}, "ok"]
    )
    agent.chat("I am Ada")
    reply = agent.host.registry[SLASH_COMMANDS]["memory"].value("", agent)
    assert "USER.md (1 entries, 9/1375 chars)" in reply and "  - name: Ada" in reply
    assert "MEMORY.md (0 entries, 0/2200 chars)" in reply and "external backend: none" in reply


class HangingBackend(RecordingBackend):
    name = "recording"

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        self.calls.append(("sync_turn", (), {}))
        self.release.wait(10)


def test_hung_backend_bounds_compression_and_shutdown(make_agent, monkeypatch, caplog):
    monkeypatch.setattr(manager, "DRAIN_TIMEOUT", 0.2)
    backend = HangingBackend()
    agent = with_backend(make_agent, backend, ["one", "two"])
    try:
        assert agent.chat("hi") == "one"  # sync_turn now hangs on the worker
        started = time.monotonic()
        assert agent.chat("again") == "two"  # queued behind it; the turn does not wait
        with caplog.at_level(logging.WARNING):
            manager.on_pre_compress(messages=list(agent.messages), agent=agent)
            agent.close()
        assert time.monotonic() - started < 2.0
        assert "compressing without its notes" in caplog.text and "did not finish" in caplog.text
    finally:
        backend.release.set()


def test_snapshot_is_per_session(make_agent):
    agent = make_agent(
        manager, script=[{"tool_calls": [("memory", {"action": "add", "target": "memory", "content": "fact A"})]}, "ok"]
    )
    agent.chat("save")
    old = agent.session_id
    # the same session keeps its frozen block; a new session (e.g. after compression) reads the disk
    assert "fact A" not in (manager.system_prompt(agent=agent, session_id=old) or "")
    assert "fact A" in manager.system_prompt(agent=agent, session_id="next-session")


def test_delegated_work_reaches_the_parents_backend(make_agent):
    from plugins import agent_tools

    backend = RecordingBackend()

    def model(request):
        first = [m for m in request.messages if m["role"] == "user"][0]["content"]
        if "subagent" in first:
            return "found 3 config files"
        if any(m["role"] == "tool" for m in request.messages):
            return "done"
        return {"tool_calls": [("delegate_task", {"goal": "count the config files"})]}

    agent = make_agent(manager, BackendPlugin(backend), agent_tools, script=[model] * 5,
                       config={"memory": {"provider": backend.name}})
    assert agent.chat("how many config files?") == "done"
    assert manager.runtime(agent).worker.drain(5)
    (call,) = [c for c in backend.calls if c[0] == "on_delegation"]
    child_session = json.loads([m for m in agent.messages if m["role"] == "tool"][0]["content"])["results"][0]["session_id"]
    assert call[1] == ("count the config files", "found 3 config files")
    assert call[2] == {"child_session_id": child_session}
    # the child itself had no backend: its turn did not flow into long-term memory
    assert [c[1][0] for c in backend.calls if c[0] == "sync_turn"] == ["how many config files?"]
