"""One conversation turn behind the HTTP API: its own agent, run on a worker
thread, its events handed to the request's event loop.

:class:`Events` implements the event hooks once for every agent of a server
(registered when the server starts, so ``hermes run`` and ``chat`` never call
them); an agent a request built carries its :class:`Sink` in ``agent.state``
(so no per-agent pluggy manager is made for it)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from kernel import hookimpl
from plugins import images
from plugins.tool_args import masked

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

    async def until(self, task: asyncio.Future, keepalive: Optional[float] = None):
        """Each event as it comes until ``task`` (the turn) is done, then those still queued; ``None`` after
        ``keepalive`` seconds without one (a stream's cue to send a keep-alive comment)."""
        while True:
            getter = asyncio.ensure_future(self.queue.get())
            done, _ = await asyncio.wait({getter, task}, timeout=keepalive, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                yield getter.result()
                continue
            getter.cancel()
            if task in done:
                while not self.queue.empty():
                    yield self.queue.get_nowait()
                return
            yield None


@dataclass
class TurnRequest:
    """What a request asks for: the user's message, the history it brings (stateless) or the session to go on."""

    user_message: Any  # its text, or text and image_url parts (plugins.images.client_content)
    history: list = field(default_factory=list)
    system_message: Optional[str] = None
    session_id: Optional[str] = None  # continue this stored session (its history replaces ``history`` unless empty)
    model: str = ""  # the provider's model, when the client named one that is not the server's
    stream: bool = False
    options: dict = field(default_factory=dict)  # the client's sampling (temperature, ...): provider options;
    # ``reasoning``: its effort, which the model gets as agent.reasoning_effort's level


def build_agent(host, request: TurnRequest, sink: Optional[Sink], platform: str = "api"):
    """A fresh agent for one request, on the configured provider (``request.model`` if it names another)."""
    from kernel.agent import Agent
    from kernel.types import ProviderConfig
    from plugins_providers.reasoning import Effort

    provider = ProviderConfig.configured(host.config, model=request.model or None)
    options = dict(request.options)
    effort = options.pop("reasoning", None)
    if options:  # the client's, over the configured provider_options
        provider = provider.with_(extra=tuple(sorted({**provider.options(), **options}.items())))
    agent = Agent(host, provider, platform=platform, callbacks=[Effort(effort)] if effort else ())
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
        if request.session_id and request.history and agent.load_history() is None and not agent.messages:
            history = list(request.history)  # a stored response's session the store no longer has: its own history
        how = images.mode(agent.config, agent.provider_config.model)  # the client's images, as this model takes them
        history = None if history is None else [dict(m, content=images.shaped(m["content"], how))
                                                if isinstance(m.get("content"), list) else m for m in history]
        return agent.run_conversation(images.shaped(request.user_message, how), system_message=request.system_message,
                                      conversation_history=history)
    finally:
        agent.close()


def _state(agent) -> dict:
    state = getattr(agent, "state", None)
    return state if isinstance(state, dict) else {}


class Events:
    """The server's agents' events, to their request's :class:`Sink`; a run's approval question, to its client."""

    @hookimpl
    def on_stream_delta(self, text, agent):
        sink = _state(agent).get(SINK)
        if sink is not None:
            sink.push("delta", text=text)

    @hookimpl
    def on_tool_start(self, tool_name, args, tool_call_id, agent):
        sink = _state(agent).get(SINK)
        if sink is not None:
            sink.push("tool_start", tool=tool_name, toolCallId=tool_call_id, status="running",
                      args=masked(args, agent))

    @hookimpl
    def on_tool_complete(self, tool_name, tool_call_id, result, duration_ms, status, agent):
        sink = _state(agent).get(SINK)
        if sink is not None:
            sink.push("tool_complete", tool=tool_name, toolCallId=tool_call_id, duration_ms=duration_ms,
                      status="completed" if status == "ok" else status, result=result[:4000])

    @hookimpl
    def approve_tool_call(self, tool_name, args, message, agent):
        """A run's approval question goes to its client (``POST /v1/runs/{id}/approval``); other turns: not ours."""
        run = _state(agent).get("serve.run")
        if run is None:
            return None
        args = masked(args, agent)  # the client sees which key, not its value
        command = next((v for v in (args.get("command"), args.get("code")) if isinstance(v, str)), str(args))
        choice = run.ask(tool_name, command, message)
        return False if choice == "deny" else choice
