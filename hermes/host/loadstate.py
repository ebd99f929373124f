"""What the host remembers of its plugin loads, in the data folder: in ``plugin-state.json`` what the last
load found (status, errors, hooks) behind a fingerprint of what was installed and selected, the failures of
plugin code in earlier runs and (for the program) its last listing. A distro keeps its own (the program sets
:data:`distro`). Imports only ``os`` and ``sys``: the fast path reads it."""
from __future__ import annotations

import os
import sys

LOAD_STATE = "plugin-state.json"
SOURCES = "plugin-sources.txt"  # the files of the third-party plugins the last load imported
MAX_SOURCES = 500

distro: "str | None" = None  # the distro this process runs as: its state files are its own
_state_read: dict = {}  # path -> the state file as this process last read or wrote it
unsaved: list = []  # what this process added to the state and has not written yet (the entry points it read)


def state_file(name: str):
    """``name`` in the data folder, with a distro's suffix (it selects other plugins: its own load, outputs)."""
    from hermes.host.paths import data_dir

    suffix = "-" + "".join(c if c.isalnum() or c in "._-" else "_" for c in distro)[-100:] if distro else ""
    stem, dot, ext = name.rpartition(".")
    return data_dir() / f"{stem}{suffix}{dot}{ext}"


def read_state() -> dict:
    import json

    path = state_file(LOAD_STATE)
    if path not in _state_read:
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError):  # none yet (HERMES_HOME a file: said where it is written)
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
    write_text(path, json.dumps(state, indent=1))
    unsaved.clear()


def remember_load(host) -> None:
    """Record what loading found, keyed by what was installed and selected (unchanged: nothing written)."""
    state = read_state()
    found = {c.name: {"version": c.version, "error": c.error, "hooks": list(c.hooks), "description": c.description}
             for c in host.records if c.status in ("enabled", "error")}
    write_text(state_file(SOURCES), "".join(f"{path}\n" for path in _source_files(host.records)))
    sources = stamps(remembered_sources())
    if state.get("fingerprint") == list(host.fingerprint) and state.get("plugins") == found \
            and state.get("sources") == sources and not unsaved:
        return
    changed = {row.split("|", 1)[0] for row in set(host.fingerprint) ^ set(state.get("fingerprint") or [])}
    for name in changed & set(state.get("failures") or {}):
        del state["failures"][name]  # reinstalled or reselected: its earlier failures say nothing now
    state.pop("listing", None)  # what loading found may change it
    state["fingerprint"] = list(host.fingerprint)
    state["plugins"], state["sources"] = found, sources
    write_state(state)


def _source_files(records) -> list:
    """The Python files of the third-party plugins that loaded or failed (an edit changes what loading finds)."""
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


def remembered_sources() -> list:
    try:
        return state_file(SOURCES).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def stamps(paths: list) -> list:
    from hermes.host.paths import stamp

    return [f"{path}|{'|'.join(map(str, stamp(path) or ('-',)))}" for path in paths]


def write_text(path, text: str) -> None:
    """Write a file of the data folder whole, if it changed; one that cannot be written is found again."""
    from hermes.host.files import atomic_write

    try:
        if not (path.is_file() and path.read_text(encoding="utf-8") == text):
            atomic_write(path, text)
    except (OSError, UnicodeDecodeError):
        pass


def failures() -> dict:
    """What plugin code did wrong in earlier runs: plugin -> {hook: why}."""
    return read_state().get("failures") or {}


def remember_failures(host) -> None:
    """What plugin code did wrong in this run, for ``plugins list`` and ``info`` to show afterwards."""
    if not host.failures.seen:
        return
    state = read_state() or {"plugins": {}}
    failures = state.setdefault("failures", {})
    for failure in host.failures.seen:
        failures.setdefault(failure.plugin, {})[failure.hook] = failure.error
    write_state(state)
