"""The plugin host: find plugins (the ``hermes.plugins`` entry points, built-in or not, and what a loaded
plugin's ``discover_plugins`` adds), decide which load, load each in isolation. One resolver
(:func:`resolve`) decides every candidate's status, for listing and the runtime alike:

* ``enabled``, always: the essential built-ins (:data:`ESSENTIAL`); naming one in ``plugins.disabled`` or a
  distro's ``blocked`` is an error, a selection need not name it;
* ``disabled``: named in ``plugins.disabled`` (or blocked by the distro); wins over the rest;
* ``not enabled``: opt-in plugins not named in ``plugins.enabled``, anything outside ``HERMES_PLUGINS``
  when it is set, non-built-ins under ``HERMES_SAFE_MODE=1``;
* ``enabled``: everything else (native plugins are on once installed, like pytest's);
* ``error``: it was enabled but failed to import, to register, or implements a hook name that does not
  exist. The rest keep working. Listing imports nothing.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from hermes.host.essential import ESSENTIAL
from hermes.host.isolation import (WATCHDOG, Failures, after_import, contain, guard_plugin, run_awaitable,
                                    signal_handlers)
from hermes.host.paths import stamp
from kernel.hints import close_matches, did_you_mean

GROUP = "hermes.plugins"
OWN_DISTRIBUTION = "hermes_kernel"

ENABLED, DISABLED, NOT_ENABLED, ERROR = "enabled", "disabled", "not enabled", "error"

log = logging.getLogger("hermes.plugins")
_said: set = set()  # plugin names a selection names that were already warned of as not found in this process


@dataclass
class Candidate:
    """A plugin found by a source, before and after it was loaded."""

    name: str
    source: str  # builtin / entrypoint / or what another source calls itself
    target: str = ""  # "module:attr" or a path
    version: str = ""
    dist: str = ""
    default_enabled: bool = True  # False: opt-in (must be listed in plugins.enabled)
    load: Optional[Callable[[], Any]] = None  # returns the plugin object to register
    meta: str = ""  # the distribution's metadata folder, where its finder says (``PathDistribution(meta)``)
    description: str = ""
    status: str = ""
    reason: str = ""
    error: str = ""
    hooks: list = field(default_factory=list)

    def summary(self) -> str:
        return self.description or (f"built-in ({self.target})" if self.source == "builtin" else "")

    def as_dict(self, with_hooks: bool = False) -> dict:
        data = {"name": self.name, "version": self.version, "source": self.source, "status": self.status,
                "description": self.summary(), "target": self.target, "distribution": self.dist,
                "reason": self.reason, "error": self.error or None}
        return {**data, "hooks": list(self.hooks)} if with_hooks else data


# --------------------------------------------------------------------------
# Entry points (importlib.metadata: the distribution's own name and version)


def _norm(name: str) -> str:
    return name.replace("-", "_").replace(".", "_").lower()


_installed: dict = {}  # the stamps of sys.path's folders -> every entry point on them
_ROW = {"name", "target", "dist", "version", "description", "source", "meta", "error"}  # a kept entry point


def entry_points(group: str) -> list:
    """Every entry point of ``group`` as a :class:`Candidate`, read from every installed distribution's metadata
    once while the folders of ``sys.path`` keep their times (an install changes one) and kept with the load state:
    later commands neither parse the metadata nor import ``importlib.metadata``."""
    from hermes.host import loadstate

    state, key = loadstate.read_state(), loadstate.stamps([entry or "." for entry in sys.path])
    kept = state.get("entry_points") if isinstance(state.get("entry_points"), dict) else {}
    kept, rows = (kept, kept.get(group)) if kept.get("key") == key else ({"key": key}, None)
    if not isinstance(rows, list) or not all(isinstance(row, dict) and set(row) == _ROW and all(
            isinstance(value, str) for value in row.values()) for row in rows):  # not kept yet, or a hand edit's
        rows = kept[group] = _installed_rows(group, tuple(key))
        state["entry_points"] = kept
        loadstate.unsaved.append(group)  # written with what the load found: one write, not one per group
    return [Candidate(**row, load=functools.partial(load_target, row["target"])) for row in rows]


def _installed_rows(group: str, key: tuple) -> list:
    """``group``'s entry points as :class:`Candidate` fields, from ``importlib.metadata``."""
    from importlib import metadata

    if key not in _installed:
        _installed.clear()
        _installed[key] = metadata.entry_points()
    rows, named = [], {}  # id(distribution) -> its fields: each METADATA read parses the whole file
    for ep in _installed[key].select(group=group):
        if id(ep.dist) not in named:
            meta = ep.dist.metadata
            own = _norm(meta["Name"] or "") == OWN_DISTRIBUTION  # a built-in's description is its docstring
            named[id(ep.dist)] = {"dist": meta["Name"] or "", "version": meta["Version"] or "", "source": "builtin"
                                  if own else "entrypoint", "description": "" if own else meta["Summary"] or "",
                                  "meta": str(getattr(ep.dist, "_path", "") or "")}  # other finders may not say
        bad = not metadata.EntryPoint.pattern.match(ep.value)  # said if it is enabled (_load_all)
        rows.append({"name": ep.name, "target": ep.value, **named[id(ep.dist)], "error": f"its entry point's value "
                     f"{ep.value!r} is not 'module' or 'module:attr'" if bad else ""})
    return rows


def forget_entry_points() -> None:
    """``pip`` ran in this process: read what is installed again, even if no folder's time moved."""
    from hermes.host import loadstate

    _installed.clear()
    if loadstate.read_state().pop("entry_points", None) is not None:
        loadstate.unsaved.append("")  # the next write drops the kept copy too


def load_target(target: str) -> Any:
    """Import ``module`` or ``module:attr.attr`` (an entry point's value)."""
    import pkgutil

    target = target.strip()  # "module:" imports the module itself: its own ImportError is the one said
    return pkgutil.resolve_name(target if ":" in target else target + ":")


@contextlib.contextmanager
def paused_collector():
    """No collection while start-up allocates for good (plugins, an SDK); frozen after, the collector as it was."""
    collecting = gc.isenabled()  # a tenth of a start went to collecting what lives as long as the process
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def entry_point_candidates(group: str = GROUP) -> list:
    """Every plugin of ``group`` in load order: built-ins by name, then the others by distribution and name
    (``importlib.metadata``'s order, by path and folder, would make who runs first depend on the machine)."""
    return sorted(entry_points(group),
                  key=lambda c: (c.source != "builtin", "" if c.source == "builtin" else _norm(c.dist), c.name))


# --------------------------------------------------------------------------
# The resolver


@dataclass
class Selection:
    """What may load: from config, the environment and a distro."""

    enabled: set = field(default_factory=set)
    disabled: set = field(default_factory=set)
    only: Optional[set] = None  # HERMES_PLUGINS or a distro's exact set
    only_label: str = "HERMES_PLUGINS"
    safe_mode: bool = False
    named: dict = field(default_factory=dict)  # who named plugins -> the names: a typo would just leave one out
    blocked: dict = field(default_factory=dict)  # plugin -> why, when a distro blocks it (config.yaml cannot undo it)

    @classmethod
    def from_config(cls, config, environ=None, distro=None) -> "Selection":
        env = os.environ if environ is None else environ
        sel = cls(enabled=set(config.get("plugins.enabled") or []), disabled=set(config.get("plugins.disabled") or []),
                  safe_mode=env.get("HERMES_SAFE_MODE", "").strip().lower() in ("1", "true", "yes", "on"))
        sel.named.update({f"{config.where()}: plugins.{k}": set(getattr(sel, k)) for k in ("enabled", "disabled")})
        if (raw := env.get("HERMES_PLUGINS")) is not None:
            sel.only = sel.named["HERMES_PLUGINS"] = {p.strip() for p in raw.split(",") if p.strip()}
        if distro is not None:
            distro.apply_to(sel)
        return sel


def resolve(candidates: Iterable[Candidate], selection: Selection) -> None:
    """Set ``status`` and ``reason`` of every candidate: the one truth of what is listed and loaded."""
    for c in candidates:
        if c.name in ESSENTIAL and c.source == "builtin":
            c.status, c.reason = ENABLED, "essential"
        elif c.name in selection.disabled:
            c.status, c.reason = DISABLED, selection.blocked.get(c.name, "disabled in config")
        elif selection.safe_mode and c.source != "builtin":
            c.status, c.reason = NOT_ENABLED, "safe mode (HERMES_SAFE_MODE) loads built-ins only"
        elif selection.only is not None:  # HERMES_PLUGINS, or a distro's only
            c.status, c.reason = (ENABLED, "") if c.name in selection.only else (NOT_ENABLED, "not ")
            c.reason += f"listed in {selection.only_label}"
        elif c.name in selection.enabled:
            c.status, c.reason = ENABLED, "enabled in config"
        elif c.default_enabled:
            c.status, c.reason = ENABLED, "installed"
        else:
            c.status, c.reason = NOT_ENABLED, f"opt-in: run `hermes plugins enable {c.name}`"


def _fingerprint(candidates: Iterable[Candidate]) -> list:
    """What decides loading: each candidate as installed (its metadata's time moves on install) and selected."""
    rows = []
    for c in sorted(candidates, key=lambda c: (c.name, c.source)):
        path = c.meta or (c.target if c.target and os.sep in c.target else None)
        found = stamp(str(path)) if path is not None else None
        rows.append(f"{c.name}|{c.source}|{c.dist}|{c.version}|{c.target}|{c.status}|{found[0] if found else 0}")
    return rows


class PluginHost:
    """Owns the pluggy manager, the loaded plugins and what they registered."""

    def __init__(self, config):
        self.config = config
        self.records: list = []
        self._proxies: list = []  # (name, guarded stand-in) of every loaded plugin, in load order
        self._unusable: list = []  # (candidate, why) for the adapt_plugin hook
        self._warned: set = set()
        self._registry = None
        self._unfit: list = []  # (plugin, why): implementations a later plugin's specs rejected
        self.spec_owners: dict = {}  # spec namespace name -> the plugin that added it
        self.fingerprint: list = []  # what was installed and selected when this host was built
        self.failures = Failures(self._report)  # every failure of plugin code through this host
        self.pm = self._manager()
        WATCHDOG.timeout = float(config.get("plugins.hook_timeout") or 0)  # checked (a wrong type is skipped)
        WATCHDOG.start()
        _trace(self.pm)

    def _manager(self):
        """A pluggy manager with the specs; a plugin's own join as it registers (``register_hookspecs``)."""
        import pluggy

        from hermes.cli import hookspecs as program_specs
        from hermes.host import hookspecs as host_specs
        from kernel import hookspecs

        pm = pluggy.PluginManager("hermes")
        for specs in (hookspecs, host_specs, program_specs):  # the program's too: see hermes.cli.hookspecs
            pm.add_hookspecs(specs)

        def add(namespace: Any) -> None:
            self.spec_owners.setdefault(getattr(namespace, "__name__", repr(namespace)), WATCHDOG.current_plugin())
            try:
                pm.add_hookspecs(namespace)
            except pluggy.PluginValidationError as exc:  # an implementation registered earlier does not fit
                bad = pm.get_name(exc.plugin) if exc.plugin is not None else None
                if bad is None or bad == WATCHDOG.current_plugin():
                    raise
                pm.unregister(exc.plugin)
                self._unfit.append((bad, f"registration failed: {_one_line(exc)}"))

        pm.hook.register_hookspecs.call_historic(kwargs={"add": add})
        return pm

    # -- building
    @classmethod
    def discover(cls, config, *, distro=None, environ=None, import_third_party: bool = True,
                 builtins: Optional[set] = None, warn_unknown: bool = True) -> "PluginHost":
        """Find, select and load the plugins; with ``import_third_party=False`` the built-ins only (or the
        ``builtins`` named), as listing needs; ``warn_unknown=False``: the caller reports unknown keys."""
        host = cls(config)
        selection = Selection.from_config(config, environ, distro)
        candidates = entry_point_candidates()
        resolve(candidates, selection)
        host.fingerprint = _fingerprint(candidates)
        host._load_all([c for c in candidates if import_third_party or (
            c.source == "builtin" and (builtins is None or c.name in builtins))])
        # Other sources come from loaded plugins and go through the same resolver.
        extra = [c for found in host.pm.hook.discover_plugins(config=config) for c in found or []]
        if extra:
            known = {c.name for c in candidates}
            extra = [c for c in extra if c.name not in known]
            resolve(extra, selection)
            host.fingerprint += _fingerprint(extra)
            if import_third_party:
                host._load_all(extra)
        host._adapt_unusable(config)
        host.records = candidates + extra
        host._verify(warn_unknown=import_third_party and warn_unknown)
        known = [c.name for c in host.records]
        for who, names in selection.named.items():
            for name in sorted(n for n in names - set(known) - _said if isinstance(n, str)):  # a number: a wrong type
                _said.add(name)
                log.warning("%s names plugin '%s', which is not found%s", who, name,
                            did_you_mean(name, known) or " (not installed?)")
        return host

    def _adapt_unusable(self, config) -> None:
        """Offer entry points unusable as they are (foreign plugin shapes) to the ``adapt_plugin`` hook."""
        pending, self._unusable = self._unusable, []
        for cand, error in pending:
            adapter = self.pm.hook.adapt_plugin(candidate=cand, error=error, config=config)
            if adapter is not None:
                failed = cand.error if cand.status == ERROR and cand.error != error else ""
                cand.status, cand.error, cand.reason = ENABLED, "", "adapted"
                self._register(cand, adapter)
                if failed and cand.status == ENABLED:
                    cand.status, cand.error = ERROR, failed  # the adapter kept what it could

    @classmethod
    def from_objects(cls, objects: Iterable[Any], config, providers: Optional[bool] = None) -> "PluginHost":
        """A host from plugin objects given in-process (tests, embedding), after the essential built-ins and,
        when ``providers`` (by default: when no object given registers a model provider), the built-in ones."""
        host, objects = cls(config), list(objects)
        given = [(name, load_target(module), "essential") for name, module in ESSENTIAL.items()]
        if providers or (providers is None and not any(hasattr(o, "register_model_providers") for o in objects)):
            given += [(c.name, c.load(), "built-in provider") for c in entry_point_candidates()
                      if c.source == "builtin" and c.target.startswith("plugins_providers.")]
        given += [(getattr(obj, "__name__", None) or type(obj).__name__, obj, "given") for obj in objects]
        for name, obj, why in given:
            cand = Candidate(name=name, source="object", target=name, status=ENABLED, reason=why)
            host._register(cand, obj)
            host.records.append(cand)
        host._verify()
        return host

    def _load_all(self, candidates: list) -> None:
        for cand in candidates:
            if cand.status != ENABLED:
                continue
            if cand.error:  # found with it (an entry point's value that names nothing to import)
                cand.status = ERROR
                log.warning("plugin %s: %s", cand.name, cand.error)
                continue
            pid, handlers = os.getpid(), signal_handlers()
            with self.failures.watch(quiet=True) as seen:  # an import that raises, exits or hangs past the deadline
                obj = self.contain(cand.name, "import", cand.load)
            after_import(cand.name, pid, handlers)
            if seen.failures:
                cand.status, cand.error = ERROR, f"import failed: {seen.failures[0].error}"
                log.warning("plugin %s: %s", cand.name, cand.error)
                if cand.source == "entrypoint":
                    self._unusable.append((cand, cand.error))
                continue
            self._register(cand, obj)
            if cand.status == ENABLED and not cand.hooks and cand.source == "entrypoint" and (
                callable(getattr(obj, "register", None)) or (callable(obj) and not hasattr(obj, "__path__"))
            ):
                self._unload(cand.name, ERROR, "", "")  # not yet among the records: said on the candidate
                cand.status, cand.error = ERROR, "implements no hermes hook (it looks like another host's plugin: a " \
                                                 "register() function)"
                self._unusable.append((cand, cand.error))

    def _register(self, cand: Candidate, obj: Any) -> None:
        import pluggy

        try:
            proxy = guard_plugin(self.pm, obj, cand.name, self.failures)
            with self.failures.watch() as seen:  # its register_hookspecs runs now (the hook is historic)
                self.pm.register(proxy, name=cand.name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            cand.status, cand.error = ERROR, f"registration failed: {_one_line(exc)}"
            log.warning("plugin %s: %s", cand.name, cand.error)
            return
        if cand.name in seen.plugins:
            self.pm.unregister(name=cand.name)
            cand.status, cand.error = ERROR, f"register_hookspecs failed: {seen.plugins[cand.name].error}"
            log.warning("plugin %s: %s", cand.name, cand.error)
            return
        if not cand.description and cand.source != "entrypoint":
            doc = (getattr(obj, "__doc__", None) or "").strip()
            cand.description = doc.splitlines()[0].replace("``", "") if doc else ""
        cand.hooks = sorted(hc.name for hc in self.pm.get_hookcallers(proxy) or [])
        self._proxies.append((cand.name, proxy))
        self._registry = None

    def _verify(self, warn_unknown: bool = True) -> None:
        """Once every plugin registered its specs: unload a plugin implementing a hook nobody specifies
        (not marked ``optionalhook``) with a did-you-mean, then declare and check the config keys."""
        for name, why in self._unfit:
            self.drop(name, why)
        self._unfit = []
        for plugin in _pending(self.pm):
            name, loaded = self.pm.get_name(plugin), {c.name for c in self.records if c.status == ENABLED}
            absent = [n for n in getattr(plugin.__wrapped_plugin__, "requires_plugins", ()) if n not in loaded]
            if absent:  # the plugin it extends brings the specs: said by `plugins list`, not on every command
                self.drop(name, f"not loaded: needs {', '.join(absent)} (`hermes plugins enable {absent[0]}`)", True)
                continue
            specs = [n for n, hc in vars(self.pm.hook).items() if getattr(hc, "spec", None) is not None]
            hints = [f"'{hook}'{_hint(hook, specs)}" for hook in _unknown_hooks(self.pm, plugin)]
            self.drop(name, "unknown hook " + ", ".join(hints))
        self._declare_config(warn=warn_unknown)

    def _declare_config(self, warn: bool = True) -> None:
        """Collect ``register_config`` declarations and check the values (a wrong type is the user's
        ConfigError, not the plugin's failure); with every plugin loaded, warn once of keys nobody declares."""
        import builtins
        import dataclasses

        from kernel.keys import Key

        keys = []

        def declare(key, type=None, default=None, help="", minimum=None, choices=()):  # noqa: A002 - the spec's names
            owner = WATCHDOG.current_plugin() or "?"
            if isinstance(key, Key):
                keys.append(dataclasses.replace(key, owner=owner))
            elif isinstance(type, (tuple, builtins.type)) or type == list[str]:
                keys.append(Key(str(key), type, default, str(help), owner, minimum, choices=tuple(choices)))
            else:
                raise TypeError(f"declare({key!r}): give a type (int, float, str, bool, list, dict), got {type!r}")

        with self.failures.watch() as seen:
            self.pm.hook.register_config(declare=declare, config=self.config)
        for plugin, failure in seen.plugins.items():  # broken, as in the registry's hooks
            if self.pm.get_plugin(plugin) is not None:
                self.drop(plugin, f"register_config failed: {failure.error}")
        self.config.declare(keys)
        WATCHDOG.timeout = float(self.config.get("plugins.hook_timeout") or 0)  # a plugin may declare another
        if warn:  # with third-party plugins not imported (a listing) their keys are not known
            warn_unknown_keys(self.config)

    def _report(self, failure, exc: BaseException) -> None:
        # the same failure from several hooks (a broken store) is one warning, repeats go to debug
        level = logging.DEBUG if (failure.plugin, failure.error) in self._warned else logging.WARNING
        self._warned.add((failure.plugin, failure.error))
        log.log(level, "plugin %s: hook %s raised %s", failure.plugin, failure.hook, failure.error,
                exc_info=exc if log.isEnabledFor(logging.DEBUG) else None)

    # -- per-agent managers: callbacks of one Agent never reach another
    def manager_with(self, callbacks: Iterable[Any]):
        callbacks = list(callbacks)
        if not callbacks:
            return self.pm
        pm = self._manager()
        for name, proxy in self._proxies:  # already guarded
            pm.register(proxy, name=name)
        for i, obj in enumerate(callbacks):
            name = f"callback-{i}-{type(obj).__name__}"
            proxy = guard_plugin(pm, obj, name, self.failures)
            pm.register(proxy, name=name)
        for proxy in _pending(pm):  # the plugins were checked when the host was built (those found here
            if pm.get_name(proxy).startswith("callback-"):  # implement specs of a plugin dropped since: they go)
                raise ValueError(f"callback object {type(proxy.__wrapped_plugin__).__name__}: unknown hook(s) "
                                 f"{', '.join(_unknown_hooks(pm, proxy))}")
            pm.unregister(proxy)
        _trace(pm)
        return pm

    # -- the services the loop runs plugin code with (kernel.protocols.Host): the rest is the process's watchdog's
    def contain(self, plugin: str, what: str, fn: Callable, *args: Any, default: Any = None, **kwargs: Any) -> Any:
        return contain(self.failures, plugin, what, fn, *args, default=default, **kwargs)

    waiting, interrupt_thread = staticmethod(WATCHDOG.waiting), staticmethod(WATCHDOG.interrupt_thread)
    run_awaitable = staticmethod(run_awaitable)  # an async tool's coroutine, awaited on this thread or a helper

    # -- what the plugins registered
    @property
    def registry(self):
        """The :class:`~hermes.host.registry.Registry` of the loaded plugins (collected once)."""
        if self._registry is None:
            from hermes.host.registry import Registry

            self._registry = Registry.collect(self)
        return self._registry

    @property
    def objects(self) -> list:
        """(name, object) of every loaded plugin, in load order (hermes-compat orders hermes-agent's plugins by it)."""
        return [(name, proxy.__wrapped_plugin__) for name, proxy in self._proxies]

    def _unload(self, name: str, status: str, why: str, theirs: str) -> list:
        """Unregister a plugin and those that extend it (``requires_plugins``: their hooks' specs may be its
        own; listed as disabled, ``theirs`` saying why); the names unloaded."""
        names = [name, *(n for n, p in self._proxies if name in getattr(p.__wrapped_plugin__, "requires_plugins", ()))]
        for each in names:
            if self.pm.get_plugin(each) is not None:
                self.pm.unregister(name=each)
            rec = self.record(each) or Candidate(each, "")
            rec.status = status if each == name else DISABLED
            setattr(rec, "error" if rec.status == ERROR else "reason", why if each == name else theirs)
        self._proxies, self._registry = [(n, p) for n, p in self._proxies if n not in names], None
        return names

    def set_aside(self, name: str, why: str) -> None:
        """Unload a plugin for this run on the user's word (``--no-save``), and the plugins that extend it."""
        self._unload(name, DISABLED, why, f"needs {name}, set aside: {why}")

    def drop(self, name: str, why: str, quiet: bool = False) -> list:
        """Unload a plugin that turned out broken after it was registered, and those that extend it (``quiet``:
        said by the listing alone); the names unloaded."""
        log.log(logging.DEBUG if quiet else logging.WARNING, "plugin %s: %s", name, why)
        return self._unload(name, ERROR, why, f"needs {name}, which failed")

    def record(self, name: str) -> Optional[Candidate]:
        return next((c for c in self.records if c.name == name), None)


_warned_keys: set = set()  # one warning per unknown key and process


def warn_unknown_keys(config) -> None:
    """One warning for the keys of config.yaml and the distro's defaults no loaded part declares (five, and a count)."""
    by_place: dict = {}
    for where, name, hint in [found for found in config.unknown_keys() if found[:2] not in _warned_keys]:
        _warned_keys.add((where, name))
        by_place.setdefault(where, []).append(f"'{name}'{hint}")
    for where, listed in by_place.items():
        more = f" and {len(listed) - 5} more (`hermes config check` lists them)" if len(listed) > 5 else ""
        log.warning("%s: unknown key%s %s%s; no loaded plugin reads %s (see `hermes config show`)", where,
                    "s" if len(listed) > 1 else "", ", ".join(listed[:5]), more, "them" if len(listed) > 1 else "it")


def _trace(pm) -> None:
    target = os.environ.get("HERMES_TRACE_HOOKS", "").strip()
    if target not in ("", "0"):
        from hermes.host.tracing import tracer

        pm.add_hookcall_monitoring(*tracer(target))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())  # pluggy's validation messages span lines


def _pending(pm):
    """Each plugin ``check_pending`` finds implementing a hook no spec defines (``optionalhook`` passes:
    its spec's owner may not be loaded); the caller unregisters it before the next."""
    import pluggy

    while True:
        try:
            pm.check_pending()
            return
        except pluggy.PluginValidationError as exc:
            yield exc.plugin


def _hint(hook: str, specs: list) -> str:
    """A did-you-mean among the hooks of the same kind (``register_``, ``on_`` ...) whose rest is close."""
    kind = next((k for k in ("register_", "on_", "pre_", "post_", "transform_") if hook.startswith(k)), "")
    same = {n[len(kind):]: n for n in specs if n.startswith(kind)}
    near = close_matches(hook[len(kind):], same, n=1)
    return f" (did you mean '{same[near[0]]}'?)" if near else ""


def _unknown_hooks(pm, plugin) -> list:
    return [hc.name for hc in pm.get_hookcallers(plugin) or [] if hc.spec is None and not all(
        i.optionalhook for i in hc.get_hookimpls() if i.plugin is plugin)]

