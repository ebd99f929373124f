"""``tools.registry``: the tool registry singleton hermes plugins register into.

Tools registered here (directly, or through ``ctx.register_tool``) are
recorded for the plugin being loaded and offered to the model as kernel tools.
The registry only knows hermes plugins' tools: the kernel's own tools live in
the kernel's registry.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Dict, List, Optional, Set

from plugins.hermes_compat import state


class ToolEntry:
    """One registered tool (hermes-agent's attribute names)."""

    __slots__ = ("name", "toolset", "schema", "handler", "check_fn", "requires_env", "is_async",
                 "description", "emoji", "max_result_size_chars", "dynamic_schema_overrides")

    def __init__(self, name, toolset, schema, handler, check_fn=None, requires_env=None, is_async=False,
                 description="", emoji="", max_result_size_chars=None, dynamic_schema_overrides=None):
        self.name, self.toolset, self.schema, self.handler = name, toolset, schema, handler
        self.check_fn, self.requires_env, self.is_async = check_fn, requires_env, is_async
        self.description, self.emoji = description, emoji
        self.max_result_size_chars = max_result_size_chars
        self.dynamic_schema_overrides = dynamic_schema_overrides


def normalize_schema(schema: Any, name: str = "") -> dict:
    """``{"name", "description", "parameters"}`` from a bare or OpenAI-wrapped schema."""
    if isinstance(schema, dict) and isinstance(schema.get("function"), dict):
        schema = schema["function"]
    schema = dict(schema) if isinstance(schema, dict) else {}
    if name:
        schema.setdefault("name", name)
    params = schema.get("parameters")
    if not isinstance(params, dict):
        schema["parameters"] = {"type": "object", "properties": {}}
    return schema


class ToolRegistry:
    def __init__(self):
        self._tools: Dict[str, ToolEntry] = {}
        self._lock = threading.RLock()
        self._toolset_aliases: Dict[str, str] = {}
        self._generation = 0

    def register(self, name: str, toolset: str, schema: dict, handler: Callable, check_fn: Optional[Callable] = None,
                 requires_env: Optional[list] = None, is_async: bool = False, description: str = "",
                 emoji: str = "", max_result_size_chars: Any = None, dynamic_schema_overrides: Any = None,
                 override: bool = False) -> None:
        if not isinstance(name, str) or not name or not callable(handler):
            state.log.warning("tools.registry.register: needs a tool name and a callable handler (got %r, %r); "
                              "ignored", name, handler)
            return
        schema = normalize_schema(schema, name)
        description = description or schema.get("description") or ""
        with self._lock:
            old = self._tools.get(name)
            if old is not None and old.toolset != toolset and not override:
                state.log.warning("tool %r of toolset %r is already registered by toolset %r; ignored "
                                  "(pass override=True to replace it)", name, toolset, old.toolset)
                return
            self._tools[name] = ToolEntry(name, toolset, schema, handler, check_fn, requires_env, is_async,
                                          description, emoji, max_result_size_chars, dynamic_schema_overrides)
            self._generation += 1
        rec = state.current()
        if rec is None:
            state.log.warning("tool %r registered outside a plugin load; it is not offered to the model", name)
            return
        rec.tools[name] = state.ToolSpec(name, str(toolset or rec.name), schema, handler, check_fn, requires_env,
                                         bool(is_async), description, emoji, bool(override))

    def deregister(self, name: str) -> None:
        with self._lock:
            self._tools.pop(name, None)
            self._generation += 1
        rec = state.current()
        if rec is not None:
            rec.tools.pop(name, None)

    def get_entry(self, name: str) -> Optional[ToolEntry]:
        return self._tools.get(name)

    def get_schema(self, name: str) -> Optional[dict]:
        entry = self._tools.get(name)
        return entry.schema if entry else None

    def get_all_tool_names(self) -> List[str]:
        return sorted(self._tools)

    def get_toolset_for_tool(self, name: str) -> Optional[str]:
        entry = self._tools.get(name)
        return entry.toolset if entry else None

    def get_emoji(self, name: str, default: str = "\u26a1") -> str:
        entry = self._tools.get(name)
        return (entry.emoji if entry and entry.emoji else default)

    def get_tool_to_toolset_map(self) -> Dict[str, str]:
        return {n: e.toolset for n, e in self._tools.items()}

    def get_registered_toolset_names(self) -> List[str]:
        return sorted({e.toolset for e in self._tools.values()})

    def get_tool_names_for_toolset(self, toolset: str) -> List[str]:
        return sorted(n for n, e in self._tools.items() if e.toolset == toolset)

    def register_toolset_alias(self, alias: str, toolset: str) -> None:
        self._toolset_aliases[alias] = toolset

    def get_registered_toolset_aliases(self) -> Dict[str, str]:
        return dict(self._toolset_aliases)

    def get_toolset_alias_target(self, alias: str) -> Optional[str]:
        return self._toolset_aliases.get(alias)

    def register_plugin_override_policy(self, module_namespace: str, allowed: bool) -> None:
        return None

    def _available(self, entry: ToolEntry) -> bool:
        if entry.check_fn is None:
            return True
        try:
            return bool(entry.check_fn())
        except Exception:
            return False

    def get_definitions(self, tool_names: Set[str], quiet: bool = False) -> List[dict]:
        out = []
        for name in sorted(tool_names):
            entry = self._tools.get(name)
            if entry is not None and self._available(entry):
                out.append({"type": "function", "function": dict(entry.schema, name=name)})
        return out

    def is_toolset_available(self, toolset: str) -> bool:
        return any(self._available(e) for e in self._tools.values() if e.toolset == toolset)

    def check_toolset_requirements(self) -> Dict[str, bool]:
        return {ts: self.is_toolset_available(ts) for ts in self.get_registered_toolset_names()}

    def get_available_toolsets(self) -> Dict[str, dict]:
        return {ts: {"tools": self.get_tool_names_for_toolset(ts), "available": self.is_toolset_available(ts)}
                for ts in self.get_registered_toolset_names()}

    def get_toolset_requirements(self) -> Dict[str, dict]:
        return {ts: {"env": sorted({v for e in self._tools.values() if e.toolset == ts
                                    for v in (e.requires_env or []) if isinstance(v, str)})}
                for ts in self.get_registered_toolset_names()}

    def check_tool_availability(self, quiet: bool = False):
        available = [ts for ts, ok in self.check_toolset_requirements().items() if ok]
        unavailable = [ts for ts, ok in self.check_toolset_requirements().items() if not ok]
        return available, unavailable

    def get_max_result_size(self, name: str, default: Any = None) -> Any:
        entry = self._tools.get(name)
        return entry.max_result_size_chars if entry and entry.max_result_size_chars else default

    def dispatch(self, name: str, args: dict, **kwargs) -> Any:
        """Run a hermes plugin's tool by name (errors come back as JSON)."""
        entry = self._tools.get(name)
        if entry is None:
            return tool_error(f"Unknown tool: {name}")
        from plugins.hermes_compat.bridge import call_plugin_callable

        try:
            return call_plugin_callable(entry.handler, args, **kwargs)
        except Exception as exc:
            return tool_error(f"Tool execution failed: {type(exc).__name__}: {exc}")


registry = ToolRegistry()


def discover_builtin_tools(tools_dir: Any = None) -> List[str]:
    """The kernel's built-in tools are plugins, not modules here: nothing to import."""
    return []


def invalidate_check_fn_cache() -> None:
    return None


def tool_error(message: Any, **extra: Any) -> str:
    """``{"error": message, ...extra}`` as a JSON string."""
    result = {"error": str(message)}
    result.update(extra)
    return json.dumps(result, ensure_ascii=False)


def tool_result(data: Any = None, **kwargs: Any) -> str:
    """A JSON result string from a dict (or any JSON-able value) or keyword arguments."""
    if data is not None:
        return json.dumps(data, ensure_ascii=False)
    return json.dumps(kwargs, ensure_ascii=False)
