"""The SQLite session store: sessions, their messages, a full-text index.

One file, ``state.db`` in the data folder, opened in WAL mode with a busy
timeout so that several hermes processes can write different sessions at once.
Every write is one short ``BEGIN IMMEDIATE`` transaction; appending messages
inserts only the new rows, so the cost of a step does not grow with the
history, and a process killed mid-turn loses at most the batch in flight.

Only message dicts and session metadata are stored, never configuration or
credentials.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Optional

from plugins.sessions import locks, schema
from plugins.sessions.base import (SESSION_FIELDS, Store, StoreError, UnknownSession, check_id, clean_title,
                                   imported_fields, stored_start, usage_adds)
from plugins.sessions.codec import decode_message, encode_message, fts_query

log = logging.getLogger(__name__)

DB_NAME = "state.db"
BESIDE_AGENTS = "hermes-state.db"  # ours, in a data folder shared with hermes-agent, whose state.db is its own
BUSY_TIMEOUT_S = 5.0
BUSY_MS = int(BUSY_TIMEOUT_S * 1000)
SQLITE_HEADER = b"SQLite format 3\x00"

_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


class _Stale(Exception):
    """What this process remembered of a session (its row, its next ``seq``) is out of date: another
    process wrote to it or deleted it since."""


class StoreCorrupt(StoreError):
    """The database file is not a SQLite database, or it is malformed."""

    def __init__(self, path: Path, detail: str):
        self.path = Path(path)
        self.detail = detail
        super().__init__(
            f"{self.path}: the session database is unreadable ({detail}). Nothing was changed. "
            f"Run `hermes sessions repair` to move it aside (it is kept as "
            f"{self.path.name}.corrupt-<time>) and start a fresh one."
        )


def _is_corruption(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


# the newest session that goes on from ``s`` after a compression or an undo, unless ``s`` was written to after
# it started (resumed): None when ``s`` is the current one of its conversation
_CONTINUED_IN = ("(SELECT c.id FROM sessions c WHERE c.parent_session_id = s.id AND c.start_reason IN ('compression',"
                 " 'undo') AND c.started_at >= s.updated_at ORDER BY c.started_at DESC, c.rowid DESC LIMIT 1)"
                 " AS continued_in")


class SessionStore(Store):
    """Sessions and their messages in ``<data_dir>/state.db``.

    The connection is opened on first use and shared by all threads behind a
    lock (the loop may call hooks from worker threads; every operation is
    short). Safe to use from several processes at once.
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._conn: Optional[sqlite3.Connection] = None
        self._pid = 0  # the process that opened _conn
        self._lock = threading.RLock()
        self.fts = False  # set on open: is the full-text index usable?
        self.journal_mode = ""
        self._busy_ms = BUSY_MS  # the connection's busy_timeout: a pragma only when it changes
        self._next_seq: dict = {}  # session id -> the seq of its next message, as this process last wrote it

    @classmethod
    def for_data_dir(cls, data_dir: Path | str) -> "SessionStore":
        return cls(Path(data_dir) / DB_NAME)

    # -- connection ------------------------------------------------------
    def _check_header(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(len(SQLITE_HEADER))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot read the session database: {exc}") from None
        if head and head != SQLITE_HEADER:
            raise StoreCorrupt(self.path, "not a SQLite database")

    def _open(self) -> sqlite3.Connection:
        self._check_header()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.path.parent}: cannot create the data folder: {exc}") from None
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so a writer
        # takes the lock up front (and waits on the busy timeout) instead of
        # failing on a read-to-write upgrade.
        conn = sqlite3.connect(
            str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            self._busy_ms = BUSY_MS
            if self.path.name == DB_NAME and self._version(conn) > schema.SCHEMA_VERSION and conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'state_meta'").fetchone():
                conn.close()  # hermes-agent's (HERMES_HOME=~/.hermes): never changed; ours beside it
                log.info("%s is hermes-agent's: the sessions here are kept in %s", self.path, BESIDE_AGENTS)
                self.path = self.path.with_name(BESIDE_AGENTS)
                return self._open()
            mode = _set_wal(conn)
            self.journal_mode = str(mode).lower()
            if self.journal_mode != "wal":
                log.warning("%s: WAL is not supported here; using journal_mode=%s", self.path, mode)
            # In WAL mode NORMAL still survives a killed process; it only
            # risks the last commits on power loss, and saves an fsync per step.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            self._migrate(conn)
            self.fts = self._ensure_fts(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if _is_corruption(exc):
                raise StoreCorrupt(self.path, str(exc)) from None
            raise StoreError(f"{self.path}: cannot open the session database: {exc}") from None
        except BaseException:
            conn.close()
            raise
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        # Up to date (the usual case): no write lock is taken at all.
        if self._version(conn) == schema.SCHEMA_VERSION:
            return
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        for version, statements in schema.MIGRATIONS:
            with self._in_transaction(conn):
                # Re-read inside the transaction: another process may have
                # migrated between our check and our lock.
                current = self._version(conn)
                if current > schema.SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.path}: schema version {current} is newer than this hermes "
                        f"understands ({schema.SCHEMA_VERSION}); upgrade hermes"
                    )
                if current < version:
                    for sql in statements:
                        conn.execute(sql)
                    conn.execute("DELETE FROM schema_version")
                    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))

    @staticmethod
    def _version(conn: sqlite3.Connection) -> int:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").fetchone():
            return 0
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    def _ensure_fts(self, conn: sqlite3.Connection) -> bool:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
        if "fts_progress" not in names:  # a schema older than the index's (only a test opens one unmigrated)
            return False
        if not schema.fts5_available():
            if any(t in names for t in schema.FTS_TRIGGERS):
                # Triggers into an FTS5 table this SQLite cannot load would make every delete fail: drop them,
                # and with them the index's claim to be in step; it is made again the next time a build with
                # FTS5 opens the file.
                with self._in_transaction(conn):
                    for trigger in schema.FTS_TRIGGERS:
                        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
                    conn.execute("UPDATE fts_progress SET upto = -1")
            log.warning("%s: this Python's SQLite has no FTS5; session search is unavailable", self.path)
            return False
        if "messages_fts" in names and all(t in names for t in schema.FTS_TRIGGERS):
            return True
        with self._in_transaction(conn):
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
            if "messages_fts" not in names:
                conn.execute(schema.FTS_TABLE)
            for trigger, sql in schema.FTS_TRIGGERS.items():
                if trigger not in names:
                    conn.execute(sql)
            if conn.execute("SELECT upto FROM fts_progress").fetchone()[0] < 0:
                # emptied, for the next search to index every message
                conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('delete-all')")
                conn.execute("UPDATE fts_progress SET upto = 0")
        return True

    @staticmethod
    @contextmanager
    def _in_transaction(conn: sqlite3.Connection):
        """One write transaction, its lock taken up front (BEGIN IMMEDIATE) in turn with other writers."""
        _taking_turns(conn, "BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _connection(self, busy_ms: int = BUSY_MS):
        """The shared connection, under the lock, waiting up to ``busy_ms`` for another process's lock;
        corruption becomes StoreCorrupt."""
        with self._lock:
            if self._conn is not None and self._pid != os.getpid():
                # A forked child must not use its parent's connection (SQLite
                # forbids it); abandon it without closing and open our own.
                self._conn = None
            if self._conn is None:
                self._conn = self._open()
                self._pid = os.getpid()
            try:
                self._busy(busy_ms)
                yield self._conn
            except sqlite3.DatabaseError as exc:
                if _is_corruption(exc):
                    raise StoreCorrupt(self.path, str(exc)) from None
                raise StoreError(f"{self.path}: {exc}") from None

    def _busy(self, busy_ms: int) -> None:
        if self._busy_ms != busy_ms:
            self._conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
            self._busy_ms = busy_ms

    @contextmanager
    def _write(self):
        """One short write transaction, taken up front (BEGIN IMMEDIATE). The writers take turns in
        _taking_turns, not in SQLite's busy handler; in WAL mode nothing else in the transaction waits for
        a lock, so the timeout stays 0 until a read needs it (two pragmas fewer per write)."""
        with self._connection(busy_ms=0) as conn, self._in_transaction(conn):
            if self.journal_mode != "wal":  # the commit waits for the readers
                self._busy(BUSY_MS)
            yield conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    @property
    def where(self) -> str:
        return str(self.path)

    def claim(self, session_id: str) -> Optional[str]:
        """None if this process now writes ``session_id`` (until :meth:`release` or its end), else why not."""
        return locks.claim_in(self.path.parent / "locks", session_id)

    def release(self, session_id: str) -> None:
        locks.release_in(self.path.parent / "locks", session_id)

    def __enter__(self) -> "SessionStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- sessions ----------------------------------------------------------
    def ensure_session(
        self,
        session_id: str,
        *,
        model: str = "",
        provider: str = "",
        platform: str = "",
        parent_session_id: Optional[str] = None,
        reason: str = "",
        provider_config: Optional[dict] = None,
    ) -> bool:
        """Create the session row if it does not exist (True if created).
        An existing session keeps its start data; an empty model/provider is
        filled in (a session created by ``append`` before its start hook).
        ``provider_config``: how it was started, for :meth:`provider_config` (no key in it)."""
        session_id = check_id(session_id)
        now = time.time()
        started = json.dumps(provider_config, sort_keys=True) if provider_config else None
        with self._write() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO sessions (id, parent_session_id, start_reason, model, provider, platform,"
                " provider_config, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, parent_session_id or None, reason or None, model or None, provider or None,
                 platform or None, started, now, now),
            )
            created = cur.rowcount == 1
            if not created:
                conn.execute(
                    "UPDATE sessions SET model = COALESCE(model, ?), provider = COALESCE(provider, ?),"
                    " platform = COALESCE(platform, ?), parent_session_id = COALESCE(parent_session_id, ?),"
                    " start_reason = COALESCE(start_reason, ?), provider_config = COALESCE(provider_config, ?)"
                    " WHERE id = ?",
                    (model or None, provider or None, platform or None, parent_session_id or None,
                     reason or None, started, session_id),
                )
        return created

    def provider_config(self, session_id: str) -> dict:
        """How the session was started (``model``, ``provider``, ``api_mode``, ``base_url``,
        ``api_key_env``, ``toolsets``), as :meth:`ensure_session` got it; ``{}`` when unknown (an older session)."""
        with self._connection() as conn:
            row = conn.execute("SELECT provider_config FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return stored_start(row[0] if row else None)

    def end_session(self, session_id: str, reason: str = "", usage: Optional[dict] = None) -> None:
        """Record the end of a turn: ``ended_at``, ``end_reason`` and add
        ``usage`` (the turn's token counts, normalized shape) to the totals."""
        session_id = check_id(session_id)
        adds = usage_adds(usage)
        sets = ", ".join(f"{c} = {c} + ?" for c in adds)
        now = time.time()
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO sessions (id, started_at, updated_at) VALUES (?, ?, ?)",
                (session_id, now, now),
            )
            conn.execute(
                f"UPDATE sessions SET ended_at = ?, end_reason = ?{', ' + sets if sets else ''} WHERE id = ?",
                (now, reason or None, *adds.values(), session_id),
            )

    def set_title(self, session_id: str, title: str) -> None:
        title = clean_title(title)
        with self._write() as conn:
            cur = conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))
            if cur.rowcount == 0:
                raise UnknownSession(f"no session with id {session_id!r}")

    def get_session(self, session_id: str) -> Optional[dict]:
        with self._connection() as conn:
            row = conn.execute(
                f"SELECT {', '.join(SESSION_FIELDS)}, {_CONTINUED_IN} FROM sessions s WHERE id = ?", (session_id,)
            ).fetchone()
        return dict(row) if row else None

    def matching_ids(self, prefix: str) -> list:
        """``[prefix]`` when it is an id, else (at most 3 of) the ids it starts."""
        prefix = str(prefix).strip()
        if not prefix:
            return []
        with self._connection() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (prefix,)).fetchone():
                return [prefix]
            escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = conn.execute(
                "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 3", (escaped + "%",)
            ).fetchall()
        return [r[0] for r in rows]

    def list_sessions(
        self,
        limit: int = 20,
        offset: int = 0,
        platform: Optional[str] = None,
        include_children: bool = True,
    ) -> list[dict]:
        """Sessions, most recently active first, each with a ``preview`` (the
        start of its first user message)."""
        where, params = [], []
        if platform:
            where.append("s.platform = ?")
            params.append(platform)
        if not include_children:
            where.append("(s.parent_session_id IS NULL OR s.start_reason IN ('compression', 'undo'))")
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        cols = ", ".join(f"s.{f}" for f in SESSION_FIELDS)
        sql = (
            f"SELECT {cols}, {_CONTINUED_IN}, (SELECT substr(m.content, 1, 120) FROM messages m WHERE"
            f" m.session_id = s.id AND m.role = 'user' ORDER BY m.seq LIMIT 1) AS preview FROM sessions s {clause}"
            f" ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ? OFFSET ?"
        )
        with self._connection() as conn:
            rows = conn.execute(sql, (*params, max(0, int(limit)), max(0, int(offset)))).fetchall()
        return [dict(r) for r in rows]

    def delete(self, session_id: str) -> bool:
        """Delete a session and its messages (True if it existed)."""
        self._next_seq.pop(session_id, None)
        with self._write() as conn:
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            existed = conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0
        locks.release_in(self.path.parent / "locks", session_id, forget=True)  # claimed to delete it: one file less
        return existed

    # -- messages ------------------------------------------------------------
    def append(self, session_id: str, messages: Iterable[dict]) -> int:
        """Append a batch of messages to a session (created if new), in one
        transaction: the new rows only, the history is never rewritten.
        Returns the number of messages written."""
        session_id = check_id(session_id)
        if isinstance(messages, dict):
            raise ValueError("append() takes a list of messages, got one dict")
        # Encode before taking the lock: a bad message writes nothing.
        rows = [encode_message(m, i) for i, m in enumerate(messages)]
        if not rows:
            return 0
        now = time.time()
        # The session's next seq as this process last wrote it spares two statements; when another process
        # wrote to the session or deleted it since, the insert conflicts and the transaction is made again.
        for remembered in (self._next_seq.pop(session_id, None), None):
            try:
                with self._write() as conn:
                    first = remembered
                    if first is None:
                        conn.execute("INSERT OR IGNORE INTO sessions (id, started_at, updated_at) VALUES (?, ?, ?)",
                                     (session_id, now, now))
                        first = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?",
                                             (session_id,)).fetchone()[0]
                    try:
                        conn.executemany(
                            "INSERT INTO messages (session_id, seq, role, content, content_json, tool_calls, "
                            "tool_call_id, reasoning, extra, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [(session_id, first + i, *row, now) for i, row in enumerate(rows)],
                        )
                    except sqlite3.IntegrityError:  # a seq taken, or no such session (foreign keys are on)
                        if remembered is None:
                            raise
                        raise _Stale() from None
                    conn.execute("UPDATE sessions SET message_count = message_count + ?, updated_at = ? WHERE id = ?",
                                 (len(rows), now, session_id))
            except _Stale:
                continue
            self._next_seq[session_id] = first + len(rows)
            return len(rows)

    def load(self, session_id: str) -> Optional[list[dict]]:
        """The messages of a session in order, or None for an unknown session."""
        with self._connection() as conn:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return None
            rows = conn.execute(
                "SELECT role, content, content_json, tool_calls, tool_call_id, reasoning, extra"
                " FROM messages WHERE session_id = ? ORDER BY seq",
                (session_id,),
            ).fetchall()
        return [decode_message(r) for r in rows]

    def message_count(self, session_id: Optional[str] = None) -> int:
        with self._connection() as conn:
            if session_id is None:
                return conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
            return conn.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,)).fetchone()[0]

    # -- search --------------------------------------------------------------
    def search(
        self,
        query: str,
        limit: int = 10,
        *,
        session_id: Optional[str] = None,
        exclude_session: Optional[str] = None,
        role: Optional[str] = None,
    ) -> list[dict]:
        """Messages matching every word of ``query`` (plain text; FTS syntax
        is taken literally), best match first."""
        match = fts_query(query)
        limit = max(1, min(int(limit), 200))
        with self._connection() as conn:
            if not self.fts:
                raise StoreError(
                    f"session search needs SQLite with FTS5; this Python's SQLite {sqlite3.sqlite_version} lacks it"
                )
            behind = conn.execute("SELECT (SELECT MAX(id) FROM messages) > (SELECT upto FROM fts_progress)").fetchone()
        if behind[0]:
            try:
                with self._write() as conn:
                    for sql in schema.CATCH_UP:
                        conn.execute(sql)
            except StoreCorrupt:
                raise
            except StoreError as exc:  # held by another writer past the timeout, or a file we may only read
                log.warning("%s: the newest messages are left out of this search: %s", self.path, exc)
        with self._connection() as conn:
            where, params = ["messages_fts MATCH ?"], [match]
            if session_id:
                where.append("m.session_id = ?")
                params.append(session_id)
            if exclude_session:
                where.append("m.session_id != ?")
                params.append(exclude_session)
            if role:
                where.append("m.role = ?")
                params.append(role)
            sql = (
                "SELECT m.id AS message_id, m.session_id, m.seq, m.role, m.created_at,"
                " snippet(messages_fts, 0, '[', ']', ' ... ', 16) AS snippet,"
                " s.title, s.model, s.platform, s.started_at"
                " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
                " JOIN sessions s ON s.id = m.session_id"
                f" WHERE {' AND '.join(where)} ORDER BY messages_fts.rank LIMIT ?"
            )
            rows = conn.execute(sql, (*params, limit)).fetchall()
        return [dict(r) for r in rows]

    # -- maintenance -----------------------------------------------------------
    def import_session(self, meta: dict, rows: list[dict], known: Optional[int] = None) -> bool:
        """Add a session recovered from another file: its metadata and its
        stored message rows (encoded columns, ``seq`` and ``created_at``
        kept). One transaction; an existing session of that id is left alone (False). With ``known`` (how many of
        ``rows`` a session imported before holds: it went on where it came from) the others are added and the
        session's row takes ``meta``'s times and totals (its title stays: it may be renamed here)."""
        session_id = check_id(meta.get("id"))
        now = time.time()
        fields = imported_fields(meta, rows, now)
        with self._write() as conn:
            if known is None:
                cur = conn.execute(f"INSERT OR IGNORE INTO sessions ({', '.join(fields)}) VALUES "
                                   f"({', '.join('?' for _ in fields)})", tuple(fields.values()))
                if cur.rowcount == 0:
                    return False
            else:
                changed = {key: value for key, value in fields.items() if key not in ("id", "title")}
                conn.execute(f"UPDATE sessions SET {', '.join(f'{key} = ?' for key in changed)} WHERE id = ?",
                             (*changed.values(), session_id))
            conn.executemany(
                "INSERT INTO messages (session_id, seq, role, content, content_json, tool_calls, tool_call_id,"
                " reasoning, extra, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(session_id, r["seq"], r["role"], r["content"], r["content_json"], r["tool_calls"],
                  r["tool_call_id"], r["reasoning"], r["extra"], r["created_at"] or now) for r in rows[known or 0:]],
            )
        return True

    def compact(self) -> tuple:
        """Give deleted sessions' space back to the file system (VACUUM, then the WAL emptied): the file's
        size (with its WAL) before and after. A StoreError while another process reads or writes it."""
        size = lambda: sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())  # noqa: E731
        before = size()
        with self._connection() as conn:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return before, size()

    def check(self) -> list[str]:
        """Run SQLite's integrity check; [] when the file is sound."""
        try:
            with self._connection() as conn:
                rows = conn.execute("PRAGMA integrity_check").fetchall()
        except StoreCorrupt as exc:
            return [exc.detail]
        problems = [str(r[0]) for r in rows]
        return [] if problems == ["ok"] else problems


def _set_wal(conn: sqlite3.Connection) -> str:
    """Switch to WAL. Two processes creating the file at once can make this pragma fail with "database is
    locked" without SQLite calling the busy handler: :func:`_taking_turns` retries it."""
    return _taking_turns(conn, "PRAGMA journal_mode = WAL").fetchone()[0]


def _taking_turns(conn: sqlite3.Connection, sql: str) -> sqlite3.Cursor:
    """``sql`` again while another process holds the lock, for up to ``BUSY_TIMEOUT_S``, a tenth of a
    millisecond after the first try: SQLite's own busy handler sleeps a millisecond and more between tries,
    which costs writers that take turns (batch workers, server processes) most of their time."""
    deadline, delay = time.monotonic() + BUSY_TIMEOUT_S, 0.0001
    while True:
        try:
            return conn.execute(sql)
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 1.5, 0.005)

