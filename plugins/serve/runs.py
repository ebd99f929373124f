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
