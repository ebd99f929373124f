"""What the loaded plugins registered: tools, toolsets and named factories,
collected once per plugin host (``PluginHost.registry``)."""

from __future__ import annotations

import dataclasses
import inspect
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from hermes.host.isolation import WATCHDOG, HookTimeout, run_awaitable
from kernel.exceptions import is_user_interrupt
from kernel.hints import close_matches, did_you_mean
from kernel.hookspecs import Table
from kernel.types import Tool, ToolError

if TYPE_CHECKING:
    from hermes.host.plugins import PluginHost

log = logging.getLogger("hermes.plugins")


@dataclass
class Entry:
    """A name registered through a :class:`kernel.hookspecs.Table`'s hook (a provider's factory, a skill's folder)."""

    name: str
    value: Any
    description: str = ""
    plugin: str = ""


class Registry:
    """Tools, toolsets, and a table per named registration hook, read as ``registry[MODEL_PROVIDERS]`` with the
    :class:`~kernel.hookspecs.Table` its spec's module exports (a string is a TypeError: a misspelt table cannot read
    as empty). The guard says which plugin calls ``register``; one that fails while registering is dropped whole."""

    def __init__(self):
        self.tools: dict = {}
        self.toolsets: dict = {}  # name -> (members, description)
        self.named: dict = {}  # table name -> {name: Entry}
        self.shadowed: dict = {}  # tool name -> [Tool, ...] that lost to the one in ``tools``
        self._owners: dict = {}  # toolset -> the plugin that registered it
        self._offered: dict = {}  # tool name -> [Tool, ...] in the order the plugins registered them

    def __getitem__(self, table: Table) -> dict:
        if not isinstance(table, Table):
            raise TypeError(f"registry[...] takes a kernel.hookspecs.Table, got {type(table).__name__}")
        return self.named.get(table.name, {})  # its spec's plugin is not loaded: nothing registered

    @classmethod
    def collect(cls, host: PluginHost) -> "Registry":
        reg = cls()
        registrars = [("register_tools", reg._add_tool), ("register_toolsets", reg._add_toolset)]
        registrars += [(table.hook, reg._adder(table)) for table in _tables(host.pm)]
        failed: dict = {}  # plugin -> why
        for hook, register in registrars:
            with host.failures.watch() as seen:
                getattr(host.pm.hook, hook)(register=register, config=host.config)
            for plugin, failure in seen.plugins.items():
                failed.setdefault(plugin, f"{hook} failed: {failure.error}")
        gone = {each for plugin, why in failed.items() for each in host.drop(plugin, why)}
        for plugin in gone:  # broken, or extending one: none of it stays half-loaded
            reg._forget(plugin)
        reg._choose_tools(host.config.section("tools.prefer"), gone)
        for name, tool in reg.tools.items():  # built-ins keep their own limits (the shell's, a sub-agent's);
            record = host.record(tool.plugin)  # objects given in-process are the embedder's own
            if record is not None and record.source not in ("builtin", "object"):
                reg.tools[name] = dataclasses.replace(tool, handler=_timed(host, tool))
        for name in (n for n in host.config.get("agent.disabled_tools") or [] if n not in reg.tools):
            if near := close_matches(str(name), reg.tools, n=1):  # a typo blocks nothing (a distro's tools.blocked)
                log.warning("agent.disabled_tools/tools.blocked names no tool '%s' (did you mean '%s'?)", name, near[0])
        return reg

    def _add_tool(self, tool) -> None:
        if not isinstance(tool, Tool):
            raise TypeError(f"register() expects a kernel.types.Tool, got {type(tool).__name__}")
        if not tool.plugin:
            tool.plugin = WATCHDOG.current_plugin()
        self._offered.setdefault(tool.name, []).append(tool)

    def _add_toolset(self, name, tools, description="") -> None:
        if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
            raise TypeError(f"register_toolsets: register({name!r}, tools): tools must be a list of names")
        self.toolsets[name] = (list(tools), description)
        self._owners[name] = WATCHDOG.current_plugin()

    def _adder(self, table: Table) -> Callable:
        target = self.named.setdefault(table.name, {})

        def register(name, value, description=""):
            if not isinstance(name, str) or not name or (table.callable and not callable(value)):
                raise TypeError(f"{table.hook}: register({name!r}, factory): a name and a callable factory, "
                                f"got {type(value).__name__}")
            entry = Entry(name=name, value=value, description=description, plugin=WATCHDOG.current_plugin())
            if name in target:
                log.warning("%s: %s of plugin %s replaced by plugin %s (loaded earlier)", table.hook, name,
                            target[name].plugin, entry.plugin)
            target[name] = entry

        return register

    def _forget(self, plugin: str) -> None:
        for table in self.named.values():
            for name in [n for n, entry in table.items() if entry.plugin == plugin]:
                del table[name]
        for name in [n for n, owner in self._owners.items() if owner == plugin]:
            self.toolsets.pop(name, None)

    def _choose_tools(self, prefer: dict, failed: set) -> None:
        for name, tools in self._offered.items():
            if tools := [t for t in tools if t.plugin not in failed]:
                self.tools[name], shadowed = _tool_winner(name, tools, prefer.get(name))
                if shadowed:
                    self.shadowed[name] = shadowed

    def expand_toolsets(self, names: Iterable[str], reached: bool = False) -> set:
        """Tool names in the given toolsets (which may include toolsets); ``KeyError`` names an unknown one. With
        ``reached``: every name passed through instead (toolsets, ``all``, tools), whose tools ``names`` take in."""
        by_own: dict = {}
        for tool in self.tools.values():
            by_own.setdefault(tool.toolset, set()).add(tool.name)
        chosen, seen, stack = set(), set(), [(n, None) for n in names]
        while stack:
            name, parent = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in self.toolsets and name != "all":
                members = self.toolsets[name][0]
                chosen |= {m for m in members if m in self.tools}
                stack += [(m, name) for m in members if m not in self.tools]
            elif name == "all" or name in by_own or name in self.tools:
                chosen |= set(self.tools) if name == "all" else by_own.get(name) or {name}
            elif parent is not None:  # a member of a composite toolset whose plugin is not loaded
                log.info("toolset %s: member %s is not available", parent, name)
            else:
                known = sorted(set(self.toolsets) | set(by_own))
                raise KeyError(f"unknown toolset '{name}'{did_you_mean(name, known)}; known: {', '.join(known) or 'none'}")
        return seen if reached else chosen


def _timed(host: PluginHost, tool: Tool) -> Callable:
    """A third-party tool's handler under ``tools.timeout``, which Ctrl+C gets out of as out of a hook;
    what the tool raises is still the model's to read."""
    def handler(args, ctx):
        box: dict = {}

        def call():
            try:
                result = tool.handler(args, ctx)
                box["value"] = run_awaitable(result) if inspect.isawaitable(result) else result
            except BaseException as exc:
                if isinstance(exc, HookTimeout) or is_user_interrupt(exc):
                    raise
                box["error"] = exc

        seconds = float(host.config.get("tools.timeout") or 0)
        host.contain(tool.plugin, f"tool {tool.name}", call, seconds=seconds)
        if "error" in box:
            raise box["error"]
        if "value" not in box:
            raise ToolError(f"{tool.name} did not finish within tools.timeout ({seconds:g} s) and was stopped")
        return box["value"]

    return handler


def _tables(pm) -> list:
    """A :class:`Table` per hook shaped ``register_X(register, config)`` but tools and toolsets: the one its
    spec's module exports, else a plain one (a hook another host's plugin brought)."""
    found = []
    for name, hc in sorted(vars(pm.hook).items()):
        spec = getattr(hc, "spec", None)
        if spec is None or not name.startswith("register_") or name in ("register_tools", "register_toolsets"):
            continue
        if tuple(spec.argnames) in (("register", "config"), ("register",)):
            exported = [v for v in vars(spec.namespace).values() if isinstance(v, Table) and v.hook == name]
            found.append(exported[0] if exported else Table(name))
    return found


def _tool_winner(name: str, tools: list, preferred: Optional[str]) -> tuple:
    """Two plugins registered one tool name: the one ``tools.prefer`` names, else the plugin loaded first
    (pluggy calls it last); unless the user chose, the clash is one warning."""
    if len(tools) == 1:
        return tools[0], []
    chosen = next((t for t in tools if t.plugin == preferred), None)
    if chosen is None:
        if preferred:
            log.warning("tools.prefer.%s names plugin '%s', which does not register it", name, preferred)
        chosen = tools[-1]
        log.warning("tool '%s' is registered by plugins %s; using '%s' (choose with tools.prefer: {%s: PLUGIN} "
                    "in config.yaml)", name, ", ".join(f"'{t.plugin}'" for t in tools), chosen.plugin, name)
    return chosen, [t for t in tools if t is not chosen]
