"""A hermes ``MemoryProvider`` as a kernel memory backend (the interface of
``plugins_memory/base.py``, by duck typing), and its tools."""

from __future__ import annotations

from typing import Any, Callable

from plugins.hermes_compat import state
from plugins.hermes_compat.bridge import call_plugin_callable
from plugins.hermes_compat.state import log
from plugins.hermes_compat.tools_commands import tool_text


class MemoryBackendAdapter:
    """A hermes ``MemoryProvider`` as a kernel memory backend
    (``plugins_memory/base.py``'s interface, by duck typing)."""

    def __init__(self, provider: Any, record: state.PluginRecord):
        self.provider = provider
        self.record = record
        self.name = str(getattr(provider, "name", "") or record.name)
        self._turn = 0

    def _call(self, method: str, *args: Any, default: Any = None, **kwargs: Any) -> Any:
        fn = getattr(self.provider, method, None)
        if not callable(fn):
            return default
        return call_plugin_callable(fn, *args, **kwargs)

    def is_available(self) -> bool:
        return bool(self._call("is_available", default=True))

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        agent = kwargs.pop("agent", None)
        kwargs.setdefault("agent_context", "subagent" if getattr(agent, "parent", None) is not None else "primary")
        call_plugin_callable(self.provider.initialize, session_id, **kwargs)

    def system_prompt_block(self) -> str:
        return self._call("system_prompt_block", default="") or ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self._turn += 1
        self._call("on_turn_start", self._turn, query)
        return self._call("prefetch", query, session_id=session_id, default="") or ""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "", messages=None) -> None:
        self._call("sync_turn", user_content, assistant_content, session_id=session_id, messages=messages)
        self._call("queue_prefetch", user_content, session_id=session_id)

    def on_memory_write(self, action: str, target: str, content: str, metadata=None) -> None:
        self._call("on_memory_write", action, target, content, metadata=metadata)

    def on_pre_compress(self, messages: list) -> str:
        notes = self._call("on_pre_compress", messages, default="")
        return notes if isinstance(notes, str) else ""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", **kwargs: Any) -> None:
        self._call("on_session_switch", new_session_id, parent_session_id=parent_session_id, **kwargs)

    def on_session_end(self, messages: list) -> None:
        self._call("on_session_end", messages)

    def shutdown(self) -> None:
        self._call("shutdown")

    def tools(self) -> list:
        return memory_tools(self.record, self.provider, self.name, lambda: self.provider)

    def get_tool_schemas(self) -> list:
        return list(self._call("get_tool_schemas", default=[]) or [])

    def handle_tool_call(self, tool_name: str, args: dict, **kwargs: Any) -> str:
        return tool_text(self._call("handle_tool_call", tool_name, args, **kwargs))


def memory_tools(record, provider, backend_name: str, find_provider: Callable[..., Any]) -> list:
    """Kernel tools for a memory provider's schemas; the handler asks
    ``find_provider(ctx)`` for the provider instance serving the call."""
    from kernel.types import Tool, ToolError
    from plugins.hermes_compat.host.tool_registry import normalize_schema

    try:
        schemas = call_plugin_callable(provider.get_tool_schemas) or []
    except Exception as exc:
        log.warning("hermes memory provider %s: get_tool_schemas failed: %s", backend_name, exc)
        return []
    tools = []
    for raw in schemas:
        schema = normalize_schema(raw)
        name = schema.get("name")
        if not isinstance(name, str) or not name:
            continue

        def handler(args: dict, ctx: Any, name=name) -> str:
            target = find_provider(ctx)
            if target is None:
                raise ToolError(f"the {backend_name!r} memory provider is not active for this agent "
                                f"(set memory.provider: {backend_name})")
            kwargs = {"task_id": getattr(ctx, "task_id", None), "session_id": getattr(ctx, "session_id", None)}
            return tool_text(call_plugin_callable(target.handle_tool_call, name, args, **kwargs))

        tools.append(Tool(name=name, description=str(schema.get("description") or ""),
                          parameters=schema["parameters"], handler=handler, toolset="memory", plugin=record.name))
    return tools


def memory_proxy_tools(record, provider) -> list:
    """Registered once per plugin host: find the agent's active backend at call time."""
    backend_name = str(getattr(provider, "name", "") or record.name)

    def find(ctx: Any) -> Any:
        try:
            from plugins_memory.manager import active_backend
        except ImportError:
            return None
        backend = active_backend(getattr(ctx, "agent", None))
        if isinstance(backend, MemoryBackendAdapter) and backend.name == backend_name:
            return backend.provider
        return None

    return memory_tools(record, provider, backend_name, find)


def register_memory(record: state.PluginRecord, register: Callable) -> None:
    """Each provider answers to its own name and, installed as a folder, to the
    folder's name too: hermes-agent looks providers up by folder, so the
    plugins' READMEs say ``memory.provider: <folder>``."""
    for provider in record.memory_providers:
        name = str(getattr(provider, "name", "") or record.name)
        make = (lambda config, provider=provider: MemoryBackendAdapter(provider, record))
        register(name, make, f"hermes memory provider from plugin {record.name}")
        folder = _folder_name(record)
        if folder and folder != name:
            register(folder, make, f"hermes memory provider {name!r} from the plugin folder {folder}")


def _folder_name(record: state.PluginRecord) -> str:
    from pathlib import Path

    manifest = record.manifest
    if getattr(manifest, "source", "") not in ("user", "project") or not getattr(manifest, "path", ""):
        return ""  # an entry point: no folder
    return Path(manifest.path).name
