"""A command named after a profile (hermes-agent's wrapper scripts): ``~/.local/bin/coder`` runs ``hermes -p coder``,
so ``coder chat`` chats as that profile."""

from __future__ import annotations

import os
import sys
from pathlib import Path

MARK = "# made by `hermes profile alias`"  # only such a file is rewritten or removed


def folder() -> Path:
    return Path.home() / ".local" / "bin"


def aliases(profile: str) -> list:
    """The aliases that run ``profile``."""
    found = []
    for path in sorted(folder().glob("*")) if folder().is_dir() else []:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if MARK in text and f" -p {profile} " in text:
            found.append(path.name)
    return found


def make(alias: str, profile: str) -> "tuple[Path, str]":
    """Write the alias (rewriting one of ours); (its path, what is in the way: another command of that name)."""
    import shlex
    import shutil

    from hermes.host.files import atomic_write

    path = folder() / alias
    ours = path.is_file() and MARK in path.read_text(encoding="utf-8", errors="replace")
    other = shutil.which(alias)
    if path.exists() and not ours or other and not ours and Path(other) != path:
        return path, other or str(path)
    script = os.path.abspath(sys.argv[0])  # the console script this runs as, else the interpreter's module
    command = shlex.quote(script) if os.access(script, os.X_OK) and not script.endswith(".py") else \
        f"{shlex.quote(sys.executable)} -m hermes.cli"
    atomic_write(path, f'#!/bin/sh\n{MARK}\nexec {command} -p {profile} "$@"\n')
    path.chmod(0o755)
    return path, ""


def remove(alias: str) -> bool:
    path = folder() / alias
    try:
        if MARK in path.read_text(encoding="utf-8"):
            path.unlink()
            return True
    except (OSError, UnicodeDecodeError):
        pass
    return False


def on_path() -> bool:
    return str(folder()) in os.environ.get("PATH", "").split(os.pathsep)
