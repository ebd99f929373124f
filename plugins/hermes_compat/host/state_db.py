"""``hermes_state``: SQLite helpers plugins borrow from hermes' session store.

Only the connection helpers are here. ``SessionDB`` (hermes' own session
database) is absent on purpose: the kernel's session store is a different
plugin, and a partial copy would break a plugin's ImportError fallback.
"""

from __future__ import annotations

import logging
import sqlite3

log = logging.getLogger("hermes.compat")
_warned: set = set()


def apply_wal_with_fallback(conn: sqlite3.Connection, *, db_label: str = "state.db") -> str:
    """Put ``conn`` in WAL mode; where the filesystem refuses (network mounts),
    fall back to DELETE mode and warn once per ``db_label``. Returns the mode."""
    row = conn.execute("PRAGMA journal_mode").fetchone()
    if row and str(row[0]).lower() == "wal":
        return "wal"
    try:
        row = conn.execute("PRAGMA journal_mode=WAL").fetchone()
        if row and str(row[0]).lower() == "wal":
            return "wal"
    except sqlite3.OperationalError as exc:
        if db_label not in _warned:
            _warned.add(db_label)
            log.warning("%s: WAL journal not supported here (%s); using DELETE mode", db_label, exc)
    conn.execute("PRAGMA journal_mode=DELETE")
    return "delete"


def is_malformed_db_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and ("malformed" in text or "not a database" in text)
