"""Distros: a named selection of plugins plus default config, from a YAML file (``hermes --distro FILE``) or a
package's ``hermes.distros`` entry point (``hermes --distro NAME``); the format is in ``docs/distros.md``. Blocks
(plugins and tools) cannot be undone by the user's config; the ``config`` block only supplies defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from hermes.host.essential import ESSENTIAL

GROUP = "hermes.distros"


class DistroError(Exception):
    """A distro that cannot be found or read; the message is for the user."""


@dataclass
class Distro:
    name: str
    description: str = ""
    only: Optional[set] = None
    enabled: set = field(default_factory=set)
    blocked: set = field(default_factory=set)
    blocked_tools: list = field(default_factory=list)
    config: dict = field(default_factory=dict)
    source: str = ""

    def apply_to(self, selection) -> None:
        """Narrow a plugin selection (hermes.host.plugins.Selection) to this distro, and name what it names."""
        selection.enabled |= self.enabled
        selection.disabled |= self.blocked
        selection.blocked.update(dict.fromkeys(self.blocked, f"blocked by distro '{self.name}'"))
        if self.only is not None:
            selection.only = self.only if selection.only is None else selection.only & self.only
            selection.only_label = f"distro '{self.name}'"
        selection.named[f"distro '{self.name}'"] = (self.only or set()) | self.enabled | self.blocked

    def config_overrides(self, config) -> dict:
        """For ``config.overrides``: ``tools.blocked`` joined to the tools the user's config disables (not instead)."""
        mine = config.get("agent.disabled_tools") or []  # a wrong type is config check's to say: a lenient get skips it
        return {"agent.disabled_tools": sorted({*self.blocked_tools, *mine})} if self.blocked_tools else {}


def _names(data: dict, key: str, where: str) -> Optional[set]:
    value = data.get(key)
    if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
        raise DistroError(f"{where}: {key}: expected a list of names")
    return None if value is None else set(value)


def _no_unknown(data: dict, allowed: set, where: str) -> None:
    """A misspelt key (``onl:``) would silently load more: an error, not a
    warning (unknown keys of the ``config`` block warn, as in config.yaml)."""
    from kernel.hints import did_you_mean

    if unknown := sorted(set(data) - allowed):
        hints = [k + did_you_mean(k, allowed, n=1) for k in unknown]
        raise DistroError(f"{where}: unknown key(s) {', '.join(hints)}")


def from_mapping(data: Any, where: str) -> Distro:
    if not isinstance(data, dict):
        raise DistroError(f"{where}: a distro is a mapping with at least a 'name'")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise DistroError(f"{where}: name: expected a non-empty string")
    _no_unknown(data, {"name", "description", "plugins", "tools", "config"}, where)
    plugins, tools, config = (data.get(key) or {} for key in ("plugins", "tools", "config"))
    for key, value in (("plugins", plugins), ("tools", tools), ("config", config)):
        if not isinstance(value, dict):
            raise DistroError(f"{where}: {key}: expected a mapping")
    _no_unknown(plugins, {"only", "enabled", "blocked"}, f"{where}: plugins")
    _no_unknown(tools, {"blocked"}, f"{where}: tools")
    blocked = _names(plugins, "blocked", f"{where}: plugins") or set()
    if essential := sorted(blocked & ESSENTIAL.keys()):
        raise DistroError(f"{where}: plugins: blocked: {', '.join(essential)} is essential and cannot be blocked "
                          "(it always loads; a distro's only: need not name it)")
    return Distro(name=name.strip(), description=str(data.get("description") or ""),
                  only=_names(plugins, "only", f"{where}: plugins"),
                  enabled=_names(plugins, "enabled", f"{where}: plugins") or set(),
                  blocked=blocked, blocked_tools=sorted(_names(tools, "blocked", f"{where}: tools") or ()),
                  config=config, source=where)


def load_distro(name_or_path: str) -> Distro:
    """A distro from a YAML file path, or from an installed package by name."""
    path = Path(name_or_path).expanduser()
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise DistroError(f"{path}: no such distro file")
        import yaml

        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:  # not UTF-8: one line too
            raise DistroError(f"{path}: cannot read distro: {str(exc).splitlines()[0]}") from None
        return from_mapping(data, str(path))
    from hermes.host.plugins import entry_points

    found = {ep.name: ep for ep in entry_points(GROUP)}
    if name_or_path not in found:
        known = ", ".join(sorted(found)) or "none installed"
        raise DistroError(f"no distro named '{name_or_path}' (installed: {known}); or give a YAML file path")
    ep = found[name_or_path]
    try:
        data = ep.load()
    except Exception as exc:
        raise DistroError(f"distro '{name_or_path}' from {ep.dist} failed to load: {type(exc).__name__}: {exc}") from None
    if callable(data):
        data = data()
    if isinstance(data, (str, Path)):
        return load_distro(str(data))
    return from_mapping(data, f"distro '{name_or_path}' ({ep.dist})")
