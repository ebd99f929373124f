"""The session plugin through the kernel's Agent (scripted provider)."""

from __future__ import annotations

import json
import sqlite3

import pytest

import plugins.sessions as sessions_plugin
from kernel import hookimpl


def _rows(home):
    conn = sqlite3.connect(home / "state.db")
    rows = conn.execute("SELECT id, session_id, seq, role FROM messages ORDER BY id").fetchall()
    conn.close()
    return rows


def test_a_turn_is_stored_as_it_happens(home, make_agent, echo_plugin):
    seen_after_step, writes = [], []

    class Probe:
        @hookimpl
        def on_step(self, agent):
            seen_after_step.append(len(sessions_plugin.get_store(home).load(agent.session_id)))

        @hookimpl
        def append_messages(self, messages):
            writes.append([m["role"] for m in messages])

    agent = make_agent(
        sessions_plugin, echo_plugin,
        script=[{"content": "let me check", "reasoning": "use echo", "tool_calls": [("echo", {"text": "hi"})]},
                "All done."],
        callbacks=[Probe()],
    )
    result = agent.run_conversation("Say hi through the tool")
    assert result["exit_reason"] == "completed"
    store = sessions_plugin.get_store(home)
    stored = store.load(agent.session_id)
    assert stored == result["messages"]
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[1]["reasoning"] == "use echo" and stored[1]["tool_calls"][0]["function"]["name"] == "echo"
    # the call is on disk before its tool runs; its result is written with the answer (after on_step): a write per step
    assert seen_after_step == [2, 2] and writes == [["user"], ["assistant"], ["tool", "assistant"]]
    meta = store.get_session(agent.session_id)
    assert (meta["model"], meta["platform"], meta["end_reason"]) == ("test-model", "cli", "completed")
    assert meta["message_count"] == 4
    # two model calls of the scripted provider's default usage (10 in, 5 out)
    assert (meta["input_tokens"], meta["output_tokens"], meta["api_call_count"]) == (20, 10, 2)


def test_resume_loads_the_history_and_only_appends(home, make_agent):
    first = make_agent(sessions_plugin, script=["The capital is Paris."])
    first.run_conversation("What is the capital of France?")
    sid = first.session_id
    first.close()
    before = _rows(home)

    second = make_agent(sessions_plugin, script=["About 2.1 million."], session_id=sid)
    result = second.run_conversation("And its population?")
    sent = second.scripted.requests[0].messages
    convo = [(m["role"], m["content"]) for m in sent if m["role"] != "system"]
    assert convo[:2] == [("user", "What is the capital of France?"), ("assistant", "The capital is Paris.")]
    assert convo[2][0] == "user" and convo[2][1].startswith("And its population?")
    assert result["session_id"] == sid
    after = _rows(home)
    assert after[: len(before)] == before  # the old rows were not rewritten
    assert [r[3] for r in after[len(before):]] == ["user", "assistant"]
    meta = sessions_plugin.get_store(home).get_session(sid)
    assert meta["message_count"] == 4 and meta["api_call_count"] == 2


def test_a_broken_stored_history_is_repaired_on_load_and_never_rewritten(home, make_agent):
    from kernel.messages import problems

    store = sessions_plugin.get_store(home)
    call = {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
    store.append("old", [{"role": "user", "content": "first"}])
    store.append("old", [{"role": "assistant", "content": None, "tool_calls": [call]}])  # its result never came
    store.append("old", [{"role": "tool", "tool_call_id": "ghost", "content": "orphan"}])
    before = _rows(home)

    agent = make_agent(sessions_plugin, script=["carrying on"], session_id="old")
    assert agent.run_conversation("second")["exit_reason"] == "completed"
    sent = [m for m in agent.scripted.requests[0].messages if m["role"] != "system"]
    assert problems(sent) == []  # the provider got a valid history
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2]["tool_call_id"] == "c1"
    after = _rows(home)
    assert after[: len(before)] == before and [r[3] for r in after[len(before):]] == ["user", "assistant"]


def test_continue_picks_the_latest_cli_session(home, make_agent):
    a = make_agent(sessions_plugin, script=["one"])
    a.run_conversation("first")
    b = make_agent(sessions_plugin, script=["two"])
    b.run_conversation("second")
    assert sessions_plugin.latest_session(platform="cli", agent=None) == b.session_id
    a.run_conversation("first again")
    assert sessions_plugin.latest_session(platform="cli", agent=None) == a.session_id
    assert sessions_plugin.latest_session(platform="telegram", agent=None) is None


def test_an_unknown_session_id_starts_empty(home, make_agent):
    agent = make_agent(sessions_plugin, script=["hello"], session_id="never-seen")
    assert sessions_plugin.load_session(session_id="never-seen", agent=agent) is None
    agent.run_conversation("hi")
    assert [m["role"] for m in sessions_plugin.get_store(home).load("never-seen")] == ["user", "assistant"]


def test_child_agents_are_linked_and_not_continued(home, make_agent):
    parent = make_agent(sessions_plugin, script=["parent answer", "child answer"])
    parent.run_conversation("delegate something")
    child = parent.spawn_child()
    child.run_conversation("sub task")
    parent.release_child(child)
    store = sessions_plugin.get_store(home)
    meta = store.get_session(child.session_id)
    assert meta["parent_session_id"] == parent.session_id
    assert store.latest_session_id("cli") == parent.session_id


def test_session_search_tool_through_the_loop(home, make_agent):
    old = make_agent(sessions_plugin, script=["We picked the teal colour scheme."])
    old.run_conversation("Which colour scheme did we pick for the website?")
    agent = make_agent(
        sessions_plugin,
        script=[{"tool_calls": [("session_search", {"query": "colour scheme"}),
                                ("session_search", {"query": 'AND "OR'}),
                                ("session_search", {"query": ""})]},
                "It was teal."],
        toolsets=["session_search"],
    )
    assert set(agent.tools) == {"session_search"}
    result = agent.run_conversation("What colours did we choose last time?")
    tool_msgs = [m for m in result["messages"] if m["role"] == "tool"]
    found = json.loads(tool_msgs[0]["content"])
    assert found["count"] == 2 and {r["session_id"] for r in found["results"]} == {old.session_id}
    assert json.loads(tool_msgs[1]["content"])["count"] == 0
    assert "query" in json.loads(tool_msgs[2]["content"])["error"]
    assert result["final_response"] == "It was teal."


def test_a_store_that_cannot_write_stops_the_turn_before_anything_happens_unrecorded(home, make_agent):
    (home / "state.db").write_bytes(b"not a database at all" * 10)
    agent = make_agent(sessions_plugin, script=["never asked"])
    result = agent.run_conversation("hi")
    assert result["exit_reason"] == "error" and result["final_response"] is None and result["api_calls"] == 0
    assert "could not store the session" in result["error"] and "hermes sessions repair" in result["error"]
    text = next(f.error for f in agent.host.failures.seen if f.hook == "append_messages")
    assert "state.db" in text and "hermes sessions repair" in text
    assert (home / "state.db").read_bytes() == b"not a database at all" * 10


@pytest.fixture(autouse=True)
def _close(home):
    yield
    sessions_plugin.close_stores()


class OneShotCompressor:
    """A context engine that compresses once, when the history passes 4 messages."""

    __name__ = "one-shot-compressor"

    @hookimpl
    def register_context_engines(self, register):
        register("compressor", lambda agent: self)

    done = False

    def update_from_response(self, usage):
        pass

    def should_compress(self, messages):
        return not self.done and len(messages) > 4

    def compress(self, messages, *, agent, reason, notes):
        self.done = True
        return [{"role": "user", "content": "[summary] we talked about soup"},
                {"role": "assistant", "content": "noted"}, *messages[-1:]]


def test_compression_continues_in_a_linked_session(home, make_agent):
    agent = make_agent(sessions_plugin, OneShotCompressor(), script=["a1", "a2", "a3"])
    agent.run_conversation("q1")
    agent.run_conversation("q2")
    old = agent.session_id
    agent.run_conversation("q3")  # 5 messages before the call: compress, then continue in a new session
    new = agent.session_id
    assert new != old
    store = sessions_plugin.get_store(home)
    assert [m["content"] for m in store.load(old)] == ["q1", "a1", "q2", "a2", "q3"]  # never rewritten
    meta = store.get_session(new)
    assert (meta["parent_session_id"], meta["start_reason"]) == (old, "compression")
    assert [m["content"] for m in store.load(new)] == ["[summary] we talked about soup", "noted", "q3", "a3"]
    assert store.latest_session_id("cli") == new


def test_resolve_session_and_claim_session(home, make_agent, tmp_path):
    """resolve_session turns a unique prefix into the id (None for unknown or
    ambiguous); claim_session is asked before a stored session is resumed: a
    reason refuses the turn before anything is called or stored, and the
    plugin's lock refuses a second process."""
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    first = make_agent(sessions_plugin, script=["stored"])
    first.run_conversation("remember this")
    sid = first.session_id
    ask = first.host.pm.hook
    assert ask.resolve_session(session_id=sid[:8], agent=first) == sid
    assert ask.resolve_session(session_id="no-such-session", agent=first) is None

    class Busy:
        @hookimpl(tryfirst=True)
        def claim_session(self, session_id):
            return f"session {session_id[:8]} is being written by process 4242"

    refused = make_agent(sessions_plugin, Busy(), session_id=sid, script=["never"])
    result = refused.run_conversation("again")
    assert result["exit_reason"] == "error" and "being written by process 4242" in result["error"]
    assert refused.scripted.requests == [] and len(sessions_plugin.get_store(home).load(sid)) == 2

    # the real lock: another process that resumed the session holds it
    first.close()  # this process lets go of the session
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from hermes.host.config import Config; from kernel.agent import Agent; from kernel.types import ProviderConfig; "
        "from hermes.host.plugins import PluginHost; import plugins.sessions as s; "
        "from plugins_providers.scripted import scripted_plugin; "
        "host = PluginHost.from_objects([scripted_plugin(['x']), s], Config({})); "
        f"a = Agent(host, ProviderConfig(api_mode='scripted', model='m')); a.new_session(resume={sid!r}); "
        "print(a.run_conversation('hold it')['exit_reason'], flush=True); time.sleep(30)")],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "completed"
        later = make_agent(sessions_plugin, session_id=sid, script=["never"])
        result = later.run_conversation("me too")
        assert result["exit_reason"] == "error" and str(holder.pid) in result["error"], result["error"]
        assert later.scripted.requests == []
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.05)


def test_undo_continues_in_a_linked_session_that_keeps_the_title(home, make_agent):
    from plugins.terminal.commands import take_back

    agent = make_agent(sessions_plugin, script=["one", "two"])
    agent.run_conversation("first")
    agent.run_conversation("second")
    first = agent.session_id
    store = sessions_plugin.get_store(home)
    store.set_title(first, "Bean plans")
    assert take_back(agent) == "second"
    assert agent.session_id != first and [m["content"] for m in agent.messages] == ["first", "one"]
    meta = store.get_session(agent.session_id)
    assert (meta["parent_session_id"], meta["start_reason"]) == (first, "undo")
    assert [m["content"] for m in store.load(agent.session_id)] == ["first", "one"]
    assert len(store.load(first)) == 4  # the transcript keeps what was said
    assert store.latest_session_id("cli") == agent.session_id  # --continue follows the continuation
    assert sessions_plugin.session_info(session_id=agent.session_id, agent=agent)["title"] == "Bean plans"
    assert sessions_plugin.session_info(session_id="no-such", agent=agent) is None
    assert take_back(agent) == "first" and agent.messages == [] and take_back(agent) is None
