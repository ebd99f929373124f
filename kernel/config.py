"""Configuration: where hermes keeps its files, and ``config.yaml``.

``$HERMES_HOME`` (if set) holds everything: ``config.yaml`` and the data
(sessions, memories). Otherwise platformdirs' user config folder holds
``config.yaml`` and the user data folder holds the data.

Key names follow hermes-agent where it has them. The kernel checks the types
of the keys it knows (``KNOWN_KEYS``); a wrong type or invalid YAML is one
:class:`ConfigError` naming the file, the key and what was expected. Plugins
read their own keys with :meth:`Config.get` and check them themselves.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from kernel.files import atomic_write

_INT, _NUM, _STR, _BOOL, _LIST, _DICT = "an integer", "a number", "a string", "true or false", "a list", "a mapping"

# dotted key -> (kind, default)
KNOWN_KEYS: dict = {
    "model": (_STR, ""),
    "provider": (_STR, ""),
    "base_url": (_STR, ""),
    "api_mode": (_STR, ""),
    "api_key_env": (_STR, ""),
    "fallback_providers": (_LIST, []),
    "toolsets": (_LIST, None),
    "agent.max_turns": (_INT, 90),
    "agent.api_max_retries": (_INT, 3),
    "agent.api_timeout": (_NUM, 600),
    "agent.stream_idle_timeout": (_NUM, 60),
    "agent.system_prompt": (_STR, ""),
    "agent.stream": (_BOOL, True),
    "agent.max_tokens": (_INT, None),
    "agent.disabled_tools": (_LIST, []),
    "agent.retry_base_delay": (_NUM, 1),
    "agent.retry_max_delay": (_NUM, 30),
    "agent.fallback_cooldown": (_NUM, 60),
    "agent.fallback_cooldown_max": (_NUM, 600),
    "provider_options": (_DICT, {}),
    "delegation.max_iterations": (_INT, 50),
    "delegation.max_concurrent_children": (_INT, 3),
    "delegation.max_spawn_depth": (_INT, 1),
    "compression.enabled": (_BOOL, True),
    "compression.threshold": (_NUM, 0.5),
    "compression.protect_first_n": (_INT, 3),
    "compression.protect_last_n": (_INT, 20),
    "context.engine": (_STR, "compressor"),
    "memory.provider": (_STR, ""),
    "memory.memory_enabled": (_BOOL, True),
    "memory.user_profile_enabled": (_BOOL, True),
    "memory.memory_char_limit": (_INT, 2200),
    "memory.user_char_limit": (_INT, 1375),
    "memory.prefetch_timeout": (_NUM, 8),
    "model_context_length": (_INT, None),
    "plugins.enabled": (_LIST, None),
    "plugins.disabled": (_LIST, []),
    "plugins.entries": (_DICT, {}),
    "plugins.hook_timeout": (_NUM, 30),
    "tools.prefer": (_DICT, {}),
    "tools.env_passthrough": (_LIST, []),
    "approvals.mode": (_STR, "manual"),
    "command_allowlist": (_LIST, []),
}


class ConfigError(Exception):
    """A config problem, already phrased for the user (one line)."""


def hermes_home() -> Optional[Path]:
    home = os.environ.get("HERMES_HOME")
    return Path(home).expanduser() if home else None


def config_dir() -> Path:
    home = hermes_home()
    if home:
        return home
    import platformdirs

    return Path(platformdirs.user_config_dir("hermes"))


def data_dir() -> Path:
    home = hermes_home()
    if home:
        return home
    import platformdirs

    return Path(platformdirs.user_data_dir("hermes"))


def _kind_ok(kind: str, value: Any) -> bool:
    if value is None:
        return True  # an empty key means "use the default"
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == _STR:
        return isinstance(value, str)
    if kind == _BOOL:
        return isinstance(value, bool)
    if kind == _LIST:
        return isinstance(value, list)
    if kind == _DICT:
        return isinstance(value, dict)
    return True


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{text} ({type(value).__name__})"


_MISSING = object()


def _lookup(data: dict, dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


class Config:
    """The loaded configuration. Read with ``get("agent.max_turns")``."""

    def __init__(
        self,
        data: Optional[dict] = None,
        path: Optional[Path] = None,
        overrides: Optional[dict] = None,
        defaults: Optional[dict] = None,
    ):
        self.path = path
        self.data = data if data is not None else {}
        self.overrides = dict(overrides or {})  # dotted keys that win over the file (a distro's blocks)
        self.defaults = defaults or {}  # nested keys the file may override (a distro's defaults)
        _normalize_model_block(self.defaults)
        _normalize_model_block(self.data)
        _normalize_yaml_words(self.data)
        self.validate()

    # -- reading
    def get(self, dotted: str, default: Any = _MISSING) -> Any:
        """The value of a dotted key: override > file > distro default > known default > ``default``."""
        if dotted in self.overrides:
            return self.overrides[dotted]
        for layer in (self.data, self.defaults):
            value = _lookup(layer, dotted)
            if value is not _MISSING and value is not None:
                return value
        if default is not _MISSING:
            return default
        known = KNOWN_KEYS.get(dotted)
        return known[1] if known else None

    def section(self, name: str) -> dict:
        value = self.get(name, {})
        return value if isinstance(value, dict) else {}

    @property
    def data_dir(self) -> Path:
        return data_dir()

    @property
    def home(self) -> Path:
        return config_dir()

    def where(self) -> str:
        return str(self.path) if self.path else "config"

    def validate(self) -> None:
        for dotted, (kind, _default) in KNOWN_KEYS.items():
            for source, value in (
                ("file", _lookup(self.data, dotted)),
                ("distro", _lookup(self.defaults, dotted)),
                ("override", self.overrides.get(dotted, _MISSING)),
            ):
                if value is _MISSING:
                    continue
                if not _kind_ok(kind, value):
                    where = self.where() if source == "file" else f"{source} settings"
                    raise ConfigError(f"{where}: {dotted}: expected {kind}, got {_describe(value)}")
        for i, entry in enumerate(self.get("fallback_providers") or []):
            if not isinstance(entry, dict):
                raise ConfigError(f"{self.where()}: fallback_providers[{i}]: expected a mapping, got {_describe(entry)}")
        for key in ("plugins.enabled", "plugins.disabled", "toolsets", "command_allowlist"):
            for item in self.get(key) or []:
                if not isinstance(item, str):
                    raise ConfigError(f"{self.where()}: {key}: expected a list of strings, got {_describe(item)}")

    # -- writing (``hermes plugins enable/disable``)
    def set_value(self, dotted: str, value: Any) -> None:
        set_nested(self.data, dotted.split("."), value)

    def save(self) -> Path:
        """Write ``config.yaml`` atomically (a crash leaves the old file whole)."""
        import yaml

        path = self.path or (config_dir() / "config.yaml")
        atomic_write(path, yaml.safe_dump(self.data, sort_keys=False, allow_unicode=True))
        self.path = path
        return path


def set_nested(data: dict, parts: list, value: Any) -> None:
    """Set ``data[parts[0]][parts[1]]... = value``, creating mappings on the way."""
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


def _normalize_yaml_words(data: dict) -> None:
    """YAML 1.1 reads ``off`` as false: ``approvals: {mode: off}`` means "off"."""
    approvals = data.get("approvals")
    if isinstance(approvals, dict) and isinstance(approvals.get("mode"), bool):
        approvals["mode"] = "manual" if approvals["mode"] else "off"


def _normalize_model_block(data: dict) -> None:
    """hermes-agent also accepts ``model: {default|model, provider, base_url, api_mode}``."""
    block = data.get("model")
    if isinstance(block, dict):
        data["model"] = str(block.get("default") or block.get("model") or "")
        for key in ("provider", "base_url", "api_mode", "api_key_env"):
            if block.get(key) and not data.get(key):
                data[key] = block[key]


def load_config(path: Optional[Path] = None, overrides: Optional[dict] = None, defaults: Optional[dict] = None) -> Config:
    """Load ``config.yaml`` (a missing file is an empty config)."""
    path = Path(path) if path else config_dir() / "config.yaml"
    data: Any = {}
    if path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read: {exc}") from None
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ConfigError(f"{path}: invalid YAML{where}: {problem}") from None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of keys at the top level, got {_describe(data)}")
    return Config(data, path=path, overrides=overrides, defaults=defaults)
