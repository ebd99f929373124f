"""Where hermes keeps its files: ``$HERMES_HOME`` (if set) holds everything; otherwise platformdirs' user config
folder holds ``config.yaml`` and the user data folder the data. Read at start-up, so it imports nothing heavy."""

from __future__ import annotations

import os
from pathlib import Path


def hermes_home() -> "Path | None":
    home = os.environ.get("HERMES_HOME")
    return Path(home).expanduser() if home else None


def config_dir() -> Path:
    return hermes_home() or _user_dir("user_config_dir")


def data_dir() -> Path:
    return hermes_home() or _user_dir("user_data_dir")


def _user_dir(which: str) -> Path:
    import platformdirs

    return Path(getattr(platformdirs, which)("hermes"))


def stamp(path: str) -> "tuple | None":
    """``(mtime_ns, ctime_ns, size, inode)`` of a file or folder (None: not there), for the start-up
    caches to notice an install or an edit: the change time and the inode see a file replaced with its
    old time and size (``cp -p``, ``rsync -t``, ``tar x``)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino
