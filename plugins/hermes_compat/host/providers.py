"""``providers``: the registry of model provider profiles.

A model-provider plugin calls :func:`register_provider` at import time; the
profile is recorded for the plugin being loaded and becomes a kernel model
provider (see :mod:`plugins.hermes_compat.bridge`).
"""

from __future__ import annotations

import threading

from plugins.hermes_compat import state
from plugins.hermes_compat.host.provider_base import OMIT_TEMPERATURE, ProviderProfile

__all__ = ["register_provider", "get_provider_profile", "list_providers", "ProviderProfile", "OMIT_TEMPERATURE"]

_lock = threading.Lock()
_REGISTRY: dict = {}
_ALIASES: dict = {}


def register_provider(profile: ProviderProfile) -> None:
    """Register a profile by name and aliases (the last registration wins)."""
    name = getattr(profile, "name", None)
    if not isinstance(name, str) or not name:
        state.log.warning("providers.register_provider: expected a ProviderProfile with a name, got %r; ignored",
                          profile)
        return
    with _lock:
        _REGISTRY[name] = profile
        for alias in getattr(profile, "aliases", ()) or ():
            if isinstance(alias, str):
                _ALIASES[alias] = name
    rec = state.current()
    if rec is not None:
        rec.profiles = [p for p in rec.profiles if p.name != name] + [profile]
    else:
        state.log.warning("model provider %r registered outside a plugin load; it is not offered to the kernel", name)


def get_provider_profile(name: str):
    with _lock:
        return _REGISTRY.get(_ALIASES.get(name, name))


def list_providers() -> list:
    with _lock:
        seen, out = set(), []
        for profile in _REGISTRY.values():
            if id(profile) not in seen:
                seen.add(id(profile))
                out.append(profile)
        return out
