"""``hermes_cli.plugins``: the plugin manager facade plugins reach for."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from plugins.hermes_compat import state
from plugins.hermes_compat.context import (HERMES_HOOKS, MIDDLEWARE_KINDS, PluginContext, PluginManifest,
                                           PluginToolOverrideError)

__all__ = ["PluginContext", "PluginManifest", "PluginManager", "PluginToolOverrideError", "VALID_HOOKS",
           "ENTRY_POINTS_GROUP", "VALID_MIDDLEWARE", "OBSERVER_SCHEMA_VERSION", "get_plugin_manager", "discover_plugins", "invoke_hook", "has_hook",
           "get_plugin_commands", "get_plugin_command_handler", "get_plugin_context_engine", "get_plugin_toolsets"]

VALID_HOOKS = set(HERMES_HOOKS)
VALID_MIDDLEWARE = set(MIDDLEWARE_KINDS)
OBSERVER_SCHEMA_VERSION = state.TELEMETRY_SCHEMA_VERSION
ENTRY_POINTS_GROUP = "hermes_agent.plugins"


class PluginManager:
    """Read-only view over the loaded hermes plugins (some plugins peek at
    ``_hooks`` and ``_plugins``; they get plain dicts)."""

    @property
    def _hooks(self) -> Dict[str, List[Callable]]:
        hooks: dict = {}
        for rec in state.records():
            for name, callbacks in rec.hooks.items():
                hooks.setdefault(name, []).extend(callbacks)
        return hooks

    @property
    def _plugins(self) -> Dict[str, Any]:
        return {rec.name: rec for rec in state.records()}

    def list_plugins(self) -> List[dict]:
        out = []
        for rec in state.records():
            m = rec.manifest
            out.append({
                "name": rec.name, "key": getattr(m, "key", rec.name), "kind": getattr(m, "kind", "standalone"),
                "version": getattr(m, "version", ""), "description": getattr(m, "description", ""),
                "source": getattr(m, "source", ""), "enabled": not rec.error, "tools": sorted(rec.tools),
                "hooks": sorted(rec.hooks), "middleware": [k for k, _ in rec.middleware],
                "commands": sorted(rec.commands), "error": rec.error or None,
            })
        return out

    def invoke_hook(self, hook_name: str, **kwargs: Any) -> List[Any]:
        return invoke_hook(hook_name, **kwargs)

    def has_hook(self, hook_name: str) -> bool:
        return has_hook(hook_name)

    def discover_and_load(self, force: bool = False) -> None:
        return None


_manager = PluginManager()


def get_plugin_manager() -> PluginManager:
    return _manager


def discover_plugins(force: bool = False) -> None:
    """Discovery belongs to the kernel's plugin host; nothing to do here."""
    return None


def invoke_hook(hook_name: str, **kwargs: Any) -> List[Any]:
    """Call every hermes plugin callback of ``hook_name``; non-None results."""
    from plugins.hermes_compat.bridge import call_callback

    kwargs.setdefault("telemetry_schema_version", state.TELEMETRY_SCHEMA_VERSION)
    results = []
    for rec in state.records():
        for cb in list(rec.hooks.get(hook_name, ())):
            ok, value = call_callback(rec, hook_name, cb, kwargs)
            if ok and value is not None:
                results.append(value)
    return results


def has_hook(hook_name: str) -> bool:
    return any(rec.hooks.get(hook_name) for rec in state.records())


def get_plugin_commands() -> Dict[str, dict]:
    out = {}
    for rec in state.records():
        for name, (handler, description, args_hint) in rec.commands.items():
            out[name] = {"handler": handler, "description": description, "args_hint": args_hint, "plugin": rec.name}
    return out


def get_plugin_command_handler(name: str) -> Optional[Callable]:
    entry = get_plugin_commands().get(name)
    return entry["handler"] if entry else None


def get_plugin_context_engine() -> Any:
    for rec in state.records():
        if rec.context_engines:
            return rec.context_engines[0]
    return None


def get_plugin_toolsets() -> List[tuple]:
    seen = {}
    for rec in state.records():
        for spec in rec.tools.values():
            seen.setdefault(spec.toolset, (spec.toolset, f"\U0001f50c {spec.toolset}", f"tools of plugin {rec.name}"))
    return list(seen.values())
