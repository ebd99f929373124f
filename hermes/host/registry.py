"""What the loaded plugins registered: tools, toolsets and named factories.

Built once per plugin host (``PluginHost.registry``) by calling the
registration hooks through pluggy; the guard says which plugin is calling
``register``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from hermes.host.isolation import WATCHDOG

if TYPE_CHECKING:
    from hermes.host.plugins import PluginHost

log = logging.getLogger("hermes.plugins")
_CALLED = ("register_model_providers", "register_context_engines")  # tables whose factories the kernel calls


@dataclass
class ModelProviderEntry:
    """A provider registered through ``register_model_providers``."""

    name: str
    factory: Callable[..., Any]  # factory(ProviderConfig) -> kernel.protocols.Provider
    description: str = ""
    plugin: str = ""


@dataclass
class NamedFactory:
    """A memory backend or context engine registered by name."""

    name: str
    factory: Callable[..., Any]
    description: str = ""
    plugin: str = ""


class Registry:
    """What the loaded plugins registered: tools, toolsets, and a table per
    named registration hook (``register_X(register, config)`` with
    ``register(name, factory, description="")``): ``named["model_providers"]``,
    ``named["context_engines"]``, ``named["slash_commands"]``, and the tables
    of hooks plugins bring (``named["memory_backends"]``).

    The registration hooks are called through pluggy like any other; the
    guard says which plugin is calling ``register`` and contains its errors.
    A plugin that fails while registering is dropped whole."""

    def __init__(self):
        self.tools: dict = {}
        self.toolsets: dict = {}  # name -> (members, description)
        self.named: dict = {}  # table -> {name: NamedFactory}
        self.shadowed: dict = {}  # tool name -> [Tool, ...] that lost to the one in ``tools``

    def table(self, name: str) -> dict:
        return self.named.get(name, {})

    @property
    def providers(self) -> dict:
        return self.table("model_providers")

    @property
    def context_engines(self) -> dict:
        return self.table("context_engines")

    @property
    def slash_commands(self) -> dict:
        return self.table("slash_commands")

    @classmethod
    def collect(cls, host: PluginHost) -> "Registry":
        from kernel.types import Tool

        reg = cls()
        config = host.config
        toolset_owner: dict = {}
        offered: dict = {}  # tool name -> [Tool, ...] in the order the plugins registered them

        def add_tool(tool):
            if not isinstance(tool, Tool):
                raise TypeError(f"register() expects a kernel.types.Tool, got {type(tool).__name__}")
            if not tool.plugin:
                tool.plugin = WATCHDOG.current_plugin()
            offered.setdefault(tool.name, []).append(tool)

        def add_toolset(name, tools, description=""):
            if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
                raise TypeError(f"register_toolsets: register({name!r}, tools): tools must be a list of names")
            reg.toolsets[name] = (list(tools), description)
            toolset_owner[name] = WATCHDOG.current_plugin()

        def named(hook, target, kind):
            def add(name, factory, description=""):
                if not isinstance(name, str) or not name or (hook in _CALLED and not callable(factory)):
                    raise TypeError(f"{hook}: register({name!r}, factory): a name and a callable factory, "
                                    f"got {type(factory).__name__}")
                entry = kind(name=name, factory=factory, description=description, plugin=WATCHDOG.current_plugin())
                if name in target:
                    log.warning("%s: %s of plugin %s replaced by plugin %s (loaded earlier)", hook, name,
                                target[name].plugin, entry.plugin)
                target[name] = entry

            return add

        hooks = [("register_tools", add_tool), ("register_toolsets", add_toolset)]
        for hook in sorted(_named_registration_hooks(host.pm)):
            table = reg.named.setdefault(hook[len("register_"):], {})
            kind = ModelProviderEntry if hook == "register_model_providers" else NamedFactory
            hooks.append((hook, named(hook, table, kind)))
        failed: dict = {}  # plugin -> why
        for hook, register in hooks:
            with host.failures.watch() as seen:
                getattr(host.pm.hook, hook)(register=register, config=config)
            for plugin, failure in seen.plugins.items():
                failed.setdefault(plugin, f"{hook} failed: {failure.error}")
        # A plugin that fails while registering is broken: none of it stays half-loaded.
        for plugin, why in failed.items():
            for table in reg.named.values():
                for name in [n for n, entry in table.items() if entry.plugin == plugin]:
                    del table[name]
            for name in [n for n, owner in toolset_owner.items() if owner == plugin]:
                reg.toolsets.pop(name, None)
            host.drop(plugin, why)
        prefer = config.section("tools.prefer")
        for name, tools in offered.items():
            tools = [t for t in tools if t.plugin not in failed]
            if tools:
                reg.tools[name], shadowed = _tool_winner(name, tools, prefer.get(name))
                if shadowed:
                    reg.shadowed[name] = shadowed
        return reg

    def expand_toolsets(self, names: Iterable[str]) -> set:
        """Tool names in the given toolsets (a toolset may include toolsets).
        Raises ``KeyError`` naming an unknown toolset."""
        by_own = {}
        for tool in self.tools.values():
            by_own.setdefault(tool.toolset, set()).add(tool.name)
        chosen: set = set()
        stack, seen = [(n, None) for n in names], set()
        while stack:
            name, parent = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name == "all":
                chosen |= set(self.tools)
            elif name in self.toolsets:
                for member in self.toolsets[name][0]:
                    if member in self.tools:
                        chosen.add(member)
                    else:
                        stack.append((member, name))
            elif name in by_own:
                chosen |= by_own[name]
            elif name in self.tools:
                chosen.add(name)
            elif parent is not None:
                # a member of a composite toolset whose plugin is not loaded
                log.info("toolset %s: member %s is not available", parent, name)
            else:
                from kernel.hints import close_matches

                known = sorted(set(self.toolsets) | set(by_own))
                near = close_matches(name, known)
                hint = f" (did you mean {', '.join(near)}?)" if near else ""
                raise KeyError(f"unknown toolset '{name}'{hint}; known: {', '.join(known) or 'none'}")
        return chosen


def _named_registration_hooks(pm) -> list:
    """The specified hooks shaped ``register_X(register, config)`` (besides
    tools and toolsets): each fills a table of named factories."""
    found = []
    for name, hc in vars(pm.hook).items():
        spec = getattr(hc, "spec", None)
        if spec is None or not name.startswith("register_") or name in ("register_tools", "register_toolsets"):
            continue
        if tuple(spec.argnames) in (("register", "config"), ("register",)):
            found.append(name)
    return found


def _tool_winner(name: str, tools: list, preferred: Optional[str]) -> tuple:
    """Two plugins registered one tool name: the one ``tools.prefer`` names,
    else the plugin loaded first (pluggy calls it last). Unless the user
    chose, the clash is one warning on stderr."""
    if len(tools) == 1:
        return tools[0], []
    chosen = next((t for t in tools if t.plugin == preferred), None)
    if chosen is None:
        if preferred:
            log.warning("tools.prefer.%s names plugin '%s', which does not register it", name, preferred)
        chosen = tools[-1]
        owners = ", ".join(f"'{t.plugin}'" for t in tools)
        log.warning("tool '%s' is registered by plugins %s; using '%s' (choose with tools.prefer: {%s: PLUGIN} "
                    "in config.yaml)", name, owners, chosen.plugin, name)
    return chosen, [t for t in tools if t is not chosen]
