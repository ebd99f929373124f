"""Tool execution: the one place where a tool runs.

:func:`execute_batch` plans a batch of tool calls into maximal parallel runs
separated by sequential barriers, runs them (parallel runs on a thread pool)
and returns the tool messages in the original call order. Every call goes
through :func:`execute_call`, which fires ``pre_tool_call`` (block / approve /
rewrite), the approval question, the handler, ``post_tool_call`` and
``transform_tool_result``. Unknown tools, unreadable arguments and handler
exceptions become error results the model can read.
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


def execute_batch(agent, tool_calls: list, turn) -> list:
    """Run the model's tool calls; return tool messages in call order."""
    calls = parse_calls(tool_calls)
    results: list = [None] * len(calls)
    for kind, segment in plan(calls, agent.tools):
        if kind == "parallel" and len(segment) > 1:
            with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(segment)), thread_name_prefix="hermes-tool") as pool:
                futures = {pool.submit(execute_call, agent, call, turn): call for call in segment}
                for future, call in futures.items():
                    results[call.index] = future.result()
        else:
            for call in segment:
                results[call.index] = execute_call(agent, call, turn)
    return [tool_message(call.id, content) for call, content in zip(calls, results)]


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


def execute_call(agent, call: Call, turn) -> str:
    """Execute one tool call through every hook; return the result text."""
    if agent.interrupted:
        return _error("not run: the user interrupted the turn")
    hook = agent.hook
    tool = agent.tools.get(call.name)
    common = dict(
        tool_name=call.name,
        task_id=turn.task_id,
        session_id=agent.session_id,
        tool_call_id=call.id,
        turn_id=turn.turn_id,
        api_request_id=turn.api_request_id,
        agent=agent,
    )
    args = call.args if call.args is not None else {}
    started = time.perf_counter()
    status, error_type, error_message = "ok", None, None

    if tool is None:
        from kernel.plugins import close_matches

        near = close_matches(call.name, agent.tools)
        hint = f" Did you mean {', '.join(near)}?" if near else ""
        status, error_type = "error", "unknown_tool"
        error_message = f"unknown tool '{call.name}'.{hint} Available tools: {', '.join(sorted(agent.tools)) or 'none'}"
        result = _error(error_message)
    elif call.parse_error:
        status, error_type, error_message = "error", "invalid_arguments", f"{call.name}: {call.parse_error}"
        result = _error(error_message)
    else:
        blocked = _pre_tool_call(agent, hook, args, common)
        if blocked is not None:
            status, error_type, error_message = "blocked", "plugin_block", blocked
            result = _error(blocked)
        else:
            agent.emit("on_tool_start", tool_name=call.name, args=args, tool_call_id=call.id)
            ctx = ToolContext(
                agent=agent,
                tool_name=call.name,
                tool_call_id=call.id,
                task_id=turn.task_id,
                session_id=agent.session_id,
                turn_id=turn.turn_id,
                api_request_id=turn.api_request_id,
            )
            try:
                result = _as_text(_run_handler(tool, args, ctx))
            except ToolError as exc:
                status, error_type, error_message = "error", "tool_error", str(exc)
                result = _error(str(exc))
            except Exception as exc:
                status, error_type = "error", "exception"
                error_message = f"{call.name} failed: {type(exc).__name__}: {exc}"
                result = _error(error_message)
    duration_ms = round((time.perf_counter() - started) * 1000, 3)
    outcome = dict(common, args=args, result=result, duration_ms=duration_ms, status=status,
                   error_type=error_type, error_message=error_message)
    if hook.post_tool_call.get_hookimpls():
        hook.post_tool_call(middleware_trace=[], **outcome)
    if hook.transform_tool_result.get_hookimpls():
        for replaced in hook.transform_tool_result(**outcome):
            if isinstance(replaced, str):
                result = replaced
                break
    agent.emit("on_tool_complete", tool_name=call.name, tool_call_id=call.id, result=result,
                duration_ms=duration_ms, status=status)
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
        for directive in hook.pre_tool_call(args=args, middleware_trace=[], **common):
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
        if answer is not True:
            why = "denied by the user" if answer is False else "nobody was available to approve it"
            return f"not run: {message} ({why})"
    return None
