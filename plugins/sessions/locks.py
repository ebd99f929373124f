"""One writer per session for the SQLite store: an flock on ``<data dir>/locks/<id>.lock``, held by the
process writing the session until it ends or releases it (a killed process drops it)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Optional

_claims: dict = {}  # (locks folder, session id) -> the open lock file
_claims_lock = threading.Lock()


def claim_in(folder: Path, session_id: str) -> Optional[str]:
    """None if this process now holds the writer lock of ``session_id`` in ``folder``, else why not."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: no cross-process guard
        return None
    key = (folder, session_id)
    with _claims_lock:
        if key in _claims:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        fh = os.fdopen(os.open(_path(folder, session_id), os.O_RDWR | os.O_CREAT, 0o644), "r+", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid = _owner(fh)
            fh.close()
            return busy(session_id, f"pid {pid}" if pid else "")
        fh.seek(0)
        fh.write(str(os.getpid()))  # over the old pid, then cut: a reader never sees it empty
        fh.truncate()
        fh.flush()
        _claims[key] = fh
    return None


def _path(folder: Path, session_id: str) -> Path:
    return folder / ("".join(c if c.isalnum() or c in "-_." else "_" for c in session_id) + ".lock")


def busy(session_id: str, owner: str) -> str:
    """The one line for a session another process writes (``owner``: who, if known)."""
    return (f"session {session_id} is being written by another hermes process{f' ({owner})' if owner else ''}; "
            "resume it when that one has finished")


def _owner(fh) -> str:
    """The pid in a lock file (the owner writes it just after locking: wait a moment for it)."""
    for _ in range(20):
        fh.seek(0)
        pid = fh.read().strip()
        if pid.isdigit():
            return pid
        time.sleep(0.01)
    return ""


def release_in(folder: Path, session_id: str, forget: bool = False) -> None:
    """Drop this process's claim; ``forget``: the session is deleted, and so is its lock file (while locked)."""
    with _claims_lock:
        fh = _claims.pop((folder, session_id), None)
    if fh is not None:
        if forget:
            _path(folder, session_id).unlink(missing_ok=True)
        fh.close()  # closing the file drops the lock
