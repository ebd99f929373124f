"""hermes-agent's manifest v2 (``plugin.yaml``): ``requires_plugins`` orders
the loading and names what is missing, ``config_schema`` becomes config
declarations (so ``hermes config`` shows and checks the plugin's settings).

Unlike hermes-agent, which loads a plugin whose dependency is missing and
warns, the plugin is not loaded and says what to install or enable: a plugin
that needs another one would otherwise fail later, in the middle of a turn.
"""

from __future__ import annotations

from typing import Any, Optional

from plugins.hermes_compat.state import log

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
    return None


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
