"""Import one hermes plugin and run its registration, whatever its shape.

Accepted targets (entry-point values or directory packages):

* a module with ``register(ctx)`` (or a zero-argument ``register()``);
* a function taking ``ctx``, or a zero-argument function (a model provider
  registering itself through ``providers.register_provider``);
* a class or an instance: a memory provider or a context engine, by duck typing;
* a module that works by import side effects (``providers.register_provider``,
  ``tools.registry.registry.register``, or a ``MemoryProvider`` subclass
  defined in it, which is instantiated).

Everything runs with the host stand-ins available and with the plugin set as
the one being loaded, so side-effect registrations are attributed to it.

A ``register`` that raises half way: the plugin is marked ``error`` with the
reason, and what it registered before the exception stays live, as in
hermes-agent (its tools and hooks keep working; ``hermes plugins list`` shows
the error so the user can disable it). An import that fails registers nothing.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import types
from pathlib import Path
from typing import Any

from plugins.hermes_compat import standins, state
from plugins.hermes_compat.context import PluginContext, _is_context_engine, _is_memory_provider
from plugins.hermes_compat.state import log

NAMESPACE = "hermes_plugins"
_EFFECTS: dict = {}  # module name -> registrations its import made (replayed when it is loaded again)
_EFFECT_FIELDS = ("tools", "hooks", "profiles", "memory_providers", "context_engines", "commands", "cli_commands")


class RegisterFailed(Exception):
    """``register`` raised after the plugin was imported."""


def slug_of(key: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in key.replace("/", "__"))


def import_directory(path: Path, slug: str) -> types.ModuleType:
    """Import ``path/__init__.py`` as ``hermes_plugins.<slug>`` with ``__path__``
    set, so ``from . import tools`` works inside the plugin."""
    if NAMESPACE not in sys.modules:
        ns = types.ModuleType(NAMESPACE, "namespace of hermes directory plugins")
        ns.__path__ = []
        sys.modules[NAMESPACE] = ns
    name = f"{NAMESPACE}.{slug}"
    existing = sys.modules.get(name)
    if existing is not None and list(getattr(existing, "__path__", [])) == [str(path)]:
        return existing
    init = path / "__init__.py"
    if not init.is_file():
        raise FileNotFoundError(f"{path} has no __init__.py")
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    setattr(sys.modules[NAMESPACE], slug, module)
    return module


def _required_positional(fn: Any) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty)


def _adopt(obj: Any, ctx: PluginContext) -> bool:
    """Register a provider/engine/profile object; False if it is none of them."""
    if _is_memory_provider(obj):
        ctx.register_memory_provider(obj)
    elif _is_context_engine(obj):
        ctx.register_context_engine(obj)
    elif isinstance(getattr(obj, "name", None), str) and hasattr(obj, "api_mode") and hasattr(obj, "base_url"):
        from plugins.hermes_compat.host.providers import register_provider

        register_provider(obj)
    else:
        return False
    return True


def _call_register(fn: Any, ctx: PluginContext) -> None:
    import threading

    from plugins.hermes_compat.bridge import _resolve

    before = set(threading.enumerate())
    try:
        result = _resolve(fn() if _required_positional(fn) == 0 else fn(ctx))
    except Exception as exc:
        raise RegisterFailed(f"{type(exc).__name__}: {exc}") from exc
    finally:
        _waited_for_at_exit([t for t in threading.enumerate() if t not in before and t.daemon])
    if result is not None:
        _adopt(result, ctx)


EXIT_WAIT = 0.5  # seconds, in all, the background threads plugins started while registering get at exit


def _waited_for_at_exit(threads: list) -> None:
    """A daemon thread a plugin started (hermes-dreaming asks PyPI for a newer version over https) that is still
    inside OpenSSL when the process ends crashes it in OpenSSL's own exit cleanup (SIGSEGV after the command's
    output, about one run in six): at exit such threads get up to :data:`EXIT_WAIT` to end first."""
    if threads:
        import atexit

        atexit.register(_join, threads)


def _join(threads: list) -> None:
    import time

    deadline = time.monotonic() + EXIT_WAIT
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def _defined_subclass(module: types.ModuleType) -> Any:
    """The first concrete memory provider or context engine class defined in
    ``module`` (duck typed, so a subclass of the real hermes-agent base works too)."""
    for value in vars(module).values():
        if not (inspect.isclass(value) and value.__module__ == module.__name__) or inspect.isabstract(value):
            continue
        has = lambda *names: all(callable(getattr(value, n, None)) for n in names)  # noqa: E731
        if has("is_available", "initialize", "get_tool_schemas") or has("update_from_response", "should_compress",
                                                                        "compress"):
            return value
    return None


def run_target(obj: Any, ctx: PluginContext, record: state.PluginRecord) -> None:
    if inspect.ismodule(obj):
        register = getattr(obj, "register", None)
        if callable(register):
            _call_register(register, ctx)
            return
        if any(getattr(record, f) for f in _EFFECT_FIELDS):
            return  # it registered by side effect while being imported
        cls = _defined_subclass(obj)
        if cls is not None:
            run_target(cls, ctx, record)
            return
        log.info("hermes plugin %s: module %s has no register() and registered nothing on import",
                 record.name, obj.__name__)
        return
    if inspect.isclass(obj):
        try:
            instance = obj()
        except Exception as exc:
            raise RegisterFailed(f"cannot instantiate {obj.__name__}: {type(exc).__name__}: {exc}") from exc
        if not _adopt(instance, ctx):
            raise RegisterFailed(f"{obj.__name__} is neither a memory provider nor a context engine")
        return
    if callable(obj):
        _call_register(obj, ctx)
        return
    if not _adopt(obj, ctx):
        raise RegisterFailed(f"unsupported entry-point target {type(obj).__name__}")


def _import(kind: str, where: Any) -> tuple:
    """``(object, module name)``; the import itself, nothing else."""
    if kind == "dir":
        path, slug = where
        module = import_directory(path, slug)
        return module, module.__name__
    from hermes.host.plugins import load_target

    module_name = where.partition(":")[0].strip()
    return load_target(where), module_name


def load(cand: Any, kind: str, where: Any, manifest: Any, config: Any) -> Any:
    """Load one hermes plugin; returns the adapter the kernel registers.

    ``kind`` is ``"dir"`` (``where`` = (path, slug)) or ``"entrypoint"``
    (``where`` = ``"module:attr"``). Import errors propagate (the kernel marks
    the plugin ``error``); a failing ``register`` marks it ``error`` here and
    keeps what it registered before failing.
    """
    from plugins.hermes_compat.bridge import build_adapter

    record = state.PluginRecord(name=cand.name, source=getattr(manifest, "source", ""), manifest=manifest)
    entry = ((getattr(config, "data", {}) or {}).get("plugins") or {}).get("entries") or {}
    entry = entry.get(manifest.key or cand.name) if isinstance(entry, dict) else None
    record.allow_tool_override = bool(isinstance(entry, dict) and entry.get("allow_tool_override"))
    ctx = PluginContext(record, manifest, config)
    token = state.LOADING.set(record)
    try:
        with standins.window():
            full_name = f"{NAMESPACE}.{where[1]}" if kind == "dir" else where.partition(":")[0].strip()
            imported_before = full_name in sys.modules and (
                kind != "dir" or list(getattr(sys.modules[full_name], "__path__", [])) == [str(where[0])])
            obj, _ = _import(kind, where)
            record.modules.add(full_name if kind == "dir" else full_name.split(".")[0])
            if imported_before:
                for f, value in _EFFECTS.get(full_name, {}).items():
                    getattr(record, f).update(value) if isinstance(value, dict) else getattr(record, f).extend(value)
            else:
                _EFFECTS[full_name] = {f: (dict(v) if isinstance(v, dict) else list(v))
                                       for f in _EFFECT_FIELDS for v in [getattr(record, f)]}
            run_target(obj, ctx, record)
    except RegisterFailed as exc:
        record.error = f"register() failed: {exc}"
        kept = record.summary()
        cand.status, cand.error = "error", record.error + ("" if kept == "nothing" else f" (kept: {kept})")
        log.warning("hermes plugin %s: %s", cand.name, cand.error)
    finally:
        state.LOADING.reset(token)
    state.add(record)
    return build_adapter(record)
