"""What the command line remembers between runs, in the data folder.

``plugin-state.json``: what the last plugin load found (status, errors,
hooks) keyed by a fingerprint of what was installed and selected, so
``hermes plugins list`` stays import-free until that changes; the failures
of plugin code in earlier runs; and the last listing, keyed by a stamp of the
files it depends on, so an unchanged listing is printed without reading any
package metadata. ``plugin-commands.txt``: the plugins' commands, for
``hermes --help`` without loading them. ``output-*.txt``: what ``hermes
--help`` and ``hermes plugins list [--json]`` printed last, behind the key
of what it depended on, for :mod:`hermes.cli.entry` to print again without
importing click. A distro has its own of each (:func:`use_distro`).

Imported before click by ``hermes --help``: it imports nothing beyond ``os``
and ``sys`` at the top.
"""

from __future__ import annotations

import os
import sys

COMMANDS_CACHE = "plugin-commands.txt"
LOAD_STATE = "plugin-state.json"
SOURCES = "plugin-sources.txt"  # the files of the third-party plugins the last load imported
MAX_SOURCES = 500


_distro: list = [None]  # the distro this process runs as: it has its own load state, commands and outputs


def use_distro(distro: "str | None") -> None:
    _distro[0] = distro or None


def variant() -> str:
    """The suffix of the files kept per distro (a distro selects other plugins,
    so it has other commands, another listing, another load): ``""`` for plain hermes."""
    if not _distro[0]:
        return ""
    return "-" + "".join(c if c.isalnum() or c in "._-" else "_" for c in _distro[0])[-100:]


def state_file(name: str):
    """``name`` in the data folder, with this process's distro variant before its extension."""
    from hermes.host.paths import data_dir

    stem, dot, suffix = name.rpartition(".")
    return data_dir() / f"{stem}{variant()}{dot}{suffix}"


_state_read: dict = {}  # path -> the state file as this process last read or wrote it


def read_state() -> dict:
    import json

    path = state_file(LOAD_STATE)
    if path not in _state_read:
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            state = {}
        except (OSError, ValueError):
            state = None
        if state is None or not _whole(state):  # rebuilt by the next load; nothing in it is a user's
            sys.stderr.write(f"hermes: note: {path} is damaged; it is ignored and made again\n")
            state = {}
        _state_read[path] = state
    return _state_read[path]


def _whole(state) -> bool:
    """Does the state file hold what this module writes (a hand edit or a crash may leave anything)?"""
    def table(value) -> bool:
        return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())

    if not isinstance(state, dict):
        return False
    plugins, listing = state.get("plugins", {}), state.get("listing", {})
    return table(plugins) and table(state.get("failures", {})) \
        and all(isinstance(state.get(k, []), list) for k in ("fingerprint", "sources")) \
        and all(isinstance(was.get("hooks", []), list) and all(isinstance(was.get(k) or "", str) for k in
                ("version", "error", "description")) for was in plugins.values()) \
        and isinstance(listing, dict) and isinstance(listing.get("records", []), list) \
        and all(isinstance(r, dict) for r in listing.get("records", []))


def write_state(state: dict) -> None:
    import json

    path = state_file(LOAD_STATE)
    _state_read[path] = state
    _write_text(path, json.dumps(state, indent=1))


def remember_load(host) -> None:
    """Cache what loading found (errors, hooks), keyed by what was installed and
    selected, so listing stays import-free until that changes. A load that
    found what the last one did writes nothing: the remembered listing stays."""
    state = read_state()
    found = {c.name: {"version": c.version, "error": c.error, "hooks": list(c.hooks), "description": c.description}
             for c in host.records if c.status in ("enabled", "error")}
    _write_text(state_file(SOURCES), "".join(f"{path}\n" for path in _source_files(host.records)))
    sources = _stamps(_remembered_sources())
    if state.get("fingerprint") == list(host.fingerprint) and state.get("plugins") == found \
            and state.get("sources") == sources:
        return
    changed = {row.split("|", 1)[0] for row in set(host.fingerprint) ^ set(state.get("fingerprint") or [])}
    for name in changed & set(state.get("failures") or {}):
        del state["failures"][name]  # reinstalled or reselected: its earlier failures say nothing now
    state.pop("listing", None)  # what loading found may change it
    state["fingerprint"] = list(host.fingerprint)
    state["plugins"], state["sources"] = found, sources
    write_state(state)


def _source_files(records) -> list:
    """The Python files of the third-party plugins that loaded (or failed to):
    an edit in one changes what loading finds."""
    import importlib.util

    files: list = []
    for rec in records:
        if rec.source == "builtin" or rec.status not in ("enabled", "error") or not rec.target:
            continue
        folders = [rec.target] if os.path.isdir(rec.target) else []
        if not folders:
            try:
                spec = importlib.util.find_spec(rec.target.split(":")[0].split(".")[0])
            except (ImportError, ValueError):
                spec = None
            folders = list(spec.submodule_search_locations or []) if spec is not None else []
            if spec is not None and not folders and spec.origin:
                files.append(spec.origin)
        for folder in folders:
            for root, _, names in os.walk(folder):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".py")]
    return files[:MAX_SOURCES]


def _remembered_sources() -> list:
    try:
        return state_file(SOURCES).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _stamps(paths: list) -> list:
    from hermes.host.paths import stamp

    return [f"{path}|{'|'.join(map(str, stamp(path) or ('-',)))}" for path in paths]


def _write_text(path, text: str) -> None:
    """Write a file of the data folder whole or not at all (a reader never sees half of it), if it changed."""
    try:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f".{path.name}.{os.getpid()}")
        part.write_text(text, encoding="utf-8")
        os.replace(part, path)
    except (OSError, UnicodeDecodeError):
        pass


def listing_stamp() -> list:
    """What a listing depends on, found with a few ``stat`` calls: every folder
    on ``sys.path`` (an install or uninstall adds or removes a metadata folder
    there, which changes the folder's time), the data folder's ``plugins``
    (folder plugins) and each ``plugin.yaml`` in it, ``config.yaml`` (the
    selection), the distro file, the selecting variables, and the files of
    the third-party plugins the last load imported."""
    from hermes.host.paths import config_dir, data_dir
    from kernel import __version__

    folder = data_dir() / "plugins"
    distro = _distro[0]
    paths = [*sys.path, str(folder), str(config_dir() / "config.yaml"), *([distro] if distro else [])]
    try:
        paths += sorted(os.path.join(e.path, "plugin.yaml") for e in os.scandir(folder) if e.is_dir())
    except OSError:
        pass
    rows = [__version__, *(f"{var}={os.environ.get(var, '')}" for var in ("HERMES_PLUGINS", "HERMES_SAFE_MODE"))]
    return rows + _stamps([*filter(None, paths), *_remembered_sources()])


def cached_listing(stamp: list) -> "list | None":
    """The plugin records (dicts) of the last listing, if nothing it depends on changed."""
    listing = read_state().get("listing") or {}
    return listing.get("records") if listing.get("stamp") == stamp else None


def remember_listing(stamp: list, records: list) -> None:
    state = read_state() or {"plugins": {}}
    state["listing"] = {"stamp": stamp, "records": records}
    write_state(state)


def listing(app) -> list:
    """The plugin records, from metadata and the state remembered at the last
    load; when what is installed or selected changed since then (a fresh
    ``pip install``), the plugins load once to find out."""
    from hermes.host.plugins import PluginHost

    remembered = read_state()
    if remembered.get("sources") != _stamps(_remembered_sources()):
        return app.host.records  # a plugin's code changed since the last load: load to find out
    seen = remembered.get("plugins") or {}
    # of the built-ins only the plugin sources are imported (their candidates
    # are found by code); the others' descriptions were remembered
    sources = {name for name, was in seen.items() if "discover_plugins" in (was.get("hooks") or [])}
    listed = PluginHost.discover(app.config, distro=app.distro, import_third_party=False, builtins=sources)
    if remembered.get("fingerprint") != listed.fingerprint:
        return app.host.records
    for rec in listed.records:
        was = seen.get(rec.name) or {}
        if not rec.description and was.get("version") == rec.version:
            rec.description = was.get("description") or ""
        if rec.status == "enabled" and was.get("error") and was.get("version") == rec.version:
            rec.status, rec.error = "error", was["error"]
    return listed.records


def listed(app) -> list:
    """What ``plugins list`` shows, as dicts: printed from the last listing
    when none of the files it depends on changed (no package metadata read,
    no plugin imported), else found again and remembered."""
    records = cached_listing(listing_stamp())
    if records is None:
        records = [r.as_dict() for r in listing(app)]
        remember_listing(listing_stamp(), records)  # after a load, which may have noted the plugins' files
    return records


def failures() -> dict:
    """What plugin code did wrong in earlier runs: plugin -> {hook: why}."""
    return read_state().get("failures") or {}


def remember_failures(host) -> None:
    """What plugin code did wrong in this run (a hook that raised, exited or
    timed out), for ``plugins list`` and ``info`` to show afterwards."""
    if not host.failures.seen:
        return
    state = read_state() or {"plugins": {}}
    failures = state.setdefault("failures", {})
    for failure in host.failures.seen:
        failures.setdefault(failure.plugin, {})[failure.hook] = failure.error
    write_state(state)


def save_command_cache(group, builtin: set) -> None:
    """Remember the plugin commands of the click group, behind what they
    depend on (:func:`listing_stamp`). Written only when that or they changed:
    the remembered ``--help`` is keyed by this file's stamp."""
    text = "".join(f"{n}\t{' '.join((group.commands[n].get_short_help_str(60) or '').split())}\n"
                   for n in sorted(group.commands) if n not in builtin)
    _write_text(state_file(COMMANDS_CACHE), "\v".join(listing_stamp()) + "\n" + text)


def cached_commands():
    """Plugin commands seen at the last plugin load, while nothing they depend
    on changed (``None``: load the plugins to learn them). One ``name<TAB>help``
    line each: ``--help`` reads it without importing json."""
    try:
        key, _, text = state_file(COMMANDS_CACHE).read_text(encoding="utf-8").partition("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if key != "\v".join(listing_stamp()):
        return None
    return dict(line.split("\t", 1) for line in text.splitlines() if "\t" in line)


def help_key(prog: str, width: int) -> str:
    """What the top-level help depends on: the kernel's version and the
    modules that define its commands (an edit in a checkout), the plugins'
    commands (their cache file), the program's name and the width, and what
    :func:`listing_stamp` covers (an install, the selection, a distro's file)."""
    from hermes.host.essential import ESSENTIAL
    from hermes.host.paths import stamp
    from kernel import __version__

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = [os.path.join(root, "hermes", "cli", "app.py"), str(state_file(COMMANDS_CACHE))]
    for module in ESSENTIAL.values():  # the essential commands' help is in their packages
        where = os.path.join(root, *module.split(".")[:-1])
        files += [os.path.join(where, name) for name in sorted(os.listdir(where)) if name.endswith(".py")]
    rows = [__version__, prog, str(width), *(f"{stamp(f)}" for f in files)]
    return "|".join([*rows, *listing_stamp()])


def listing_key() -> str:
    """What a printed listing depends on: :func:`listing_stamp` and the load
    state (errors, descriptions, earlier failures)."""
    from hermes.host.paths import stamp

    return "\t".join([*listing_stamp(), f"{stamp(str(state_file(LOAD_STATE)))}"])


def remembered_output(name: str, key: str) -> "str | None":
    """What a command printed last time (``output-NAME.txt``), if its key is ``key``."""
    try:
        found, _, text = state_file(f"output-{name}.txt").read_text(encoding="utf-8").partition("\n")
    except (OSError, UnicodeDecodeError):
        return None
    return text if found == key else None


def remember_output(name: str, key: str, text: str) -> None:
    """Remember what a command printed, for :mod:`hermes.cli.entry` to print again
    while ``key`` (computed after the command wrote its state) stays the same."""
    _write_text(state_file(f"output-{name}.txt"), f"{key}\n{text}")  # never a key with half an output behind it
