"""Built-in plugin agent-tools: task list, questions to the user, subagents.

* ``todo``: the agent's task list, kept in ``agent.state["todo"]``;
* ``clarify``: ask the user a question through the ``clarify`` hook;
* ``delegate_task``: run sub-tasks in child agents with their own budget.

Delegation settings: ``delegation.max_iterations`` (50, each child's budget),
``delegation.max_concurrent_children`` (3), ``delegation.max_spawn_depth``
(1: children cannot delegate), ``delegation.max_summary_chars`` (24,000 for all
children's answers together), ``delegation.child_timeout_seconds`` (0: none);
``delegation.model`` (``provider``, ``base_url``, ``api_mode``, ``api_key_env``): another
model for the children, as an ``auxiliary`` block names one (empty: the parent's).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kernel import hookimpl
from kernel.types import Tool, ToolError
from plugins.tool_args import arg, check_args, clip, setting

# ==========================================================================
# todo

STATUSES = ("pending", "in_progress", "completed", "cancelled")
STATE_KEY = "todo"


def _todo_item(raw, index: int, existing: dict | None) -> dict:
    if not isinstance(raw, dict):
        raise ToolError(f"todo: todos[{index}] must be an object {{id, content, status}}, got {type(raw).__name__}")
    item = dict(existing or {})
    if raw.get("id") is not None:
        item["id"] = str(raw["id"])
    for key in ("content", "status"):
        if key in raw and raw[key] is not None:
            if not isinstance(raw[key], str):
                raise ToolError(f"todo: todos[{index}].{key} must be a string")
            item[key] = raw[key].strip()
    item.setdefault("status", "pending")
    if item["status"] not in STATUSES:
        raise ToolError(f"todo: todos[{index}].status {item['status']!r} is not one of {', '.join(STATUSES)}")
    if not item.get("content"):
        raise ToolError(f"todo: todos[{index}] needs a non-empty 'content' (what the task is)")
    return item


def _todo_view(items: list) -> dict:
    counts = {status: 0 for status in STATUSES}
    for item in items:
        counts[item["status"]] += 1
    return {"todos": items, "summary": dict(counts, total=len(items))}


def todo(args, ctx):
    args = check_args(args, "todo")
    todos = arg(args, "todos", list, tool="todo", default=None)
    merge = arg(args, "merge", bool, tool="todo", default=False)
    state = ctx.agent.state
    current = [dict(item) for item in state.get(STATE_KEY, [])]
    if todos is None:  # read the list
        return _todo_view(current)
    if merge:
        by_id = {item["id"]: item for item in current}
        for i, raw in enumerate(todos):
            key = str(raw.get("id")) if isinstance(raw, dict) and raw.get("id") is not None else None
            if key in by_id:
                by_id[key].update(_todo_item(raw, i, by_id[key]))
            else:
                item = _todo_item(raw, i, None)
                item.setdefault("id", _next_id(current))
                current.append(item)
                by_id[item["id"]] = item
        new = current
    else:
        new, seen = [], set()
        for i, raw in enumerate(todos):
            item = _todo_item(raw, i, None)
            item.setdefault("id", _next_id(new))
            if item["id"] in seen:
                raise ToolError(f"todo: id {item['id']!r} appears twice; give every task its own id")
            seen.add(item["id"])
            new.append(item)
    state[STATE_KEY] = new
    return _todo_view([dict(item) for item in new])


def _next_id(items: list) -> str:
    taken = {item.get("id") for item in items}
    n = len(items) + 1
    while str(n) in taken:
        n += 1
    return str(n)


TODO_TOOL = Tool(
    name="todo",
    description=(
        "Your task list for this session. Call with no arguments to read it. 'todos' is a list of "
        "{id, content, status} with status pending, in_progress, completed or cancelled. merge=false (default) "
        "replaces the whole list; merge=true updates items by id and appends new ones. Keep one task in_progress."
    ),
    parameters={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                },
            },
            "merge": {"type": "boolean", "description": "Update by id instead of replacing (default false)."},
        },
    },
    handler=todo,
    toolset="todo",
)

# ==========================================================================
# clarify

MAX_CHOICES = 4
NO_ANSWER = (
    "No user is available to answer right now. Proceed with your best judgement, "
    "state the assumption you made, and mention it in your final answer."
)


def clarify(args, ctx):
    args = check_args(args, "clarify")
    question = arg(args, "question", str, tool="clarify").strip()
    if not question:
        raise ToolError("clarify: 'question' is empty")
    choices = arg(args, "choices", list, tool="clarify", default=[])
    if any(not isinstance(c, (str, int, float)) or isinstance(c, bool) for c in choices):
        raise ToolError("clarify: 'choices' must be a list of short strings")
    choices = [str(c).strip() for c in choices if str(c).strip()]
    if len(choices) > MAX_CHOICES:
        raise ToolError(f"clarify: at most {MAX_CHOICES} choices; the user can always type another answer")
    ctx.agent.emit("on_clarify_request", question=question, choices=choices)
    answer = ctx.agent.ask("clarify", question=question, choices=choices)
    answered = not (answer is None or (isinstance(answer, str) and not answer.strip()))
    ctx.agent.emit("on_clarify_response", question=question, answered=answered)
    if not answered:
        return {"question": question, "answer": None, "note": NO_ANSWER}
    return {"question": question, "answer": str(answer)}


CLARIFY_TOOL = Tool(
    name="clarify",
    description=(
        "Ask the user a question when you cannot proceed well without their decision (ambiguous request, "
        "a choice with real consequences). Offer up to 4 'choices' when the answers are known; the user may also "
        "answer freely. Do not ask what you can find out yourself."
    ),
    parameters={
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The question, self-contained."},
            "choices": {"type": "array", "items": {"type": "string"}, "description": "Up to 4 suggested answers."},
        },
        "required": ["question"],
    },
    handler=clarify,
    toolset="clarify",
    interactive=True,
)

# ==========================================================================
# delegate_task

# Children never talk to the user or write long-term memory, nor message
# people, run code sandboxes or schedule jobs when a plugin offers those tools
# (hermes-agent's names, reachable through hermes-compat); whether they may
# delegate depends on the depth limit.
BLOCKED_IN_CHILDREN = frozenset({"clarify", "memory", "send_message", "execute_code", "cronjob"})
MAX_TASKS_PER_CALL = 10
ORCHESTRATORS = "delegation.orchestrator_enabled"

CHILD_PROMPT = """You are a subagent: a parent agent gave you one task. Work on it on your own with your tools; \
you cannot ask the user anything.

Task: {goal}
{context}
When you are done, answer with a concise report for the parent: what you did, what you found (with file paths, \
commands and numbers where they matter), and anything left undone or uncertain."""


def _task_items(args) -> list:
    goal = arg(args, "goal", str, tool="delegate_task", default="").strip()
    context = arg(args, "context", str, tool="delegate_task", default="").strip()
    tasks = arg(args, "tasks", list, tool="delegate_task", default=None)
    toolsets = arg(args, "toolsets", list, tool="delegate_task", default=None)
    if not tasks:
        if not goal:
            raise ToolError("delegate_task: give a 'goal' (one task) or 'tasks' (a list of {goal, context})")
        return [{"goal": goal, "context": context, "toolsets": toolsets}]
    items = []
    for i, task in enumerate(tasks):
        if isinstance(task, str):
            task = {"goal": task}
        if not isinstance(task, dict) or not isinstance(task.get("goal"), str) or not task["goal"].strip():
            raise ToolError(f"delegate_task: tasks[{i}] needs a non-empty 'goal' string")
        own = task.get("context") or ""
        if not isinstance(own, str):
            raise ToolError(f"delegate_task: tasks[{i}].context must be a string")
        task_toolsets = task.get("toolsets", toolsets)
        if task_toolsets is not None and not isinstance(task_toolsets, list):
            raise ToolError(f"delegate_task: tasks[{i}].toolsets must be a list of toolset names")
        shared = "\n\n".join(part for part in (goal and f"Overall goal: {goal}", context) if part)
        items.append({"goal": task["goal"].strip(), "context": "\n\n".join(p for p in (shared, own.strip()) if p),
                      "toolsets": task_toolsets})
    return items


def _child_tools(agent, wanted, child_can_delegate: bool) -> tuple:
    """(toolsets, blocked_tools) for ``spawn_child``: never more than the parent has. Narrowed to ``wanted``, a child
    keeps the parent's MCP servers unless ``delegation.inherit_mcp_toolsets`` (hermes-agent's key) is false."""
    registry = agent.host.registry
    # registered tools only: a context engine's tools are not toolset names, and
    # the child's own context engine adds them back
    allowed = set(agent.tools) & set(registry.tools)
    if wanted:
        try:
            allowed &= registry.expand_toolsets([str(name) for name in wanted])
        except KeyError as exc:
            raise ToolError(f"delegate_task: {exc.args[0]}") from None
    allowed -= BLOCKED_IN_CHILDREN
    if not child_can_delegate:
        allowed.discard("delegate_task")
    blocked = set(registry.tools) - allowed
    # a plugin's run-time tools (an MCP server's) go by their registered toolset: the parent's, of those asked for
    inherit = agent.config.get("delegation.inherit_mcp_toolsets") is not False
    theirs = {tool.toolset for name, tool in agent.tools.items() if name not in registry.tools
              and tool.toolset in registry.toolsets and (not wanted or "all" in wanted or tool.toolset in wanted
                                                         or inherit and tool.plugin == "mcp")}
    return sorted(allowed | theirs), sorted(blocked)  # nothing allowed: no tools (None would be every tool)


def _status(result) -> str:
    return {
        "completed": "completed",
        "interrupted_by_user": "interrupted",
        "budget_exhausted": "budget_exhausted",
    }.get(result.exit_reason, "error")


def _watch(parent, child, timeout: float, timed_out: threading.Event, finished: threading.Event) -> None:
    """Stop the child when its time is up (``delegation.child_timeout_seconds``).

    The kernel forwards the parent's interrupts to its children itself; the
    check here is a second line for a child started in the same instant.
    """
    deadline = time.monotonic() + timeout if timeout else None
    while not finished.wait(0.05):
        if parent.interrupted and not child.interrupted:
            child.interrupt()
        if deadline is not None and time.monotonic() >= deadline and not timed_out.is_set():
            timed_out.set()
            child.interrupt()


def _child_provider(agent):
    """The subagents' ProviderConfig when ``delegation.model`` (``provider``, ``base_url`` ...) names one; else
    None: the parent's. A malformed value is the tool's error (config check says it too)."""
    from hermes.host.config import ConfigError
    from plugins import auxiliary

    try:
        block = auxiliary.provider_config(getattr(agent, "config", None), "delegation", prefix="delegation")
    except ConfigError as exc:
        raise ToolError(f"delegate_task: {exc}") from None
    return auxiliary.joined(agent, block) if block is not None else None


def make_delegate_task(config=None) -> Tool:
    def delegate_task(args, ctx):
        args = check_args(args, "delegate_task")
        agent = ctx.agent
        cfg = getattr(agent, "config", None) or config
        max_depth = setting(cfg, "delegation.max_spawn_depth", 1, int, 0)
        max_children = setting(cfg, "delegation.max_concurrent_children", 3, int, 1)
        max_iterations = setting(cfg, "delegation.max_iterations", 50, int, 1)
        max_summary = setting(cfg, "delegation.max_summary_chars", 24_000, int, 200)
        child_timeout = setting(cfg, "delegation.child_timeout_seconds", 0, float, 0)
        approving = []  # nobody answers a subagent's approval question: no, unless config says yes
        if cfg is not None and cfg.get("delegation.subagent_auto_approve") is True:
            from plugins.approval import AutoApprove

            approving.append(AutoApprove("delegation.subagent_auto_approve"))

        depth = int(getattr(agent, "depth", 0) or 0)
        if depth >= max_depth:
            raise ToolError(
                f"delegate_task: delegation depth limit reached (this agent is at depth {depth}, "
                f"delegation.max_spawn_depth is {max_depth}); do the work yourself"
            )
        items = _task_items(args)
        if len(items) > MAX_TASKS_PER_CALL:
            raise ToolError(f"delegate_task: at most {MAX_TASKS_PER_CALL} tasks per call; group or split them")
        child_can_delegate = depth + 1 < max_depth and setting(cfg, ORCHESTRATORS, True, bool)
        provider = _child_provider(agent)
        role = "orchestrator" if child_can_delegate else "leaf"
        per_child = max(200, max_summary // len(items))
        plans = [(item, _child_tools(agent, item["toolsets"], child_can_delegate)) for item in items]

        def run_one(index: int, item: dict, tools: tuple) -> dict:
            out = {"task": index + 1, "goal": item["goal"]}
            if agent.interrupted:
                return dict(out, status="not_started", summary="not started: the parent was interrupted")
            started = time.monotonic()
            try:
                child = agent.spawn_child(toolsets=tools[0], blocked_tools=tools[1], max_iterations=max_iterations,
                                          provider=provider, callbacks=approving)
            except Exception as exc:  # AgentError: e.g. no tools left, unknown toolset
                return dict(out, status="error", summary=f"could not start the subagent: {exc}")
            child_id = f"{ctx.tool_call_id}-{index + 1}"
            child.state["subagent_id"] = child_id
            agent.emit(
                "subagent_start", parent_session_id=agent.session_id, parent_turn_id=ctx.turn_id,
                parent_subagent_id=agent.state.get("subagent_id"), child_session_id=child.session_id,
                child_subagent_id=child_id, child_role=role, child_goal=item["goal"],
            )
            timed_out, finished = threading.Event(), threading.Event()
            watcher = threading.Thread(target=_watch, args=(agent, child, child_timeout, timed_out, finished),
                                       name="hermes-child-watch", daemon=True)
            watcher.start()
            context = f"\nContext from the parent:\n{item['context']}\n" if item["context"] else ""
            try:
                result = child.run_conversation(CHILD_PROMPT.format(goal=item["goal"], context=context))
                status = "timed_out" if timed_out.is_set() else _status(result)
                text = result.final_response or result.error or ""
                api_calls = result.api_calls
            except Exception as exc:  # the child's loop catches its own errors; this is a last resort
                status, text, api_calls = "error", f"{type(exc).__name__}: {exc}", 0
            finally:
                finished.set()
                watcher.join()
                agent.release_child(child)
            if not text:
                text = {"interrupted": "interrupted before it answered", "timed_out": "stopped by the time limit"}.get(
                    status, "(no answer)")
            summary = clip(text.strip(), per_child)
            duration_ms = round((time.monotonic() - started) * 1000)
            agent.emit(
                "subagent_stop", parent_session_id=agent.session_id, parent_turn_id=ctx.turn_id,
                child_session_id=child.session_id, child_role=role, child_summary=summary,
                child_status=status, duration_ms=duration_ms,
            )
            return dict(out, status=status, summary=summary, api_calls=api_calls, duration_ms=duration_ms,
                        session_id=child.session_id)

        if len(plans) == 1:
            results = [run_one(0, *plans[0])]
        else:
            with ThreadPoolExecutor(max_workers=min(max_children, len(plans)), thread_name_prefix="hermes-child") as pool:
                futures = [pool.submit(run_one, i, item, tools) for i, (item, tools) in enumerate(plans)]
                results = [f.result() for f in futures]
        done = sum(1 for r in results if r["status"] == "completed")
        return {"results": results, "summary": f"{done} of {len(results)} delegated tasks completed"}

    return Tool(
        name="delegate_task",
        description=(
            "Hand self-contained work to subagents that run with their own tools and budget and report back a "
            "summary. Give one 'goal' (with 'context': everything the subagent needs, it sees nothing of this "
            f"conversation) or a list of independent 'tasks' (run in parallel, up to {MAX_TASKS_PER_CALL}). "
            "Subagents cannot ask the user questions."
        ),
        parameters={
            "type": "object",
            "properties": {
                "goal": {"type": "string", "description": "What the subagent must achieve."},
                "context": {"type": "string", "description": "Facts, paths and constraints the subagent needs."},
                "tasks": {
                    "type": "array",
                    "description": "Several independent tasks, each {goal, context}.",
                    "items": {
                        "type": "object",
                        "properties": {"goal": {"type": "string"}, "context": {"type": "string"}},
                        "required": ["goal"],
                    },
                },
                "toolsets": {"type": "array", "items": {"type": "string"},
                             "description": "Limit the subagents to these toolsets (default: your tools)."},
            },
        },
        handler=delegate_task,
        toolset="delegation",
    )


# ==========================================================================
# hooks


@hookimpl
def register_config(declare):
    declare("delegation.max_iterations", int, 50, "each subagent's iteration budget", minimum=1)
    declare("delegation.max_concurrent_children", int, 3, "subagents of one delegate_task call running at once", minimum=1)
    declare("delegation.max_spawn_depth", int, 1, "how deep subagents may delegate (1: children cannot)", minimum=0)
    declare(ORCHESTRATORS, bool, True, "subagents may delegate in turn where max_spawn_depth allows; false: never "
            "(hermes-agent's switch)")
    declare("delegation.max_summary_chars", int, 24_000, "characters of all children's answers the parent reads", minimum=200)
    declare("delegation.child_timeout_seconds", float, 0, "seconds a subagent may run (0: no limit)", minimum=0)
    declare("delegation.inherit_mcp_toolsets", bool, True, "a subagent given toolsets of its own keeps the parent's "
            "MCP servers too (false: only those it is given)")
    declare("delegation.subagent_auto_approve", bool, False, "a subagent's call that needs approval runs (said in "
            "the log) instead of being refused: nobody can be asked while the parent's turn runs")
    for field in ("model", "provider", "base_url", "api_mode", "api_key_env"):  # hermes-agent's, but api_key_env
        declare(f"delegation.{field}", str, "", f"the subagents' {field} (empty: the conversation's)")
    declare("delegation.api_key", str, "", "hermes-agent's key written in config: used, but it belongs in the "
            "environment (delegation.api_key_env names the variable)")


@hookimpl
def on_session_start(agent):
    from plugins import auxiliary

    auxiliary.check(agent, "delegation", prefix="delegation")  # a subagent model that cannot work: said now


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent, online):
    from plugins import auxiliary

    return auxiliary.doctor_lines(agent, "delegation", online, prefix="delegation")


@hookimpl
def register_hookspecs(add):
    from plugins import agent_tools_hookspecs

    add(agent_tools_hookspecs)


@hookimpl
def register_tools(register, config):
    register(TODO_TOOL)
    register(CLARIFY_TOOL)
    register(make_delegate_task(config))


@hookimpl
def register_toolsets(register):
    register("agent", ["todo", "clarify", "delegation"], description="Task list, questions to the user, subagents")
    register("coding", ["core", "todo", "clarify", "delegation"],
             description="Everything for software work: shell, files, task list, questions, subagents")
