"""hermes-agent's ``plugin.yaml`` (:func:`parse_manifest`) and its manifest v2: ``requires_plugins`` orders
the loading and names what is missing, ``config_schema`` becomes config
declarations (so ``hermes config`` shows and checks the plugin's settings).

Unlike hermes-agent, which loads a plugin whose dependency is missing and
warns, the plugin is not loaded and says what to install or enable: a plugin
that needs another one would otherwise fail later, in the middle of a turn.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

# hermes-compat's logger (plugins.hermes_compat.state.log), without importing the
# runtime state: listing reads manifests and nothing else of this package
log = logging.getLogger("hermes.compat")


@dataclass
class PluginManifest:
    """``plugin.yaml`` (optional, advisory) or what an entry point tells us."""

    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    requires_env: list = field(default_factory=list)
    provides_tools: list = field(default_factory=list)
    provides_hooks: list = field(default_factory=list)
    kind: str = "standalone"
    source: str = ""
    path: str = ""
    key: str = ""
    manifest_version: int = 1
    requires_plugins: list = field(default_factory=list)  # [{"id": ..., "version_range": ...}] (v2)
    config_schema: dict = field(default_factory=dict)  # key -> {type, default, description, required} (v2)


def parse_manifest(path: Path, default_name: str, key: str, source: str) -> PluginManifest:
    """Read ``plugin.yaml``/``plugin.yml`` if present; keys vary a lot between
    plugins, so anything odd is ignored rather than fatal."""
    data: Any = {}
    for fname in ("plugin.yaml", "plugin.yml"):
        if (path / fname).is_file():
            try:
                import yaml

                data = yaml.safe_load((path / fname).read_text(encoding="utf-8")) or {}
            except Exception as exc:  # a broken manifest is advisory metadata lost, not an error
                log.warning("%s: unreadable manifest (%s); using defaults", path / fname, exc)
                data = {}
            break
    if not isinstance(data, dict):
        data = {}

    def text(k):
        v = data.get(k)
        return "" if v is None else str(v)

    def items(k):
        v = data.get(k)
        return list(v) if isinstance(v, (list, tuple)) else []

    name = text("name").strip()
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        name = default_name  # a plugin's name is a key and a folder name, never a path
    try:
        version = int(data.get("manifest_version", 1))
    except (TypeError, ValueError):
        version = 1
    return PluginManifest(
        name=name, version=text("version"), description=text("description"), author=text("author"),
        requires_env=items("requires_env"), provides_tools=items("provides_tools"),
        provides_hooks=items("provides_hooks"), kind=text("kind") or "standalone", source=source,
        path=str(path), key=key or name, manifest_version=version,
        requires_plugins=requirements(data.get("requires_plugins"), key or name),
        config_schema=config_schema(data.get("config_schema"), key or name),
    )


# config_schema types, as hermes-agent 0.22 spells them -> ours
SCHEMA_TYPES = {"str": str, "string": str, "secret": str, "int": int, "integer": int, "float": float,
                "number": float, "bool": bool, "boolean": bool, "list": list, "array": list, "dict": dict,
                "object": dict}


def requirements(raw: Any, plugin: str) -> list:
    """``[{"id", "version_range"}]`` from ``requires_plugins`` (a plain id is shorthand)."""
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, str) and item.strip():
            out.append({"id": item.strip(), "version_range": None})
        elif isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"].strip():
            out.append({"id": item["id"].strip(), "version_range": item.get("version_range")})
        else:
            log.warning("hermes plugin %s: requires_plugins entry %r is not a plugin id; ignored", plugin, item)
    return out


def config_schema(raw: Any, plugin: str) -> dict:
    out = {}
    for key, spec in (raw.items() if isinstance(raw, dict) else []):
        if not isinstance(spec, dict):
            log.warning("hermes plugin %s: config_schema entry %r is not a mapping; ignored", plugin, key)
            continue
        out[str(key)] = dict(spec)
    return out


def dependency_order(candidates: list, manifests: dict) -> list:
    """``candidates`` with every plugin after those it requires (ties keep
    discovery order); a cycle is warned about and leaves the order as found."""
    import graphlib

    names = {c.name for c in candidates}
    by_manifest_name = {m.name: n for n, m in manifests.items() if m is not None}
    graph = {c.name: {_resolve(d["id"], names, by_manifest_name) for d in requires(manifests, c.name)} - {None}
             for c in candidates}
    try:
        order = list(graphlib.TopologicalSorter({n: deps - {n} for n, deps in graph.items()}).static_order())
    except graphlib.CycleError as exc:
        log.warning("hermes plugins: a requires_plugins cycle (%s); loading in discovery order",
                    " -> ".join(map(str, exc.args[1] if len(exc.args) > 1 else [])))
        return candidates
    rank = {name: i for i, name in enumerate(order)}
    return sorted(candidates, key=lambda c: rank.get(c.name, len(rank)))


def missing_dependency(cand: Any, siblings: list, manifests: dict) -> Optional[str]:
    """Why ``cand`` cannot load (a plugin it requires is not enabled or not
    installed), or None. Called when it is about to load: the others are resolved."""
    by_name = {c.name: c for c in siblings}
    by_manifest_name = {m.name: n for n, m in manifests.items() if m is not None}
    for dep in requires(manifests, cand.name):
        name = _resolve(dep["id"], set(by_name), by_manifest_name)
        if name is None:
            return f"requires the plugin '{dep['id']}', which is not installed"
        if by_name[name].status != "enabled":
            return f"requires the plugin '{name}', which is {by_name[name].status}: run `hermes plugins enable {name}`"
        wrong = _outside(dep.get("version_range"), by_name[name].version, cand.name, name)
        if wrong:
            return wrong
    return None


def _outside(version_range: Any, version: str, plugin: str, dependency: str) -> Optional[str]:
    """Why ``version`` of ``dependency`` is outside the range ``plugin`` asks
    for (a PEP 440 specifier such as ``>=1.2,<2``), or None. hermes-agent
    treats the range as advisory; here a dependency that is there but of the
    wrong version is as much an error as one that is missing. A range or a
    version that cannot be read is warned about and not enforced."""
    if not version_range:
        return None
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        wanted = SpecifierSet(str(version_range))
    except InvalidSpecifier:
        log.warning("hermes plugin %s: requires_plugins version_range %r of '%s' is not a version specifier "
                    "(such as '>=1.2,<2'); not checked", plugin, version_range, dependency)
        return None
    try:
        found = Version(str(version or ""))
    except InvalidVersion:
        log.warning("hermes plugin %s: needs '%s' %s, whose version %r cannot be read; not checked",
                    plugin, dependency, wanted, version)
        return None
    if wanted.contains(found, prereleases=True):
        return None
    return f"requires the plugin '{dependency}' {wanted}, and {found} is installed"


def declare_schemas(declare, records: list) -> None:
    """Each loaded plugin's config_schema as our declarations of
    ``plugins.entries.<id>.settings.<key>``."""
    for record in records:
        manifest = record.manifest
        schema = getattr(manifest, "config_schema", None) or {}
        for key, spec in schema.items():
            kind = SCHEMA_TYPES.get(str(spec.get("type") or "").lower())
            if kind is None:
                continue  # no type, or one we do not know: nothing to check
            plugin_id = manifest.key or manifest.name
            declare(f"plugins.entries.{plugin_id}.settings.{key}", kind, spec.get("default"),
                    str(spec.get("description") or f"a setting of the hermes plugin {plugin_id}"))


def requires(manifests: dict, name: str) -> list:
    manifest = manifests.get(name)
    return list(getattr(manifest, "requires_plugins", None) or [])


def _resolve(dep: str, names: set, by_manifest_name: dict) -> Optional[str]:
    return dep if dep in names else by_manifest_name.get(dep)
