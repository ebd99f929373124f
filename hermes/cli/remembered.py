"""What the command line prints again without work, in the data folder.

``plugin-commands.txt``: the plugins' commands, for ``hermes --help`` without
loading them. The last listing, in the host's load state. ``output-*.txt``:
what ``hermes --help`` and ``plugins list [--json]`` printed last, behind the
key of what it depended on, for :mod:`hermes.cli.entry` to print again without
importing click (this module imports only ``os`` and ``sys`` at the top).
"""

from __future__ import annotations

import os
import sys

from hermes.host import loadstate
from hermes.host.loadstate import state_file

COMMANDS_CACHE = "plugin-commands.txt"


def listing_stamp() -> list:
    """What a listing depends on, in a few ``stat`` calls: the folders of
    ``sys.path`` (an install changes one's time), the data folder's
    ``plugins`` and each ``plugin.yaml`` in it, ``config.yaml``, the distro
    file, the selecting variables, the third-party plugin files last imported."""
    from hermes.host.paths import config_dir, data_dir
    from kernel import __version__

    folder = data_dir() / "plugins"
    distro = loadstate.distro
    paths = [*sys.path, str(folder), str(config_dir() / "config.yaml"), *([distro] if distro else [])]
    try:
        paths += sorted(os.path.join(e.path, "plugin.yaml") for e in os.scandir(folder) if e.is_dir())
    except OSError:
        pass
    rows = [__version__, *(f"{var}={os.environ.get(var, '')}" for var in ("HERMES_PLUGINS", "HERMES_SAFE_MODE"))]
    return rows + loadstate.stamps([*filter(None, paths), *loadstate.remembered_sources()])


def cached_listing(stamp: list) -> "list | None":
    """The plugin records (dicts) of the last listing, if nothing it depends on changed."""
    listing = loadstate.read_state().get("listing") or {}
    return listing.get("records") if listing.get("stamp") == stamp else None


def remember_listing(stamp: list, records: list) -> None:
    state = loadstate.read_state() or {"plugins": {}}
    state["listing"] = {"stamp": stamp, "records": records}
    loadstate.write_state(state)


def listing(app) -> list:
    """The plugin records, from metadata and the state of the last load; when what is installed or
    selected changed since (a fresh ``pip install``), the plugins load once to find out."""
    from hermes.host.plugins import PluginHost

    remembered = loadstate.read_state()
    if remembered.get("sources") != loadstate.stamps(loadstate.remembered_sources()):
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
    """What ``plugins list`` shows, as dicts: the last listing when none of
    the files it depends on changed (no metadata read, no plugin imported)."""
    records = cached_listing(listing_stamp())
    if records is None:
        records = [r.as_dict() for r in listing(app)]
        remember_listing(listing_stamp(), records)  # after a load, which may have noted the plugins' files
    return records


def save_command_cache(group, builtin: set) -> None:
    """Remember the plugin commands of the click group behind :func:`listing_stamp`,
    written only when that or they changed (the remembered help is keyed by this file)."""
    text = "".join(f"{n}\t{' '.join((group.commands[n].get_short_help_str(60) or '').split())}\n"
                   for n in sorted(group.commands) if n not in builtin and not group.commands[n].hidden)
    loadstate.write_text(state_file(COMMANDS_CACHE), "\v".join(listing_stamp()) + "\n" + text)


def cached_commands():
    """The plugin commands of the last load while nothing they depend on changed (``None``: load to
    learn them): a ``name<TAB>help`` line each, read by ``--help`` without importing json."""
    try:
        key, _, text = state_file(COMMANDS_CACHE).read_text(encoding="utf-8").partition("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if key != "\v".join(listing_stamp()):
        return None
    return dict(line.split("\t", 1) for line in text.splitlines() if "\t" in line)


def help_key(prog: str, width: int) -> str:
    """What the top-level help depends on: the kernel's version, the modules
    that define its commands (an edit in a checkout), the plugins' commands,
    the program's name and the width, and :func:`listing_stamp`."""
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

    return "\t".join([*listing_stamp(), f"{stamp(str(state_file(loadstate.LOAD_STATE)))}"])


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
    loadstate.write_text(state_file(f"output-{name}.txt"), f"{key}\n{text}")  # never a key with half an output
