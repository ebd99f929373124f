"""What the command line prints again without work, in the data folder.

``plugin-commands.txt``: the plugins' commands, for ``hermes --help`` without loading them. ``output-*.txt``: what
``hermes --help`` and ``plugins list [--json]`` printed last, behind the key of what it depended on, for
:mod:`hermes.cli.entry` to print again without importing click (this module imports only ``os`` and ``sys`` at the top).
The listing itself is the commands plugin's (:mod:`plugins.commands.listing`)."""

from __future__ import annotations

import os
import sys

from hermes.host import loadstate
from hermes.host.loadstate import state_file

COMMANDS_CACHE = "plugin-commands.txt"


def listing_stamp() -> list:
    """What a listing depends on, in a few ``stat`` calls: the folders of ``sys.path`` (an install changes one's time),
    the data folder's ``plugins`` and each ``plugin.yaml`` in it, ``config.yaml``, the distro file, the selecting
    variables, the third-party plugin files last imported."""
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


def save_command_cache(group, builtin: set) -> None:
    """Remember the plugin commands of the click group behind :func:`listing_stamp`,
    written only when that or they changed (the remembered help is keyed by this file)."""
    text = "".join(f"{n}\t{' '.join((group.commands[n].get_short_help_str(60) or '').split())}\n"
                   for n in sorted(group.commands) if n not in builtin and not group.commands[n].hidden)
    loadstate.write_text(state_file(COMMANDS_CACHE), "\v".join(listing_stamp()) + "\n" + text)


def cached_commands():
    """The plugin commands of the last load while nothing they depend on changed, else a default install's as the
    commands plugin ships them (``None``: load to learn them): a ``name<TAB>help`` line each, read without json."""
    from plugins.commands.first_run import first_run

    try:
        key, _, text = state_file(COMMANDS_CACHE).read_text(encoding="utf-8").partition("\n")
    except (OSError, UnicodeDecodeError):
        return first_run("commands")
    if key != "\v".join(listing_stamp()):
        return first_run("commands")
    return dict(line.split("\t", 1) for line in text.splitlines() if "\t" in line)


def help_key(prog: str, width: int) -> str:
    """What the top-level help depends on: the kernel's version, the modules that define its commands (an edit in a
    checkout), the plugins' commands, the program's name and the width, and :func:`listing_stamp`."""
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
