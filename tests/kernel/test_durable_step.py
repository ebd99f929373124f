"""The durable-step contract (the ``durable_step`` hook): which steps an engine sees, in which order, on which
thread, and what a replay does (answers from the record: no model call, no tool handler, ``replayed`` set for the
observers). The engine here is a journal in a few lines; the DBOS engine's own tests are in tests/durable."""

from __future__ import annotations

import contextvars
import json
import threading

import pytest

from kernel import hookimpl

TURN = contextvars.ContextVar("turn", default=None)


class Journal:
    """Records each step's result at its place in the turn; a turn it has a record of is answered from the record
    as far as it goes (the way DBOS matches steps: by their order)."""

    __name__ = "journal"

    def __init__(self):
        self.turns: dict = {}  # turn id -> {place: result}
        self.seen: list = []  # (kind, thread of the hook, thread of the run)
        self.observed: list = []  # (hook, replayed) from the observer hooks
        self.times: list = []  # (started_at, ended_at) of each model call post_api_request saw

    @hookimpl
    def durable_step(self, step, agent):
        if step.kind == "turn":
            agent.state["journal"] = [self.turns.setdefault(step.record.turn_id, {}), dict(self.turns[step.record.turn_id]), 0]

            def run_turn(work):
                TURN.set(step.record.turn_id)
                return work()

            self.seen.append(("turn", threading.get_ident(), None))
            return run_turn
        record, recorded, place = agent.state["journal"]
        agent.state["journal"][2] += 1
        hook_thread = threading.get_ident()

        def run(work):
            assert TURN.get() == agent.turn.turn_id  # the step runs in the turn's context, on any thread
            self.seen.append((step.kind, hook_thread, threading.get_ident()))
            if place in recorded:
                return recorded[place]
            record[place] = result = work()
            return result

        return run

    @hookimpl
    def post_tool_call(self, call):
        self.observed.append(("post_tool_call", call.name, call.replayed))

    @hookimpl
    def post_api_request(self, call):
        self.observed.append(("post_api_request", call.number, call.replayed))
        self.times.append((call.started_at, call.ended_at))


class Counted:
    """A tool whose side effect can be counted."""

    __name__ = "counted"

    def __init__(self):
        self.ran: list = []

    @hookimpl
    def register_tools(self, register):
        from kernel.types import Tool

        def note(args, ctx):
            self.ran.append(args["n"])
            return {"noted": args["n"]}

        register(Tool("note", "Note n", {"type": "object", "properties": {}}, note, toolset="test", parallel_safe=True))


class Store:
    """A session store in memory, shared by the agents of a test."""

    __name__ = "memory-store"

    def __init__(self):
        self.stored: list = []

    @hookimpl
    def append_messages(self, messages):
        self.stored += messages


def script():
    return [{"content": "", "tool_calls": [["note", {"n": 1}, "c1"], ["note", {"n": 2}, "c2"]]},
            {"content": "", "tool_calls": [["note", {"n": 3}, "c3"]]},
            "all noted"]


def test_an_implementation_that_declines_the_turn_is_asked_nothing_more(make_agent, recorder):
    rec = recorder("durable_step")  # answers None: no engine for this turn
    agent = make_agent(Counted(), rec, script=script())
    assert agent.run_conversation("go").final_response == "all noted"
    assert [call["step"].kind for call in rec.of("durable_step")] == ["turn"]


def test_an_engine_sees_every_step_in_order_and_parallel_tools_run_on_their_threads(make_agent):
    journal, counted = Journal(), Counted()
    agent = make_agent(journal, counted, Store(), script=script())
    result = agent.run_conversation("go")
    assert result.final_response == "all noted" and sorted(counted.ran) == [1, 2, 3]
    kinds = [kind for kind, _, _ in journal.seen]
    assert kinds == ["turn", "store", "model", "store", "tool", "tool", "model", "store", "tool", "model", "store"]
    me = threading.get_ident()
    assert all(hook_thread in (me,) for _, hook_thread, _ in journal.seen)  # asked on the agent's thread
    parallel = [run for kind, _, run in journal.seen[4:6]]
    assert all(run != me for run in parallel)  # the two parallel calls ran on pool threads
    assert all(replayed is False for *_, replayed in journal.observed)


def test_a_replayed_turn_calls_no_model_and_no_tool_and_says_replayed(make_agent):
    journal, first, store = Journal(), Counted(), Store()
    done = make_agent(journal, first, store, script=script()).run_conversation("go", task_id="t", turn_id="turn-1")
    journal.observed.clear()
    first_times, journal.times = journal.times, []
    again = Counted()
    agent = make_agent(journal, again, store, script=[])  # a model with nothing to say: any call would show
    replay = agent.run_conversation("go", task_id="t", turn_id="turn-1")
    assert replay.final_response == done.final_response == "all noted"
    assert agent.scripted.requests == [] and again.ran == []
    assert [m for m in replay.messages] == [m for m in done.messages]
    assert replay.usage == done.usage and replay.api_calls == done.api_calls == 3
    assert {replayed for *_, replayed in journal.observed} == {True}
    assert [name for name, *_ in journal.observed].count("post_tool_call") == 3
    assert store.stored == done.messages  # stored once: the replay wrote nothing again
    assert journal.times == first_times and all(0 < start <= end for start, end in first_times)  # recorded too


@pytest.mark.parametrize("kept", [3, 5])
def test_a_turn_cut_short_resumes_after_its_last_recorded_step(make_agent, kept):
    """As after kill -9: the record holds the first steps only; those are answered from it, the rest run."""
    journal, first, store = Journal(), Counted(), Store()
    make_agent(journal, first, store, script=script()).run_conversation("go", turn_id="turn-2")
    record = journal.turns["turn-2"]
    journal.turns["turn-2"] = {place: record[place] for place in sorted(record)[:kept]}
    again = Counted()
    live = script()[1:]  # the first model call is recorded either way (place 1)
    resumed = Store()
    agent = make_agent(journal, again, resumed, script=live)
    result = agent.run_conversation("go", turn_id="turn-2")
    assert result.final_response == "all noted"
    if kept == 5:
        assert again.ran == [3] and len(agent.scripted.requests) == 2
    else:  # the user message, the first model call and the assistant message: both tools run, once
        assert sorted(again.ran) == [1, 2, 3] and len(agent.scripted.requests) == 2
    assert json.loads(result.messages[-2]["content"]) == {"noted": 3}
    # what the cut-short run stored is not stored again: the resumed run writes only what came after
    assert resumed.stored == result.messages[2:]  # the tool results went with the next write


def test_a_replayed_approval_is_not_asked_again(make_agent):
    from kernel.types import Approve

    class Guard:
        __name__ = "guard"

        def __init__(self):
            self.asked = 0

        @hookimpl
        def pre_tool_call(self, call):
            return Approve("note needs approval")

        @hookimpl
        def approve_tool_call(self):
            self.asked += 1
            return True

    journal, guard = Journal(), Guard()
    make_agent(journal, guard, Counted(), script=script()).run_conversation("go", turn_id="turn-3")
    assert guard.asked == 3
    second = Guard()
    counted = Counted()
    make_agent(journal, second, counted, script=[]).run_conversation("go", turn_id="turn-3")
    assert second.asked == 0 and counted.ran == []


def test_a_plugins_own_side_effect_is_a_step_that_a_replay_does_not_repeat(make_agent):
    class Notifier:
        """Sends a notification after each step: once, even when the turn is replayed."""

        __name__ = "notifier"

        def __init__(self):
            self.sent: list = []

        @hookimpl
        def on_step(self, step, agent):
            agent.step("notify", step)(lambda: self.sent.append(step))

    journal, first = Journal(), Notifier()
    make_agent(journal, first, Counted(), script=script()).run_conversation("go", turn_id="turn-4")
    assert first.sent == [1, 2, 3] and "notify" in [kind for kind, _, _ in journal.seen]
    again = Notifier()
    make_agent(journal, again, Counted(), script=[]).run_conversation("go", turn_id="turn-4")
    assert again.sent == []
