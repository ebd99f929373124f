"""Long runs, as hermes-agent's API server has them: ``POST /v1/runs`` starts a
turn and answers at once (202, a run id); ``GET /v1/runs/{id}`` is its state,
``GET /v1/runs/{id}/events`` its lifecycle as server-sent events (every event
from the start, then live: any number of watchers), ``POST .../approval``
answers the approval question it is waiting on, ``POST .../stop`` interrupts it.

Events (``data: {"event": ..., "run_id", "timestamp", ...}``): ``run.started``,
``message.delta`` (``delta``), ``tool.started`` (``tool``, ``tool_call_id``,
``preview``), ``tool.completed`` (``duration``, ``error``, ``result``),
``approval.request`` (``approval_id``, ``tool``, ``command``, ``message``,
``choices``), ``approval.responded``, and one of ``run.completed`` (``output``,
``usage``), ``run.failed`` (``error``), ``run.cancelled``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from plugins.images import has_content
from plugins.serve.app import RUNS_KEPT, SESSION_HEADER, error, sampling
from plugins.serve.responses import input_messages
from plugins.serve.turns import Sink, TurnRequest, run_turn

RUN = "serve.run"  # agent.state key: the Run an agent works for
CHOICES = ("once", "session", "always", "deny")
ENDED = ("completed", "failed", "cancelled")
LAST = ("run.completed", "run.failed", "run.cancelled")


@dataclass
class Approval:
    id: str
    tool: str
    command: str
    message: str
    answered: threading.Event = field(default_factory=threading.Event)
    choice: str = "deny"


class Run:
    def __init__(self, loop: asyncio.AbstractEventLoop, session_id: str = "", model: str = "", input: str = ""):
        self.id, self.loop, self.input = f"run_{uuid.uuid4().hex}", loop, input
        self.trace: list = []  # {"hook", "plugins", "ms", "at"} of every hook call of its agent (see trace_hooks)
        self.status, self.created_at, self.session_id, self.model = "queued", time.time(), session_id, model
        self.output: Optional[str] = None
        self.usage: dict = {}
        self.error: Optional[str] = None
        self.events: list = []
        self.changed = asyncio.Condition()
        self.agent: Any = None
        self.pending: Optional[Approval] = None
        self.stopping = False
        self.approval_timeout = 300.0

    # ---- from any thread
    def emit(self, event: str, **data: Any) -> None:
        record = {"event": event, "run_id": self.id, "timestamp": time.time(), **data}
        self.loop.call_soon_threadsafe(lambda: asyncio.ensure_future(self._add(record)))

    async def _add(self, record: dict) -> None:
        async with self.changed:
            self.events.append(record)
            self.changed.notify_all()

    def ask(self, tool: str, command: str, message: str) -> str:
        """The approval question, from the agent's thread: wait for ``/approval`` (deny when the run is stopped,
        or nobody answers within ``api_server.approval_timeout``)."""
        approval = Approval(f"appr_{uuid.uuid4().hex[:12]}", tool, command, message)
        self.pending, self.status = approval, "waiting_for_approval"
        self.emit("approval.request", approval_id=approval.id, tool=tool, command=command, message=message,
                  choices=list(CHOICES))
        deadline = time.monotonic() + self.approval_timeout
        while not approval.answered.wait(0.1):
            if self.stopping or time.monotonic() > deadline:
                self.emit("approval.responded", approval_id=approval.id, choice="deny",
                          reason="the run was stopped" if self.stopping else "no answer in time")
                break
        self.pending, self.status = None, "running"
        return approval.choice if approval.answered.is_set() else "deny"

    def state(self) -> dict:
        return {"run_id": self.id, "object": "hermes.run", "status": self.status, "created_at": self.created_at,
                "input": self.input,
                "session_id": self.session_id, "model": self.model, "output": self.output, "usage": self.usage,
                "error": self.error, "last_event": self.events[-1]["event"] if self.events else None,
                "pending_approval": None if self.pending is None else {
                    "approval_id": self.pending.id, "tool": self.pending.tool, "command": self.pending.command}}

    async def follow(self):
        """Every event so far, then each new one, up to the run's last (``None``: nothing for a while)."""
        seen = 0
        while True:
            async with self.changed:
                if seen >= len(self.events):
                    try:
                        await asyncio.wait_for(self.changed.wait(), timeout=15.0)
                    except asyncio.TimeoutError:
                        pass
                fresh, seen = self.events[seen:], len(self.events)
            if not fresh:
                yield None
            for record in fresh:
                yield record
                if record["event"] in LAST:
                    return


TRACE_LIMIT = 2000  # hook calls kept per run


def trace_hooks(pm) -> None:
    """Record each hook call a run's agent makes (name, plugins, duration) in its run's ``trace``: the page
    shows a turn's hooks. Other agents' calls cost a dictionary look-up."""
    local = threading.local()

    def before(hook_name, impls, kwargs):
        agent = kwargs.get("agent")
        state = getattr(agent, "state", None)
        run = state.get(RUN) if isinstance(state, dict) else None
        local.__dict__.setdefault("stack", []).append((run, time.perf_counter()))

    def after(outcome, hook_name, impls, kwargs):
        stack = local.__dict__.get("stack")
        run, started = stack.pop() if stack else (None, 0.0)
        if run is not None and len(run.trace) < TRACE_LIMIT:
            run.trace.append({"hook": hook_name, "plugins": [i.plugin_name for i in impls],
                              "ms": round((time.perf_counter() - started) * 1000, 3), "at": time.time()})

    pm.add_hookcall_monitoring(before, after)


def sse(record: Optional[dict]) -> str:
    return ": keepalive\n\n" if record is None else f"data: {json.dumps(record, ensure_ascii=False)}\n\n"


# ------------------------------------------------------------------ the routes


async def start_run(server, request: Request) -> Response:
    body = await server.body(request)
    if isinstance(body, Response):
        return body
    try:
        messages = input_messages(body.get("input"))
    except ValueError as exc:
        return error(400, f"'input': {exc}", param="input")
    if not messages or messages[-1]["role"] != "user" or not has_content(messages[-1]["content"]):
        return error(400, "'input' must be text, or messages ending with the user's", param="input")
    session_id = body.get("session_id") or request.headers.get(SESSION_HEADER, "").strip() or None
    if session_id is not None and not server.key:
        return error(403, "going on with a stored session needs the server to have a key (API_SERVER_KEY)",
                     kind="permission_error")
    options = sampling(body, ("max_output_tokens", "max_tokens"))
    if isinstance(options, Response):
        return options
    if (busy := server.busy()) is not None:
        return busy
    model, instructions = body.get("model"), body.get("instructions")
    system = [m["content"] for m in messages if m["role"] == "system"]
    messages = [m for m in messages if m["role"] != "system"]
    turn = TurnRequest(user_message=messages[-1]["content"], history=messages[:-1],
                       system_message="\n".join(([instructions] if isinstance(instructions, str) else []) + system)
                       or None, session_id=str(session_id) if session_id else None,
                       model=model if isinstance(model, str) and model != server.model_name else "", stream=True,
                       options=options)
    run = Run(asyncio.get_running_loop(), model=str(model or server.model_name), input=messages[-1]["content"])
    run.approval_timeout = server.approval_timeout
    server.runs[run.id] = run
    for old in [r for r in server.runs if server.runs[r].status in ("completed", "failed", "cancelled")][:-RUNS_KEPT]:
        del server.runs[old]  # the oldest ended ones beyond what is kept
    asyncio.ensure_future(_drive(server, run, turn))
    return JSONResponse({"run_id": run.id, "object": "hermes.run", "status": "started"}, status_code=202)


async def _drive(server, run, turn: TurnRequest) -> None:
    """A run from its start to its last event (a task of the server's loop)."""
    loop = asyncio.get_running_loop()
    async with server.slots:
        sink = Sink(loop)
        agent = await server._build(turn, sink)
        if isinstance(agent, Response):
            run.status, run.error = "failed", json.loads(agent.body)["error"]["message"]
            run.emit("run.failed", error=run.error)
            return
        agent.state[RUN], run.agent, run.session_id = run, agent, agent.session_id
        run.status = "running"
        run.emit("run.started", session_id=agent.session_id)
        turn_done = loop.run_in_executor(server.pool, run_turn, agent, turn)
        async for event in sink.until(turn_done):
            _relay(event, run)
        try:
            result = turn_done.result()
        except Exception as exc:  # noqa: BLE001 - the loop's own failure
            result, run.error = None, f"the turn failed: {exc}"
        run.agent = None
    if result is not None:
        run.session_id, run.output, run.usage = result.session_id, result.final_response, result.usage
        run.error = result.error
    if result is not None and (result.interrupted or run.stopping):
        run.status = "cancelled"
        run.emit("run.cancelled", output=run.output)
    elif result is not None and result.exit_reason in ("completed", "budget_exhausted"):
        run.status = "completed"
        run.emit("run.completed", output=run.output, usage=run.usage, exit_reason=result.exit_reason)
    else:
        run.status = "failed"
        run.emit("run.failed", error=run.error or "the turn ended without an answer")


def _run_of(server, request: Request):
    run = server.runs.get(request.path_params["run_id"])
    return run if run is not None else error(404, f"no run '{request.path_params['run_id']}'",
                                             code="run_not_found")


async def list_runs(server, request: Request) -> Response:
    return JSONResponse({"object": "list", "data": [run.state() for run in reversed(server.runs.values())]})


async def run_trace(server, request: Request) -> Response:
    run = _run_of(server, request)
    return run if isinstance(run, Response) else JSONResponse({"object": "list", "run_id": run.id,
                                                              "data": list(run.trace)})


async def get_run(server, request: Request) -> Response:
    run = _run_of(server, request)
    return run if isinstance(run, Response) else JSONResponse(run.state())


async def run_events(server, request: Request) -> Response:
    run = _run_of(server, request)
    if isinstance(run, Response):
        return run

    async def stream():
        async for record in run.follow():
            yield sse(record)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def run_approval(server, request: Request) -> Response:
    run = _run_of(server, request)
    if isinstance(run, Response):
        return run
    body = await server.body(request)
    if isinstance(body, Response):
        return body
    choice = {"approve": "once", "approved": "once", "allow": "once"}.get(str(body.get("choice", "")).lower(),
                                                                          str(body.get("choice", "")).lower())
    if choice not in CHOICES:
        return error(400, f"'choice' must be one of {', '.join(CHOICES)}", param="choice",
                     code="invalid_approval_choice")
    pending = run.pending
    if pending is None or body.get("approval_id") not in (None, pending.id):
        return error(409, f"run '{run.id}' is not waiting for that approval", code="approval_not_active")
    pending.choice = choice
    pending.answered.set()
    run.emit("approval.responded", approval_id=pending.id, choice=choice)
    return JSONResponse({"run_id": run.id, "approval_id": pending.id, "choice": choice})


async def stop_run(server, request: Request) -> Response:
    run = _run_of(server, request)
    if isinstance(run, Response):
        return run
    if run.status not in ("completed", "failed", "cancelled"):
        run.stopping = True
        if run.agent is not None:
            run.agent.interrupt()
    return JSONResponse({"run_id": run.id, "status": "stopping" if run.stopping else run.status})


def _relay(event, run) -> None:
    """An agent event of a run, as the run's lifecycle event."""
    if event.kind == "delta":
        run.emit("message.delta", delta=event.data["text"])
    elif event.kind == "tool_start":
        preview = json.dumps(event.data.get("args"), ensure_ascii=False, default=str)
        run.emit("tool.started", tool=event.data["tool"], tool_call_id=event.data["toolCallId"],
                 preview=preview[:200])
    elif event.kind == "tool_complete":
        run.emit("tool.completed", tool=event.data["tool"], tool_call_id=event.data["toolCallId"],
                 duration=round(event.data["duration_ms"] / 1000, 3), error=event.data["status"] != "completed",
                 result=event.data.get("result", ""))
