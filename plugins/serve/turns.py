"""One conversation turn behind the HTTP API: its own agent, run on a worker
thread, its events handed to the request's event loop.

The serve plugin implements the event hooks once for every agent; an agent a
request built carries its :class:`Sink` in ``agent.state`` (so no per-agent
pluggy manager is made for it), and events of other agents are ignored."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Optional

SINK = "serve.sink"  # agent.state key


@dataclass
class Event:
    kind: str  # delta, tool_start, tool_complete, status, approval
    data: dict = field(default_factory=dict)
    at: float = field(default_factory=time.time)


class Sink:
    """Hands a worker thread's events to an asyncio queue (thread-safe)."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop, self.queue = loop, asyncio.Queue()
        self.closed = self.streamed = False
        self.agent: Any = None  # set once built: a client that goes away interrupts it

    def push(self, kind: str, **data: Any) -> None:
        if not self.closed:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, Event(kind, data))


@dataclass
class TurnRequest:
    """What a request asks for: the user's message, the history it brings (stateless) or the session to go on."""

    user_message: str
    history: list = field(default_factory=list)
    system_message: Optional[str] = None
    session_id: Optional[str] = None  # continue this stored session (its history replaces ``history``)
    model: str = ""  # the provider's model, when the client named one that is not the server's
    stream: bool = False


def build_agent(host, request: TurnRequest, sink: Optional[Sink], platform: str = "api"):
    """A fresh agent for one request, on the configured provider (``request.model`` if it names another)."""
    from kernel.agent import Agent
    from kernel.types import ProviderConfig

    provider = ProviderConfig.configured(host.config, model=request.model or None)
    agent = Agent(host, provider, platform=platform)
    agent.stream = request.stream
    if sink is not None:
        agent.state[SINK] = sink
    if request.session_id:
        agent.new_session(resume=request.session_id)
    return agent


def run_turn(agent, request: TurnRequest):
    """The turn (on a worker thread); the agent is closed after it."""
    try:
        history = None if request.session_id else list(request.history)
        return agent.run_conversation(request.user_message, system_message=request.system_message,
                                      conversation_history=history)
    finally:
        agent.close()


def sink_of(agent) -> Optional[Sink]:
    return agent.state.get(SINK) if agent is not None else None
