"""Tool execution: the one place where a tool runs.

:func:`execute_batch` plans a batch of tool calls into maximal parallel runs
separated by sequential barriers, runs them (parallel runs on a thread pool)
and returns the tool messages in the original call order. Every call goes
through the same three steps: the decision (``pre_tool_call`` with block /
approve / rewrite, the approval question), the handler, and the after-hooks
(``post_tool_call``, ``transform_tool_result``). Unknown tools, unreadable
arguments and handler exceptions become error results the model can read.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Optional

from kernel.messages import tool_message
from kernel.types import Interrupted, describe, is_user_interrupt
from kernel.types import Tool, ToolContext, ToolError

MAX_WORKERS = 8


@dataclass
class Call:
    """One tool call of the model, parsed."""

    index: int
    id: str
    name: str
    raw_arguments: str
    args: Optional[dict] = None
    parse_error: str = ""


def parse_calls(tool_calls: list) -> list:
    calls = []
    for i, tc in enumerate(tool_calls):
        fn = tc.get("function") or {}
        raw = fn.get("arguments")
        call = Call(index=i, id=tc.get("id") or f"call_{i}", name=fn.get("name") or "", raw_arguments=raw or "")
        if raw in (None, ""):
            call.args = {}
        else:
            try:
                value = json.loads(raw) if isinstance(raw, str) else raw
            except (TypeError, ValueError) as exc:
                call.parse_error = f"the arguments are not valid JSON ({exc}); send a JSON object"
            else:
                if isinstance(value, dict):
                    call.args = value
                else:
                    call.parse_error = f"the arguments must be a JSON object, got {type(value).__name__}"
        calls.append(call)
    return calls


def _scope(tool: Tool, call: Call) -> Optional[str]:
    if not tool.path_arg or not call.args:
        return None
    value = call.args.get(tool.path_arg)
    if not isinstance(value, str) or not value:
        return None
    return os.path.normpath(os.path.abspath(os.path.expanduser(value)))


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep) or b.startswith(a.rstrip(os.sep) + os.sep)


def plan(calls: list, tools: dict) -> list:
    """Split calls into ``[("parallel"|"sequential", [Call, ...]), ...]``.

    A call joins the current parallel run when its tool is parallel-safe, not
    interactive, and (for path-scoped tools) its path overlaps no path already
    in the run. Anything else is a barrier that runs alone.
    """
    segments: list = []
    run: list = []
    paths: list = []

    def flush():
        if run:
            segments.append(("parallel" if len(run) > 1 else "sequential", list(run)))
            run.clear()
            paths.clear()

    for call in calls:
        tool = tools.get(call.name)
        safe = tool is not None and call.args is not None and tool.parallel_safe and not tool.interactive
        scope = _scope(tool, call) if safe and tool.path_arg else None
        if safe and tool.path_arg and scope is None:
            safe = False  # a path-scoped call without a path: nothing to prove it is independent
        if safe and scope is not None and any(_overlaps(scope, p) for p in paths):
            flush()
        if not safe:
            flush()
            segments.append(("sequential", [call]))
            continue
        run.append(call)
        if scope is not None:
            paths.append(scope)
    flush()
    return segments


@dataclass
class Outcome:
    """What became of one call: its result text and how it ended."""

    result: str
    status: str = "ok"  # ok / error / blocked / interrupted
    error_type: Optional[str] = None
    error_message: Optional[str] = None
    duration_ms: float = 0.0


INTERRUPTED = "not run: the user interrupted the turn"


def _interrupted() -> Outcome:
    return Outcome(_error(INTERRUPTED), "interrupted", "interrupted", INTERRUPTED)

APPROVED = ("once", "session", "always")  # what approve_tool_call may answer besides True


def execute_batch(agent, tool_calls: list, turn) -> list:
    """Run the model's tool calls; return tool messages in call order.

    Three phases: (1) decide, serially in call order on the agent's thread
    (``pre_tool_call``, rewrites, the approval question: never two at once);
    (2) plan the parallel runs on the final arguments; (3) run the handlers,
    parallel runs on a pool. ``post_tool_call`` and the other after-hooks fire
    on the agent's thread in call order, exactly once per call, whatever the
    outcome. An interrupt leaves every call not yet run with a result saying
    so, so the history stays whole."""
    calls = parse_calls(tool_calls)
    outcomes: list = [None] * len(calls)
    try:
        runnable = []
        for call in calls:
            early = _decide(agent, call, turn)
            if early is None:
                runnable.append(call)
            else:
                outcomes[call.index] = early
        for kind, segment in plan(runnable, agent.tools):
            if agent.interrupted:
                break
            for call in segment:
                agent.emit("on_tool_start", tool_name=call.name, args=call.args, tool_call_id=call.id)
            if kind == "parallel" and len(segment) > 1:
                with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(segment)), thread_name_prefix="hermes-tool") as pool:
                    futures = [(call, pool.submit(_run, agent, call, turn)) for call in segment]
                    for call, future in futures:
                        outcomes[call.index] = future.result()
            else:
                for call in segment:
                    outcomes[call.index] = _run(agent, call, turn)
    except Interrupted:
        agent.interrupt()
    results = []
    for call, outcome in zip(calls, outcomes):
        if outcome is None:
            outcome = _interrupted()
        results.append(tool_message(call.id, _after(agent, call, turn, outcome)))
    return results


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


def _run_handler(tool: Tool, args: dict, ctx: ToolContext) -> Any:
    result = tool.handler(args, ctx)
    if inspect.isawaitable(result):
        # Async handlers are bridged explicitly; each tool thread has no running loop.
        async def _await(awaitable):
            return await awaitable

        result = asyncio.run(_await(result))
    return result


def _common(agent, call: Call, turn) -> dict:
    return dict(tool_name=call.name, task_id=turn.task_id, session_id=agent.session_id, tool_call_id=call.id,
                turn_id=turn.turn_id, api_request_id=turn.api_request_id, agent=agent)


def _decide(agent, call: Call, turn) -> Optional[Outcome]:
    """Phase 1 for one call: None to run it, else why it will not run."""
    if agent.interrupted:
        return _interrupted()
    if call.name not in agent.tools:
        from kernel.hints import close_matches

        near = close_matches(call.name, agent.tools)
        hint = f" Did you mean {', '.join(near)}?" if near else ""
        message = f"unknown tool '{call.name}'.{hint} Available tools: {', '.join(sorted(agent.tools)) or 'none'}"
        return Outcome(_error(message), "error", "unknown_tool", message)
    if call.parse_error:
        message = f"{call.name}: {call.parse_error}"
        return Outcome(_error(message), "error", "invalid_arguments", message)
    blocked = _pre_tool_call(agent, agent.hook, call.args, _common(agent, call, turn))
    if blocked is not None:
        return Outcome(_error(blocked), "blocked", "plugin_block", blocked)
    return None


def _run(agent, call: Call, turn) -> Outcome:
    """Phase 3 for one call: the handler alone (on a pool thread for parallel runs)."""
    tool = agent.tools[call.name]
    ctx = ToolContext(agent=agent, tool_name=call.name, tool_call_id=call.id, task_id=turn.task_id,
                      session_id=agent.session_id, turn_id=turn.turn_id, api_request_id=turn.api_request_id)
    started = time.perf_counter()
    try:
        outcome = Outcome(_as_text(_run_handler(tool, call.args, ctx)))
    except ToolError as exc:
        outcome = Outcome(_error(str(exc)), "error", "tool_error", str(exc))
    except BaseException as exc:  # SystemExit in a tool too: the model reads it, the agent goes on
        if is_user_interrupt(exc):
            outcome = _interrupted()
        else:
            message = f"{call.name} failed: {describe(exc)}"
            outcome = Outcome(_error(message), "error", "exception", message)
    outcome.duration_ms = round((time.perf_counter() - started) * 1000, 3)
    return outcome


def _after(agent, call: Call, turn, outcome: Outcome) -> str:
    """The after-hooks of one call, on the agent's thread; the final result text."""
    hook = agent.hook
    result = agent.secrets.mask(outcome.result)  # a key a tool printed reaches no hook, model or store
    info = dict(_common(agent, call, turn), args=call.args if call.args is not None else {}, result=result,
                duration_ms=outcome.duration_ms, status=outcome.status, error_type=outcome.error_type,
                error_message=agent.secrets.mask(outcome.error_message))
    if hook.post_tool_call.get_hookimpls():
        hook.post_tool_call(**info)
    if hook.transform_tool_result.get_hookimpls():
        for replaced in hook.transform_tool_result(**info):
            if isinstance(replaced, str):
                result = replaced
                break
    agent.emit("on_tool_complete", tool_name=call.name, tool_call_id=call.id, result=result,
               duration_ms=outcome.duration_ms, status=outcome.status)
    return result


def _pre_tool_call(agent, hook, args: dict, common: dict) -> Optional[str]:
    """Fire ``pre_tool_call``; return a block message, or None to run the tool.

    When a plugin rewrites the arguments with ``{"action": "rewrite"}``, the
    hook fires once more with the final arguments, so that guards judge what
    will actually run (in-place rewrites are seen by guards called later)."""
    if not hook.pre_tool_call.get_hookimpls():
        return None
    for _pass in range(2):
        approvals, rewritten = [], False
        for directive in hook.pre_tool_call(args=args, **common):
            if not isinstance(directive, dict):
                continue
            action = directive.get("action")
            if action == "block":
                return str(directive.get("message") or f"blocked by a plugin: {common['tool_name']}")
            if action == "approve":
                approvals.append(directive)
            elif action == "rewrite" and isinstance(directive.get("args"), dict) and directive["args"] != args:
                new_args = dict(directive["args"])
                args.clear()  # the same dict object goes on to the tool
                args.update(new_args)
                rewritten = True
        if not rewritten:
            break
    for directive in approvals:
        message = str(directive.get("message") or f"{common['tool_name']} needs approval")
        answer = hook.approve_tool_call(
            tool_name=common["tool_name"], args=args, message=message,
            rule_key=str(directive.get("rule_key") or ""), agent=agent,
        )
        if not (answer is True or answer in APPROVED):
            why = "denied by the user" if answer is False or answer == "deny" else "nobody was available to approve it"
            return f"not run: {message} ({why})"
    return None
