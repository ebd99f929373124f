"""Tool loops: the model is told when it repeats a failing or fruitless tool call (tool_loop_guardrails).

Within a turn, a model may retry a failing call unchanged, fail with one tool again and again, or ask a read-only tool
the same question for the same answer. hermes-agent's ``tool_loop_guardrails`` (its keys and defaults): past
``warn_after`` the result the model reads ends with a note saying so; with ``hard_stop_enabled``, past
``hard_stop_after`` the call is not run (the model reads why), and a tool that failed that often is not run again
this turn. Counts start again with each turn.

A failure is a call that ended in an error, or a command that exited non-zero (``terminal``'s ``exit_code``); a
blocked call (a denied approval) is not one. Read-only tools are those that may run side by side (``parallel_safe``:
reads, searches, MCP tools annotated read-only)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kernel import hookimpl

KEY = "tool_loop_guardrails"
STATE = "loop_guard"
# kind -> (warn after, stop after), hermes-agent's defaults
LIMITS = {"exact_failure": (2, 5), "same_tool_failure": (3, 8), "idempotent_no_progress": (2, 5)}


@hookimpl
def register_config(declare):
    declare(f"{KEY}.warnings_enabled", bool, True, "tell the model when it repeats a failing or fruitless tool call")
    declare(f"{KEY}.hard_stop_enabled", bool, False, "past hard_stop_after, do not run such a call again this turn")
    for kind, (warn, stop) in LIMITS.items():
        what = {"exact_failure": "failures of one call with the same arguments",
                "same_tool_failure": "failures of one tool", "idempotent_no_progress":
                "same results of one read-only call"}[kind]
        declare(f"{KEY}.warn_after.{kind}", int, warn, f"{what} in a turn before the model is told", minimum=1)
        declare(f"{KEY}.hard_stop_after.{kind}", int, stop, f"{what} in a turn before it is not run again",
                minimum=1)


@dataclass
class Turn:
    """What one turn's calls came to: failures by call (tool and arguments) and by tool, the last result and its
    repeats by read-only call, the notes for results still to be read, the tools not run again."""

    turn_id: str
    failed: dict = field(default_factory=dict)
    tool_failed: dict = field(default_factory=dict)
    same: dict = field(default_factory=dict)  # call -> (the result's hash, how often in a row)
    notes: dict = field(default_factory=dict)  # tool call id -> note
    stopped: dict = field(default_factory=dict)  # tool -> why it is not run again this turn


def _turn(agent, turn_id: str) -> Turn:
    turn = agent.state.get(STATE)
    if turn is None or turn.turn_id != turn_id:
        turn = agent.state[STATE] = Turn(turn_id)
    return turn


def _limit(agent, which: str, kind: str) -> int:
    value = agent.config.get(f"{KEY}.{which}.{kind}")
    return value if isinstance(value, int) and value >= 1 else LIMITS[kind][which == "hard_stop_after"]


def _call(call) -> tuple:
    return call.name, hash(json.dumps(call.args, sort_keys=True, default=str))


def _read_only(call) -> bool:
    return bool(getattr(call.tool, "parallel_safe", False))


def _failed(outcome) -> bool:
    if outcome.status == "error":
        return True
    result = outcome.result if outcome.status == "ok" else ""
    if not (result.startswith("{") and '"exit_code"' in result):
        return False
    try:
        code = json.loads(result).get("exit_code")
    except (ValueError, AttributeError):
        return False
    return isinstance(code, int) and code != 0


@hookimpl(tryfirst=True)  # a call not run asks nobody (an approval) first
def pre_tool_call(call, agent):
    if agent.config.get(f"{KEY}.hard_stop_enabled") is not True:
        return None
    from kernel.types import Block

    turn = _turn(agent, call.turn_id)
    if call.name in turn.stopped:
        return Block(turn.stopped[call.name])
    key = _call(call)
    if (failures := turn.failed.get(key, 0)) >= _limit(agent, "hard_stop_after", "exact_failure"):
        return Block(f"Not run: {call.name} already failed {failures} times with these same arguments in this turn. "
                     "Change the arguments or the approach, or tell the user what stands in the way.")
    repeats = turn.same.get(key, (None, 0))[1]
    if _read_only(call) and repeats >= _limit(agent, "hard_stop_after", "idempotent_no_progress"):
        return Block(f"Not run: {call.name} already gave the same result {repeats} times for these arguments in "
                     "this turn; use that result, or ask something else.")
    return None


@hookimpl
def post_tool_call(call, outcome, agent):
    if outcome.status in ("blocked", "interrupted"):
        return
    turn, key = _turn(agent, call.turn_id), _call(call)
    warn = agent.config.get(f"{KEY}.warnings_enabled") is not False
    if not _failed(outcome):
        turn.failed.pop(key, None)
        turn.tool_failed.pop(call.name, None)
        if _read_only(call):
            last, repeats = turn.same.get(key, (None, 0))
            repeats = repeats + 1 if last == hash(outcome.result) else 1
            turn.same[key] = (hash(outcome.result), repeats)
            if warn and repeats >= _limit(agent, "warn_after", "idempotent_no_progress"):
                turn.notes[call.id] = (f"{call.name} gave this same result {repeats} times for these arguments. Use "
                                       "it, or ask something else, instead of repeating the call.")
        return
    turn.same.pop(key, None)
    failures = turn.failed[key] = turn.failed.get(key, 0) + 1
    tool_failures = turn.tool_failed[call.name] = turn.tool_failed.get(call.name, 0) + 1
    if agent.config.get(f"{KEY}.hard_stop_enabled") is True and \
            tool_failures >= _limit(agent, "hard_stop_after", "same_tool_failure"):
        turn.stopped[call.name] = (f"Not run: {call.name} failed {tool_failures} times in this turn, so it is not run "
                                   "again in it. Answer with what you have, or tell the user what stands in the way.")
        turn.notes[call.id] = f"{call.name} failed {tool_failures} times in this turn: it will not be run again in it."
    elif warn and failures >= _limit(agent, "warn_after", "exact_failure"):
        turn.notes[call.id] = (f"{call.name} has now failed {failures} times with these same arguments. Read the "
                               "error and change something (the arguments, the approach or the tool) instead of "
                               "repeating it.")
    elif warn and tool_failures >= _limit(agent, "warn_after", "same_tool_failure"):
        turn.notes[call.id] = (f"{call.name} has failed {tool_failures} times in this turn. Look at what the errors "
                               "say before trying again: a small diagnostic step, another path or another tool; if "
                               "something outside stands in the way, say so.")


@hookimpl
def transform_tool_result(call, outcome, agent) -> Any:
    turn = agent.state.get(STATE)
    note = turn.notes.pop(call.id, None) if turn is not None and turn.turn_id == call.turn_id else None
    return f"{outcome.result}\n\n[hermes: {note}]" if note else None
