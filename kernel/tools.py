"""The one place a tool runs. :func:`execute_batch` takes each call through the decision (``pre_tool_call``, the
approval question), the handler (parallel runs on a pool, barriers alone) and the after-hooks, and returns the
results in call order. Unknown tools, unreadable arguments and handler exceptions become error results the model can
read."""

from __future__ import annotations

import inspect
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from functools import partial
from typing import Any, Optional

from kernel.hints import did_you_mean
from kernel.messages import tool_message
from kernel.types import (Approve, Block, Interrupted, Rewrite, Tool, ToolCall, ToolContext, ToolError, ToolOutcome,
                          describe, is_user_interrupt)

MAX_WORKERS = 8
APPROVED = ("once", "session", "always")  # what approve_tool_call may answer besides True
INTERRUPTED = "not run: the user interrupted the turn"
CUT = "\n[hermes: the result was {size} characters; only the first {limit} are kept (tools.max_result_chars)]"


def parse_calls(tool_calls: list, agent, turn) -> list:
    """The model's tool calls as :class:`~kernel.types.ToolCall` records, arguments parsed."""
    calls = []
    for i, tc in enumerate(tool_calls):
        fn = tc.get("function") or {}
        raw, name = fn.get("arguments"), fn.get("name") or ""
        call = ToolCall(name=name, args={}, id=tc.get("id") or f"call_{i}", session_id=agent.session_id,
                        task_id=turn.task_id, turn_id=turn.turn_id, api_request_id=turn.api_request_id,
                        tool=agent.tools.get(name), index=i, raw_arguments=raw if isinstance(raw, str) else "")
        if raw not in (None, ""):
            try:
                value = json.loads(raw) if isinstance(raw, str) else raw
            except (TypeError, ValueError, RecursionError) as exc:  # nested past the parser's depth: not arguments
                call.parse_error = f"the arguments are not valid JSON ({exc}); send a JSON object" + (
                    "; your answer reached its output limit inside them: send less in one call" if turn.cut else "")
            else:
                if isinstance(value, dict):
                    call.args = value
                else:
                    call.parse_error = f"the arguments must be a JSON object, got {type(value).__name__}"
        calls.append(call)
    return calls


def _scope(call: ToolCall) -> Optional[str]:
    value = call.args.get(call.tool.path_arg)
    if not isinstance(value, str) or not value:
        return None
    return os.path.normpath(os.path.abspath(os.path.expanduser(value)))


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep) or b.startswith(a.rstrip(os.sep) + os.sep)


def plan(calls: list) -> list:
    """``[("parallel"|"sequential", [ToolCall, ...]), ...]``: a call joins the parallel run when its tool is
    parallel-safe, not interactive and (if path-scoped) its path overlaps none in the run; any other runs alone."""
    segments, run, paths = [], [], []  # the plan, the parallel run being built, the paths it touches

    def flush():
        if run:
            segments.append(("parallel" if len(run) > 1 else "sequential", list(run)))
            run.clear()
            paths.clear()

    for call in calls:
        tool = call.tool
        safe = tool is not None and not call.parse_error and tool.parallel_safe and not tool.interactive
        scope = _scope(call) if safe and tool.path_arg else None
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


def _failed(status: str, error_type: str, message: str) -> ToolOutcome:
    return ToolOutcome(json.dumps({"error": message}, ensure_ascii=False), status, error_type, message)


def _interrupted() -> ToolOutcome:
    return _failed("interrupted", "interrupted", INTERRUPTED)


def execute_batch(agent, tool_calls: list, turn) -> list:
    """The tool messages of the model's calls, in call order. (1) Decide, in call order on the agent's thread (never
    two questions at once); (2) plan parallel runs on the final arguments; (3) run the handlers. The after-hooks
    fire once per call on the agent's thread whatever the outcome; a call an interrupt left unrun gets a result
    saying so."""
    calls = parse_calls(tool_calls, agent, turn)
    outcomes: list = [None] * len(calls)
    try:
        runnable = []
        for call in calls:
            if (early := _decide(agent, call)) is None:
                runnable.append(call)
            else:
                outcomes[call.index] = early
        for kind, segment in plan(runnable):
            if agent.interrupted:
                break
            for call in segment:
                agent.emit("on_tool_start", tool_name=call.name, args=call.args, tool_call_id=call.id)
            runs = [(call, agent.step("tool", call), partial(_run, agent, call)) for call in segment]
            if kind == "parallel" and len(segment) > 1:
                with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(segment)), thread_name_prefix="hermes-tool",
                                        initializer=lambda: agent.threads.add(threading.get_ident())) as pool:
                    # each in a copy of this thread's context: an engine's step knows its turn there too
                    futures = [(call, pool.submit(copy_context().run, step, work)) for call, step, work in runs]
                    for call, future in futures:
                        outcomes[call.index] = future.result()
                agent.threads &= {threading.get_ident()}  # the pool's threads ended
            else:
                for call, step, work in runs:
                    outcomes[call.index] = step(work)
    except Interrupted:
        agent.interrupt()
    return [tool_message(call.id, _after(agent, call, outcome or _interrupted()))
            for call, outcome in zip(calls, outcomes)]


def _as_text(value: Any, agent) -> str:
    """A handler's result as the text the model reads and the store keeps (at most ``tools.max_result_chars``)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    limit = agent.config.get("tools.max_result_chars")
    return text[:limit] + CUT.format(size=len(text), limit=limit) if limit and len(text) > limit else text


def _run_handler(tool: Tool, args: dict, ctx: ToolContext) -> Any:
    result = tool.handler(args, ctx)
    return ctx.agent.host.run_awaitable(result) if inspect.isawaitable(result) else result  # an async handler


def _decide(agent, call: ToolCall) -> Optional[ToolOutcome]:
    """Phase 1 for one call: None to run it, else why it will not run."""
    if agent.interrupted:
        return _interrupted()
    if call.tool is None:
        return _failed("error", "unknown_tool", f"unknown tool '{call.name}'{did_you_mean(call.name, agent.tools)}. "
                                                f"Available tools: {', '.join(sorted(agent.tools)) or 'none'}")
    if call.parse_error:
        return _failed("error", "invalid_arguments", f"{call.name}: {call.parse_error}")
    blocked = _pre_tool_call(agent, call)
    return None if blocked is None else _failed("blocked", "plugin_block", blocked)


def _run(agent, call: ToolCall) -> ToolOutcome:
    """Phase 3 for one call: the handler alone (on a pool thread for parallel runs)."""
    ctx = ToolContext(agent=agent, tool_name=call.name, tool_call_id=call.id, task_id=call.task_id,
                      session_id=call.session_id, turn_id=call.turn_id, api_request_id=call.api_request_id)
    started = time.perf_counter()
    try:
        if agent.interrupted:  # its pool thread began after the interrupt, which found no plugin code to stop there
            raise Interrupted()
        outcome = ToolOutcome(_as_text(_run_handler(call.tool, call.args, ctx), agent))
        if agent.interrupted:  # it returned because of the interrupt: its output may stop short
            outcome.status = outcome.error_type = "interrupted"
    except ToolError as exc:
        outcome = _failed("error", "tool_error", str(exc))
    except BaseException as exc:  # SystemExit in a tool too: the model reads it, the agent goes on
        outcome = _interrupted() if is_user_interrupt(exc) else \
            _failed("error", "exception", f"{call.name} failed: {describe(exc)}")
    outcome.duration_ms = round((time.perf_counter() - started) * 1000, 3)
    return outcome


def _after(agent, call: ToolCall, outcome: ToolOutcome) -> str:
    """The after-hooks of one call, on the agent's thread; the final result text."""
    hook, mask = agent.hook, agent.secrets.mask
    # a key a tool printed reaches no hook, model or store
    outcome.result, outcome.error_message = mask(outcome.result), mask(outcome.error_message)
    if hook.post_tool_call.get_hookimpls():
        hook.post_tool_call(call=call, outcome=outcome, agent=agent)
    result = outcome.result
    if hook.transform_tool_result.get_hookimpls():
        for replaced in hook.transform_tool_result(call=call, outcome=outcome, agent=agent):
            if isinstance(replaced, str):
                result = replaced
                break
    agent.emit("on_tool_complete", tool_name=call.name, tool_call_id=call.id, result=result,
               duration_ms=outcome.duration_ms, status=outcome.status)
    return result


def _pre_tool_call(agent, call: ToolCall) -> Optional[str]:
    """Why the call may not run (``pre_tool_call``, then the approval question), or None. After a Rewrite the hook
    fires once more, so guards judge what will run."""
    hook = agent.hook
    if not hook.pre_tool_call.get_hookimpls():
        return None
    for _pass in range(2):
        approvals, rewritten = [], False
        for decision in hook.pre_tool_call(call=call, agent=agent):
            if isinstance(decision, Block):
                return decision.message or f"blocked by a plugin: {call.name}"
            if isinstance(decision, Approve):
                approvals.append(decision)
            elif isinstance(decision, Rewrite) and isinstance(decision.args, dict):
                if decision.args != call.args:
                    new_args = dict(decision.args)
                    call.args.clear()  # the same dict object goes on to the tool
                    call.args.update(new_args)
                    rewritten = True
            elif decision is not None:  # a guard whose answer cannot be read: fail closed
                return (f"blocked: a pre_tool_call implementation answered {type(decision).__name__}, "
                        "not Block, Approve or Rewrite")
        if not rewritten:
            break
    for decision in approvals:
        message = decision.message or f"{call.name} needs approval"
        answer = agent.step("approval", call)(partial(hook.approve_tool_call, tool_name=call.name, args=call.args,
                                                      message=message, rule_key=decision.rule_key, agent=agent))
        if not (answer is True or answer in APPROVED):
            why = "denied by the user" if answer is False or answer == "deny" else "nobody was available to approve it"
            return f"not run: {message} ({why})"
    return None
