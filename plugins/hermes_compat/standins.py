"""Serve hermes-agent's host modules to hermes plugins, and to nobody else.

Plugins import ``agent.memory_provider``, ``tools.registry``, ``providers``...
Those are dangerously generic top-level names, so they are never installed as
real packages. A ``sys.meta_path`` finder answers for exactly these names, and
only:

* inside :func:`window` (while a hermes plugin is imported or registers, and
  around every call into its code: hooks, tools, commands, so imports done
  lazily inside a function work too), or
* when the import comes from a hermes plugin's own module (a background
  thread of the plugin importing lazily).

When the outermost window closes, the stand-ins are taken out of
``sys.modules`` again (an entry that was there before is put back), so other
code never sees them. The module objects are cached, so a plugin importing a
stand-in twice gets the same classes and registries.

Nothing is served when hermes-agent itself is installed: its plugins then use
the real modules.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import threading
import types
from contextlib import contextmanager
from typing import Optional

from plugins.hermes_compat import state

_HOST = "plugins.hermes_compat.host."
# stand-in name -> our module (None: a plain package holding submodules)
STANDINS = {
    "agent": None,
    "agent.memory_provider": _HOST + "memory_provider",
    "agent.context_engine": _HOST + "context_engine",
    "agent.context_compressor": _HOST + "context_compressor",
    "agent.web_search_provider": _HOST + "web_search_provider",
    "agent.tts_provider": _HOST + "tts_provider",
    "agent.secret_sources": None,
    "agent.secret_sources.base": _HOST + "secret_source_base",
    "providers": _HOST + "providers",
    "providers.base": _HOST + "provider_base",
    "tools": None,
    "tools.registry": _HOST + "tool_registry",
    "hermes_constants": _HOST + "constants",
    "hermes_state": _HOST + "state_db",
    "hermes_cli": None,
    "hermes_cli.config": _HOST + "cli_config",
    "hermes_cli.plugins": _HOST + "cli_plugins",
    # ``plugins`` is our own package; only this one submodule is served under it
    "plugins.plugin_utils": _HOST + "plugin_utils",
}
# ``agent.context_compressor`` serves hermes' built-in compressor as a base
# class whose inherited behaviour is the kernel's compressor (see its module).
# Our own namespace for directory plugins (``hermes_plugins.<slug>``) is a
# real package in sys.modules once a directory plugin loads; it is not a
# generic name.

_lock = threading.RLock()
_depth = 0
_saved: dict = {}
_cache: dict = {}
_local = threading.local()
_hermes_agent_installed: Optional[bool] = None


def hermes_agent_installed() -> bool:
    """True when the real hermes-agent is importable (its ``hermes_cli`` package)."""
    global _hermes_agent_installed
    if _hermes_agent_installed is None:
        _hermes_agent_installed = importlib.machinery.PathFinder.find_spec("hermes_cli") is not None
    return _hermes_agent_installed


def module_for(name: str) -> types.ModuleType:
    """The cached stand-in module object for a stand-in name."""
    with _lock:
        mod = _cache.get(name)
        if mod is None:
            target = STANDINS[name]
            if target is None:
                mod = types.ModuleType(name, f"hermes-compat stand-in package {name!r}")
            else:
                mod = importlib.import_module(target)
            if not hasattr(mod, "__path__"):
                mod.__path__ = []  # a package: its submodules are stand-ins too
            _cache[name] = mod
        return mod


class _Loader:
    def __init__(self, name: str):
        self.name = name

    def create_module(self, spec):
        return module_for(self.name)

    def exec_module(self, module):
        parent, _, child = self.name.rpartition(".")
        if parent and parent in sys.modules:
            setattr(sys.modules[parent], child, module)


def _caller_is_plugin() -> bool:
    frame = sys._getframe(2)
    for _ in range(40):
        if frame is None:
            return False
        mod = frame.f_globals.get("__name__", "")
        if not (mod.startswith("importlib") or mod == __name__ or mod.startswith("_frozen_importlib")):
            if mod.startswith("hermes_plugins.") or mod.startswith(_HOST):
                return True
            return state.owner_of_module(mod) is not None
        frame = frame.f_back
    return False


class StandinFinder:
    """Answers only for the stand-in names, only for hermes plugin code."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in STANDINS or hermes_agent_installed():
            return None
        if not (_depth > 0 or _caller_is_plugin()):
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(fullname), is_package=True)

    def invalidate_caches(self):
        return None


_finder = StandinFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if hermes_agent_installed():
        return
    with _lock:
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)


@contextmanager
def window():
    """Serve the stand-ins while the body runs (re-entrant, thread-safe)."""
    global _depth
    if hermes_agent_installed():
        yield
        return
    install()
    with _lock:
        if _depth == 0:
            for name in STANDINS:
                if name in sys.modules and sys.modules[name] is not _cache.get(name):
                    _saved[name] = sys.modules.pop(name)  # someone else's module of that name
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for name in STANDINS:
                    if name in sys.modules and sys.modules[name] is _cache.get(name):
                        del sys.modules[name]
                for name, mod in _saved.items():
                    sys.modules[name] = mod
                _saved.clear()
