"""What the command line remembers between runs, in the data folder.

``plugin-state.json``: what the last plugin load found (status, errors,
hooks) keyed by a fingerprint of what was installed and selected, so
``hermes plugins list`` stays import-free until that changes, and the
failures of plugin code in earlier runs. ``plugin-commands.json``: the
plugins' commands, for ``hermes --help`` without loading them.
"""

from __future__ import annotations

import json

import click

COMMANDS_CACHE = "plugin-commands.json"
LOAD_STATE = "plugin-state.json"


def state_file(name: str):
    from kernel.config import data_dir

    return data_dir() / name


_state_read: dict = {}  # path -> the state file as this process last read or wrote it


def read_state() -> dict:
    path = state_file(LOAD_STATE)
    if path not in _state_read:
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            state = {}
        _state_read[path] = state if isinstance(state, dict) and isinstance(state.get("plugins"), dict) else {}
    return _state_read[path]


def write_state(state: dict) -> None:
    path = state_file(LOAD_STATE)
    _state_read[path] = state
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(state, indent=1), encoding="utf-8")
    except OSError:
        pass


def remember_load(host) -> None:
    """Cache what loading found (errors, hooks), keyed by what was installed and
    selected, so listing stays import-free until that changes."""
    state = read_state()
    changed = {row.split("|", 1)[0] for row in set(host.fingerprint) ^ set(state.get("fingerprint") or [])}
    for name in changed & set(state.get("failures") or {}):
        del state["failures"][name]  # reinstalled or reselected: its earlier failures say nothing now
    state["fingerprint"] = host.fingerprint
    state["plugins"] = {c.name: {"version": c.version, "error": c.error, "hooks": c.hooks} for c in host.records
                        if c.status in ("enabled", "error")}
    write_state(state)


def remember_failures(host) -> None:
    """What plugin code did wrong in this run (a hook that raised, exited or
    timed out), for ``plugins list`` and ``info`` to show afterwards."""
    if not host.hook_errors:
        return
    state = read_state() or {"plugins": {}}
    failures = state.setdefault("failures", {})
    for (plugin, hook), (count, text) in host.hook_errors.items():
        failures.setdefault(plugin, {})[hook] = text
    write_state(state)


def save_command_cache(group: click.Group, builtin: set) -> None:
    try:
        names = {n: (group.commands[n].get_short_help_str(60) or "") for n in group.commands if n not in builtin}
        path = state_file(COMMANDS_CACHE)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(names), encoding="utf-8")
    except OSError:
        pass


def cached_commands():
    """Plugin commands seen at the last plugin load (``None``: never loaded here)."""
    try:
        data = json.loads(state_file(COMMANDS_CACHE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
