"""``hermes_cli.config``: read and write ``config.yaml`` as plain dicts."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from plugins.hermes_compat.host.constants import get_config_path, get_hermes_home

__all__ = ["DEFAULT_CONFIG", "load_config", "save_config", "cfg_get", "get_config_path", "get_hermes_home"]

DEFAULT_CONFIG: dict = {}
_MISSING = object()


def load_config() -> dict:
    """The user's config as a dict (a copy: changing it changes nothing on disk)."""
    from kernel.config import ConfigError, load_config as kernel_load

    try:
        return copy.deepcopy(kernel_load().data)
    except ConfigError:
        return {}


def save_config(config: dict) -> None:
    """Write a whole config dict back (atomically, like the kernel does)."""
    from kernel.config import Config

    if not isinstance(config, dict):
        raise TypeError(f"save_config expects a dict, got {type(config).__name__}")
    Config(copy.deepcopy(config), path=Path(get_config_path())).save()


def cfg_get(config: Any, *keys: str, default: Any = None) -> Any:
    """``cfg_get(cfg, "a", "b")`` or ``cfg_get(cfg, "a.b")``: a nested value or ``default``."""
    parts = [p for key in keys for p in str(key).split(".")]
    node = config
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node
