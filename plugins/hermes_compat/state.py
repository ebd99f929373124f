"""Process-wide state of the compatibility layer.

hermes-agent keeps its plugin registries in module globals (a tool registry
singleton, a provider-profile registry, a plugin manager singleton), and
plugins reach them through the host's modules. We keep the same shape: one
:class:`PluginRecord` per loaded hermes plugin, holding what it registered,
plus a context variable naming the plugin being loaded so that registrations
made by side effect (``tools.registry.registry.register(...)``,
``providers.register_provider(...)``) are attributed to it.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

log = logging.getLogger("hermes.compat")

TELEMETRY_SCHEMA_VERSION = "hermes.observer.v1"


@dataclass
class ToolSpec:
    """A tool as a hermes plugin registered it (``registry.register`` arguments)."""

    name: str
    toolset: str
    schema: dict
    handler: Callable
    check_fn: Optional[Callable] = None
    requires_env: Any = None
    is_async: bool = False
    description: str = ""
    emoji: str = ""
    override: bool = False


@dataclass
class PluginRecord:
    """Everything one hermes plugin registered, in registration order."""

    name: str
    source: str = ""
    manifest: Any = None
    hooks: dict = field(default_factory=dict)  # hook name -> [callback, ...]
    tools: dict = field(default_factory=dict)  # name -> ToolSpec
    commands: dict = field(default_factory=dict)  # slash name -> (handler, description, args_hint)
    cli_commands: dict = field(default_factory=dict)  # name -> dict(name, help, setup_fn, handler_fn, description)
    skills: dict = field(default_factory=dict)  # name -> (path, description)
    memory_providers: list = field(default_factory=list)
    context_engines: list = field(default_factory=list)
    web_providers: list = field(default_factory=list)  # agent.web_search_provider.WebSearchProvider objects
    tts_providers: list = field(default_factory=list)  # agent.tts_provider.TTSProvider objects
    secret_sources: list = field(default_factory=list)  # agent.secret_sources.base.SecretSource objects
    profiles: list = field(default_factory=list)  # providers.base.ProviderProfile objects
    middleware: list = field(default_factory=list)  # (kind, callback)
    modules: set = field(default_factory=set)  # top-level module names holding the plugin's code
    error: str = ""
    allow_tool_override: bool = False

    def summary(self) -> str:
        parts = []
        for label, items in (("tools", self.tools), ("hooks", self.hooks), ("commands", self.commands),
                             ("cli commands", self.cli_commands), ("memory providers", self.memory_providers),
                             ("context engines", self.context_engines), ("model providers", self.profiles),
                             ("web search providers", self.web_providers), ("speech providers", self.tts_providers),
                             ("secret sources", self.secret_sources)):
            if items:
                names = items if isinstance(items, dict) else [getattr(i, "name", type(i).__name__) for i in items]
                parts.append(f"{label} {', '.join(str(n) for n in names)}")
        return "; ".join(parts) or "nothing"


_lock = threading.RLock()
RECORDS: dict = {}  # plugin name -> PluginRecord of its latest load
LOADING: contextvars.ContextVar = contextvars.ContextVar("hermes_compat_loading", default=None)
# the agent whose hermes context engine is being called (a ContextCompressor
# stand-in summarises through that agent's model)
ENGINE_AGENT: contextvars.ContextVar = contextvars.ContextVar("hermes_compat_engine_agent", default=None)
# the agent whose slash command or tool is running a plugin's code (ctx.inject_message goes to its chat)
CALLER_AGENT: contextvars.ContextVar = contextvars.ContextVar("hermes_compat_caller_agent", default=None)


def for_agent(agent: Any, fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with ``agent`` as :data:`CALLER_AGENT`."""
    token = CALLER_AGENT.set(agent)
    try:
        return fn(*args, **kwargs)
    finally:
        CALLER_AGENT.reset(token)


def current() -> Optional[PluginRecord]:
    """The plugin whose code is being imported or registered right now."""
    return LOADING.get()


def add(record: PluginRecord) -> None:
    with _lock:
        RECORDS[record.name] = record


def records() -> list:
    with _lock:
        return list(RECORDS.values())


def owner_of_module(module_name: str) -> Optional[PluginRecord]:
    top = (module_name or "").split(".")[0]
    if top == "hermes_plugins":
        top = ".".join((module_name or "").split(".")[:2])
    for rec in records():
        if top in rec.modules or module_name in rec.modules:
            return rec
    return None


def reset() -> None:
    """Forget every loaded plugin and what the host stand-ins recorded (tests)."""
    with _lock:
        RECORDS.clear()
    from plugins.hermes_compat.host import providers, tool_registry

    tool_registry.registry.__init__()
    with providers._lock:
        providers._REGISTRY.clear()
        providers._ALIASES.clear()
