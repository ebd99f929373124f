"""Find hermes-agent plugins without importing them.

Sources, in hermes-agent's precedence (a later source wins on a name clash):
user directory plugins ``$HERMES_HOME/plugins/<name>/`` (and one category
level, ``<category>/<name>/``), project plugins ``./.hermes/plugins/`` when
``HERMES_ENABLE_PROJECT_PLUGINS`` is set, then the entry-point groups.
Every candidate is opt-in (``plugins.enabled``), as in hermes-agent, with two
exceptions that hermes-agent also loads without ``plugins.enabled``: a memory
provider named by ``memory.provider``, and model-provider folders
(``$HERMES_HOME/plugins/model-providers/<name>/`` or ``kind: model-provider``).
"""

from __future__ import annotations

import importlib
import itertools
import os
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from plugins.hermes_compat.manifests import PluginManifest, log, parse_manifest

SOURCE = "hermes-compat"
GROUPS = ("hermes_agent.plugins", "hermes_agent.memory_providers", "hermes_agent.model_providers",
          "hermes.memory_provider")
TRUE_WORDS = ("1", "true", "yes", "on")  # what a yes-or-no variable or setting of hermes-agent's reads as yes
# what config.yaml itself holds of hermes-agent's extensions, each loaded as a plugin (a found plugin of the name wins)
SHELL_HOOKS, CUSTOM_PROVIDERS = "shell-hooks", "custom-providers"
FROM_CONFIG = {SHELL_HOOKS: (("hooks",), "plugins.hermes_compat.shell_hooks"),
               CUSTOM_PROVIDERS: (("providers", "custom_providers"), "plugins.hermes_compat.custom_providers")}


def _is_plugin_dir(path: Path) -> bool:
    return (path / "__init__.py").is_file() or (path / "plugin.yaml").is_file() or (path / "plugin.yml").is_file()


def scan_directory(root: Path, source: str) -> Iterator[tuple]:
    """``(path, key, manifest)`` for every plugin folder under ``root`` (depth 2)."""
    try:
        entries = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return
    for path in entries:
        if path.name.startswith((".", "_")):
            continue
        if _is_plugin_dir(path):
            manifest = parse_manifest(path, path.name, "", source)
            yield path, manifest.key, manifest
            continue
        try:
            children = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
        except OSError:
            continue
        for child in children:
            if _is_plugin_dir(child):
                key = f"{path.name}/{child.name}"
                yield child, key, parse_manifest(child, key, key, source)


# hermes-agent's data folder named in a plugin's code ("~/.hermes", Path.home() / ".hermes"):
# it reads its files there, not in hermes' data folder
_AGENT_HOME = re.compile(r"""expanduser\(\s*f?["']~/\.hermes\b|home\(\)\s*/\s*["']\.hermes["']"""
                         r"""|expanduser\(\s*["']~["']\s*\)\s*,\s*["']\.hermes["']"""
                         r"""|Path\(\s*["']~/\.hermes\b[^"']*["']\s*\)\s*\.expanduser""")
AGENT_HOME_NOTE = ("[reads ~/.hermes itself, hermes-agent's data folder: HERMES_HOME=~/.hermes makes it hermes' "
                   "too]")


def reads_agent_home(files: Iterable[Path], most: int = 200) -> bool:
    """Whether a plugin's Python files name ``~/.hermes`` (read from the first 256 KB of at most ``most``)."""
    for path in itertools.islice((f for f in files if f.suffix == ".py"), most):
        try:
            with open(path, "rb") as f:
                if _AGENT_HOME.search(f.read(262144).decode("utf-8", "replace")):
                    return True
        except OSError:
            continue
    return False


def _package_files(cand: Any) -> list:
    """The files of an entry point's distribution in the package its value names (none: its finder did not say)."""
    if not cand.meta:
        return []
    from importlib.metadata import PathDistribution

    dist, top = PathDistribution(Path(cand.meta)), cand.target.partition(":")[0].partition(".")[0]
    return [Path(dist.locate_file(f)) for f in dist.files or () if f.parts and f.parts[0] in (top, top + ".py")]


def candidates(config: Any) -> list:
    from hermes.host.paths import data_dir
    from hermes.host.plugins import Candidate, entry_points

    chosen_memory = str(config.get("memory.provider") or "") if config is not None else ""
    found: dict = {}
    manifests: dict = {}  # candidate name -> PluginManifest (requires_plugins, config_schema)

    def add(cand: Candidate) -> None:
        if cand.name in found:
            log.info("hermes plugin %s: %s replaces %s", cand.name, cand.target, found[cand.name].target)
        cand.default_enabled = cand.default_enabled or (bool(chosen_memory) and cand.name == chosen_memory)
        found[cand.name] = cand

    roots = [(data_dir() / "plugins", "user")]
    if os.environ.get("HERMES_ENABLE_PROJECT_PLUGINS", "").strip().lower() in TRUE_WORDS:
        roots.append((Path.cwd() / ".hermes" / "plugins", "project"))
    for root, source in roots:
        for path, key, manifest in scan_directory(root, source):
            model_provider = key.startswith("model-providers/") or manifest.kind == "model-provider"
            cand = Candidate(name=key, source=SOURCE, target=str(path), version=manifest.version,
                             default_enabled=model_provider,
                             description=manifest.description or f"{source} plugin folder")
            if reads_agent_home(path.rglob("*.py")):
                cand.description += " " + AGENT_HOME_NOTE
            cand.load = (lambda c=cand, p=path, m=manifest: _load(c, "dir", p, m, config))
            manifests[key] = manifest
            add(cand)
    for group in GROUPS:
        for cand in entry_points(group):
            name, value, version = cand.name, cand.target, cand.version
            manifest = PluginManifest(name=name, version=version, source="entrypoint", path=value, key=name)
            cand.source, cand.default_enabled = SOURCE, False
            if reads_agent_home(_package_files(cand)):
                cand.description = f"{cand.summary()} {AGENT_HOME_NOTE}".strip()
            cand.load = (lambda c=cand, v=value, m=manifest: _load(c, "entrypoint", v, m, config))
            add(cand)
    found_all = _with_dependencies(list(found.values()), manifests)
    for name, (keys, module) in FROM_CONFIG.items():  # last: a Python plugin's block wins a tie, as in hermes-agent
        if config is not None and name not in found and any(config.get(k) for k in keys):
            found_all.append(importlib.import_module(module).candidate(config, Candidate))
    return found_all


def _load(cand: Any, kind: str, where: Any, manifest: Any, config: Any) -> Any:
    """Load one candidate. The loader (and the runtime it imports) is imported
    here, when a plugin loads: a listing reads manifests and nothing more."""
    from plugins.hermes_compat import loader

    if kind == "dir":
        where = (where, loader.slug_of(cand.name))
    return loader.load(cand, kind, where, manifest, config)


def _with_dependencies(found: list, manifests: dict) -> list:
    """In dependency order, each load first checking that what it requires is enabled."""
    from plugins.hermes_compat import manifests as v2

    if not any(getattr(m, "requires_plugins", None) for m in manifests.values()):
        return found
    ordered = v2.dependency_order(found, manifests)
    for cand in ordered:
        if v2.requires(manifests, cand.name):
            cand.load = _checked(cand, cand.load, ordered, manifests)
    return ordered


def _checked(cand: Any, load, siblings: list, manifests: dict):
    def load_if_complete():
        from plugins.hermes_compat import manifests as v2
        from plugins.hermes_compat.bridge import HermesPluginAdapter
        from plugins.hermes_compat.state import PluginRecord

        why = v2.missing_dependency(cand, siblings, manifests)
        if why is None:
            return load()
        cand.status, cand.error = "error", why
        log.warning("hermes plugin %s: %s; not loaded", cand.name, why)
        return HermesPluginAdapter(PluginRecord(name=cand.name, source="dir", manifest=manifests.get(cand.name)))

    return load_if_complete
