"""``hermes_cli.config``: read and write ``config.yaml`` as plain dicts."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from plugins.hermes_compat.host.constants import get_config_path, get_hermes_home

__all__ = ["DEFAULT_CONFIG", "load_config", "load_config_readonly", "read_raw_config", "save_config", "cfg_get",
           "get_config_path", "get_hermes_home"]

DEFAULT_CONFIG: dict = {}
_MISSING = object()


def load_config() -> dict:
    """The user's config as a dict (a copy: changing it changes nothing on disk)."""
    from hermes.host.config import ConfigError, load_config as kernel_load

    try:
        return copy.deepcopy(kernel_load().data)
    except ConfigError:
        return {}


def load_config_readonly() -> dict:
    """hermes-agent 0.22's read-only ``load_config`` (it skips the copy; this
    one is a copy too, so a plugin that changes it changes nothing)."""
    return load_config()


def read_raw_config() -> dict:
    """The file as the user wrote it (hermes-agent 0.22 merges no defaults here either)."""
    return load_config()


def _merged(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def save_config(config: dict, *, strip_defaults: bool = True, preserve_keys: Any = None,
                merge_existing: bool = False) -> None:
    """Write a config dict back (atomically, like the kernel does). With
    ``merge_existing`` the file's sections the dict leaves out are kept.
    ``strip_defaults`` and ``preserve_keys`` are accepted for hermes' signature;
    the kernel writes only what the dict holds anyway."""
    if not isinstance(config, dict):
        raise TypeError(f"save_config expects a dict, got {type(config).__name__}")
    from hermes.host.config import ConfigError, load_config as kernel_load

    path = Path(get_config_path())
    try:
        existing = kernel_load().data if path.exists() else {}
    except ConfigError as exc:  # never replace a file the user can still fix
        raise RuntimeError(f"Refusing to overwrite {path}: the existing config cannot be read ({exc})") from None
    data = copy.deepcopy(config)
    if merge_existing:
        data = _merged(copy.deepcopy(existing), data)
    from plugins.config_command.edit import write

    write(path, data)


def cfg_get(config: Any, *keys: str, default: Any = None) -> Any:
    """``cfg_get(cfg, "a", "b")`` or ``cfg_get(cfg, "a.b")``: a nested value or ``default``."""
    parts = [p for key in keys for p in str(key).split(".")]
    node = config
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node
