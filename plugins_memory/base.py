"""The memory backend interface.

A memory backend is an external store of what the agent should remember across
sessions (a vector store, a hosted memory service, a local full-text index).
Backends are registered by name through the ``register_memory_backends`` hook::

    @hookimpl
    def register_memory_backends(register, config):
        register("fts", FtsMemory, description="SQLite full-text facts")

``factory(config)`` returns a :class:`MemoryBackend`. The ``memory`` plugin
(``plugins_memory/manager.py``) builds at most one of them per agent, the one
named by ``memory.provider``, next to the built-in file memory, and drives it
through the lifecycle below. Every call is guarded: an exception or a slow
answer from a backend is logged and never breaks a turn.

Lifecycle, in order::

    is_available()                       cheap, no network: config and deps only
    initialize(session_id, **kwargs)     kwargs: hermes_home, platform, agent, parent_session_id
    system_prompt_block()                once per session, frozen into the system prompt
    per turn:
        prefetch(query, session_id=)     before the model call, on a daemon thread with a timeout
        sync_turn(user, assistant, ...)  after the final answer, on a single background worker
    on_memory_write(action, target, content)   mirrors writes of the built-in ``memory`` tool
    on_pre_compress(messages) -> str     before the context engine summarises the history
    on_session_switch(new_session_id, parent_session_id=)   the session rotated (compression)
    on_delegation(task, result, child_session_id=)   a subagent of this agent finished
    on_session_end(messages)             a real session boundary
    shutdown()                           the agent is closed

Tools: ``tools()`` returns :class:`kernel.types.Tool` objects whose handlers
are bound to this instance. Because tools are registered once per plugin host
(before any agent, hence before any backend instance exists), the backend's
plugin registers *proxy* tools with :func:`backend_proxy_tools`; a proxy finds
the agent's backend instance at call time and calls the matching tool.
"""

from __future__ import annotations

import abc
import json
from typing import Any, Callable, Iterable, Optional

from kernel.types import Tool, ToolError


class MemoryBackend(abc.ABC):
    """Base class of memory backends. Only ``name``, ``is_available`` and
    ``initialize`` are required; every other method has a harmless default."""

    #: the name ``memory.provider`` selects (also the registered name)
    name: str = ""
    #: what it needs where :meth:`is_available` is False (keys, a package), for ``hermes memory status`` to say
    needs: str = ""

    @abc.abstractmethod
    def is_available(self) -> bool:
        """True if the backend can work here (dependencies importable, keys
        configured). Must be fast and must not touch the network."""

    @abc.abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for a session. ``kwargs`` always holds ``hermes_home`` (the
        data folder, a str) and ``platform``; the manager also passes ``agent``
        and, for a child session, ``parent_session_id``. Accept ``**kwargs``:
        more keys may come."""

    def system_prompt_block(self) -> str:
        """Static text for the system prompt, asked once per session. The
        prompt is cached, so whatever this returns stays for the session."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Memories relevant to ``query`` (the user's message), as text for
        this turn only. Called before every turn with a timeout; keep it fast.
        Return ``""`` when nothing is relevant."""
        return ""

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: Optional[list] = None,
    ) -> None:
        """Learn from a finished turn. Runs on a background worker (one at a
        time, in turn order); ``messages`` is the history so far."""

    def on_memory_write(self, action: str, target: str, content: str, metadata: Optional[dict] = None) -> None:
        """The built-in ``memory`` tool wrote an entry (``action`` is ``add``,
        ``replace`` or ``remove``; ``target`` is ``memory`` or ``user``)."""

    def on_pre_compress(self, messages: list) -> str:
        """The history is about to be summarised: save what must survive.
        Text returned is handed to the context engine as notes for the summary."""
        return ""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", **kwargs: Any) -> None:
        """The conversation continues in a new session (after compression)."""

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        """A subagent (``delegate_task``) finished ``task`` with ``result`` (its
        summary). Children have no backend of their own, so this is where
        their work can reach long-term memory."""

    def on_session_end(self, messages: list) -> None:
        """A real session boundary (the agent is closed or the session replaced)."""

    def shutdown(self) -> None:
        """Release resources (connections, threads). Called once, last."""

    def tools(self) -> list[Tool]:
        """Tools this backend offers, with handlers bound to this instance."""
        return []

    def get_tool_schemas(self) -> list[dict]:
        """The tools' schemas ``{"name", "description", "parameters"}``
        (hermes-agent's spelling)."""
        return [tool.schema() for tool in self.tools()]

    def handle_tool_call(self, tool_name: str, args: dict, **kwargs: Any) -> str:
        """Run one of this backend's tools by name; returns a JSON string.
        Errors come back as ``{"error": ...}`` so the model can read them."""
        for tool in self.tools():
            if tool.name == tool_name:
                try:
                    result = tool.handler(args, kwargs.get("ctx"))
                except ToolError as exc:
                    return json.dumps({"error": str(exc)})
                return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        return json.dumps({"error": f"memory backend {self.name!r} has no tool {tool_name!r}"})


def availability(factory: Callable, config: Any) -> tuple:
    """``(the backend ``factory`` makes, whether it can work here, what it needs when not)``, never raising (a plugin's
    backend may raise anything: said as what it needs; the backend is then None)."""
    try:
        backend = factory(config)
        return backend, bool(backend.is_available()), getattr(backend, "needs", "") or "see its plugin's documentation"
    except Exception as exc:  # noqa: BLE001
        return None, False, f"it fails to start: {type(exc).__name__}: {exc}"


def backend_proxy_tools(
    backend_name: str,
    prototypes: Iterable[Tool],
    find_backend: Optional[Callable[[Any], Optional[MemoryBackend]]] = None,
) -> list[Tool]:
    """Proxies of a backend's tools, to register in ``register_tools``.

    ``prototypes`` are the backend's tools (from an instance that need not be
    initialised: only names, descriptions and schemas are used). At call time
    the proxy asks the memory manager for the agent's active backend and calls
    the tool of the same name on it; if the agent has no such backend (memory
    disabled, backend unavailable) the model reads an error instead.
    """
    if find_backend is None:
        from plugins_memory.manager import active_backend as find_backend

    def make(proto: Tool) -> Tool:
        def handler(args: dict, ctx: Any) -> Any:
            backend = find_backend(getattr(ctx, "agent", None))
            if backend is None or backend.name != backend_name:
                raise ToolError(f"the {backend_name!r} memory backend is not active for this agent")
            for tool in backend.tools():
                if tool.name == proto.name:
                    return tool.handler(args, ctx)
            raise ToolError(f"memory backend {backend_name!r} has no tool {proto.name!r}")

        return Tool(
            name=proto.name,
            description=proto.description,
            parameters=proto.parameters,
            handler=handler,
            toolset=proto.toolset or "memory",
            parallel_safe=proto.parallel_safe,
        )

    return [make(proto) for proto in prototypes]
