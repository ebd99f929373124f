"""The PostgreSQL session store: the SQLite store's contract (:class:`plugins.sessions.store.SessionStore`)
on a server that processes on many hosts share.

Tables ``hermes_sessions`` and ``hermes_messages`` (prefixed: the database may hold other things), made and
migrated by the store itself under an advisory lock, so that the first processes to start at once do not
race. Search is PostgreSQL's full-text search (a generated ``tsvector`` with a GIN index). One writer per
session is a session-level advisory lock, held on a connection of its own until the session is released
or the process ends (the server drops a dead client's locks). Every write is one transaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from contextlib import contextmanager
from typing import Iterable, Optional

from plugins.sessions.base import (SESSION_FIELDS, Store, StoreError, UnknownSession, check_id, clean_title,
                                   imported_fields, stored_start, usage_adds)
from plugins.sessions.codec import decode_message, encode_message
from plugins.sessions.locks import busy
from plugins.sessions_postgres import shown

SCHEMA_LOCK = 0x6865726D6573  # "hermes": the advisory lock the schema is made under

# Never edit a released migration: add one.
MIGRATIONS: list = [
    (1, [
        """CREATE TABLE hermes_sessions (
            id text PRIMARY KEY, parent_session_id text, start_reason text, model text, provider text,
            platform text, provider_config text, title text,
            started_at double precision NOT NULL, updated_at double precision NOT NULL,
            ended_at double precision, end_reason text, message_count integer NOT NULL DEFAULT 0,
            input_tokens bigint NOT NULL DEFAULT 0, output_tokens bigint NOT NULL DEFAULT 0,
            cache_read_tokens bigint NOT NULL DEFAULT 0, cache_write_tokens bigint NOT NULL DEFAULT 0,
            reasoning_tokens bigint NOT NULL DEFAULT 0, api_call_count bigint NOT NULL DEFAULT 0)""",
        "CREATE INDEX hermes_sessions_updated ON hermes_sessions (updated_at)",
        "CREATE INDEX hermes_sessions_parent ON hermes_sessions (parent_session_id)",
        """CREATE TABLE hermes_messages (
            id bigserial PRIMARY KEY,
            session_id text NOT NULL REFERENCES hermes_sessions (id) ON DELETE CASCADE,
            seq integer NOT NULL, role text NOT NULL, content text, content_json text, tool_calls text,
            tool_call_id text, reasoning text, extra text, created_at double precision NOT NULL,
            search tsvector GENERATED ALWAYS AS (to_tsvector('simple', coalesce(content, ''))) STORED,
            UNIQUE (session_id, seq))""",
        "CREATE INDEX hermes_messages_search ON hermes_messages USING gin (search)",
    ]),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]

_CONTINUED_IN = ("(SELECT c.id FROM hermes_sessions c WHERE c.parent_session_id = s.id AND c.start_reason IN"
                 " ('compression', 'undo') AND c.started_at >= s.updated_at ORDER BY c.started_at DESC, c.id DESC"
                 " LIMIT 1) AS continued_in")
_PREVIEW = ("(SELECT substr(m.content, 1, 120) FROM hermes_messages m WHERE m.session_id = s.id AND m.role = 'user'"
            " ORDER BY m.seq LIMIT 1) AS preview")
_COLUMNS = "session_id, seq, role, content, content_json, tool_calls, tool_call_id, reasoning, extra, created_at"


def _lock_key(session_id: str) -> int:
    """A stable signed 64-bit advisory-lock key for a session id."""
    return int.from_bytes(hashlib.blake2b(session_id.encode(), digest_size=8).digest(), "big", signed=True)


class PostgresStore(Store):
    """Sessions and their messages in a PostgreSQL database (``sessions.database_url``)."""

    def __init__(self, url: str):
        self.url = url
        self.where = shown(url)
        self._conn = self._locks = None
        self._pid = 0  # the process the connections belong to
        self._lock = threading.RLock()
        self._claimed: set = set()

    # -- connections
    def _connect(self):
        try:
            import psycopg
            from psycopg.rows import dict_row
        except ImportError:
            raise StoreError("sessions.store is postgres, which needs psycopg: pip install "
                             "'hermes-kernel[postgres]'") from None
        name = f"hermes pid {os.getpid()} on {socket.gethostname()}"[:63]
        try:
            return psycopg.connect(self.url, autocommit=True, row_factory=dict_row, application_name=name,
                                   connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreError(f"cannot reach the session database {self.where}: {_first_line(exc)}") from None

    @contextmanager
    def _connection(self, write: bool = False):
        import psycopg

        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's connections are not ours to use
                self._conn = self._locks = None
                self._claimed = set()
                self._pid = os.getpid()
            try:
                if self._conn is None or self._conn.closed or self._conn.broken:
                    conn = self._connect()
                    try:
                        self._migrate(conn)
                    except BaseException:
                        conn.close()
                        raise
                    reconnected, self._conn = self._conn is not None, conn  # only once its schema is one we know
                    if reconnected:
                        self._relock()
                if write:
                    with self._conn.transaction():
                        yield self._conn
                else:
                    yield self._conn
            except psycopg.Error as exc:
                raise StoreError(f"the session database {self.where} failed: {_first_line(exc)}") from None

    def _relock(self) -> None:
        """The server dropped our connection (a restart, a failover): take this process's writer locks again.
        A session another process took meanwhile is lost to it, and writing it here stops, in one line."""
        import psycopg

        if not self._claimed:
            return
        try:
            self._locks.execute("SELECT 1")
            return  # its connection lived: the locks are held
        except psycopg.Error:
            self._locks = self._connect()
        lost = sorted(sid for sid in self._claimed if not self._locks.execute(
            "SELECT pg_try_advisory_lock(%s) AS got", (_lock_key(sid),)).fetchone()["got"])
        self._claimed -= set(lost)
        if lost:
            raise StoreError(f"the connection to {self.where} dropped and another process writes session "
                             f"{lost[0]} now; this one stops writing it")

    def _migrate(self, conn) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS hermes_schema (version integer NOT NULL)")
            row = conn.execute("SELECT max(version) AS v FROM hermes_schema").fetchone()
            version = row["v"] or 0
            if version > SCHEMA_VERSION:
                raise StoreError(f"the session database {self.where} was made by a newer hermes (schema "
                                 f"{version}; this one knows {SCHEMA_VERSION}): upgrade hermes")
            for number, statements in MIGRATIONS:
                if number > version:
                    for sql in statements:
                        conn.execute(sql)
                    conn.execute("INSERT INTO hermes_schema (version) VALUES (%s)", (number,))

    def close(self) -> None:
        with self._lock:
            if self._pid == os.getpid():
                for conn in (self._conn, self._locks):
                    if conn is not None:
                        conn.close()
            self._conn = self._locks = None
            self._claimed = set()

    # -- one writer per session
    def claim(self, session_id: str) -> Optional[str]:
        """None if this process now writes ``session_id`` (until :meth:`release` or its end), else why not."""
        key = _lock_key(check_id(session_id))
        with self._connection():  # the pid check; the lock lives on a connection of its own
            if session_id in self._claimed:
                return None
            if self._locks is None or self._locks.closed:
                self._locks = self._connect()
            if self._locks.execute("SELECT pg_try_advisory_lock(%s) AS got", (key,)).fetchone()["got"]:
                self._claimed.add(session_id)
                return None
            row = self._locks.execute(
                "SELECT a.application_name AS who FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                " WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = %s AND l.objid::bigint = %s"
                " AND l.objsubid = 1", ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF)).fetchone()
        who = (row or {}).get("who") or ""
        return busy(session_id, who[len("hermes "):] if who.startswith("hermes ") else who)

    def release(self, session_id: str) -> None:
        with self._lock:
            if session_id in self._claimed and self._locks is not None and not self._locks.closed:
                self._claimed.discard(session_id)
                self._locks.execute("SELECT pg_advisory_unlock(%s)", (_lock_key(session_id),))

    # -- sessions
    def ensure_session(self, session_id: str, *, model: str = "", provider: str = "", platform: str = "",
                       parent_session_id: Optional[str] = None, reason: str = "",
                       provider_config: Optional[dict] = None) -> bool:
        """As :meth:`plugins.sessions.store.SessionStore.ensure_session`."""
        session_id = check_id(session_id)
        now = time.time()
        started = json.dumps(provider_config, sort_keys=True) if provider_config else None
        values = (model or None, provider or None, platform or None, parent_session_id or None, reason or None, started)
        with self._connection(write=True) as conn:
            created = conn.execute(
                "INSERT INTO hermes_sessions (id, model, provider, platform, parent_session_id, start_reason,"
                " provider_config, started_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO NOTHING", (session_id, *values, now, now)).rowcount == 1
            if not created:
                conn.execute(
                    "UPDATE hermes_sessions SET model = COALESCE(model, %s), provider = COALESCE(provider, %s),"
                    " platform = COALESCE(platform, %s), parent_session_id = COALESCE(parent_session_id, %s),"
                    " start_reason = COALESCE(start_reason, %s), provider_config = COALESCE(provider_config, %s)"
                    " WHERE id = %s", (*values, session_id))
        return created

    def provider_config(self, session_id: str) -> dict:
        with self._connection() as conn:
            row = conn.execute("SELECT provider_config FROM hermes_sessions WHERE id = %s", (session_id,)).fetchone()
        return stored_start(row["provider_config"] if row else None)

    def end_session(self, session_id: str, reason: str = "", usage: Optional[dict] = None) -> None:
        session_id = check_id(session_id)
        adds = usage_adds(usage)
        sets = "".join(f", {c} = {c} + %s" for c in adds)
        now = time.time()
        with self._connection(write=True) as conn:
            conn.execute("INSERT INTO hermes_sessions (id, started_at, updated_at) VALUES (%s, %s, %s)"
                         " ON CONFLICT (id) DO NOTHING", (session_id, now, now))
            conn.execute(f"UPDATE hermes_sessions SET ended_at = %s, end_reason = %s{sets} WHERE id = %s",
                         (now, reason or None, *adds.values(), session_id))

    def set_title(self, session_id: str, title: str) -> None:
        title = clean_title(title)
        with self._connection(write=True) as conn:
            if conn.execute("UPDATE hermes_sessions SET title = %s WHERE id = %s", (title, session_id)).rowcount == 0:
                raise UnknownSession(f"no session with id {session_id!r}")

    def get_session(self, session_id: str) -> Optional[dict]:
        with self._connection() as conn:
            return conn.execute(f"SELECT {', '.join(SESSION_FIELDS)}, {_CONTINUED_IN} FROM hermes_sessions s"
                                " WHERE id = %s", (session_id,)).fetchone()

    def matching_ids(self, prefix: str) -> list:
        prefix = str(prefix).strip()
        if not prefix:
            return []
        with self._connection() as conn:
            if conn.execute("SELECT 1 FROM hermes_sessions WHERE id = %s", (prefix,)).fetchone():
                return [prefix]
            rows = conn.execute("SELECT id FROM hermes_sessions WHERE left(id, %s) = %s ORDER BY id LIMIT 3",
                                (len(prefix), prefix)).fetchall()
        return [r["id"] for r in rows]

    def list_sessions(self, limit: int = 20, offset: int = 0, platform: Optional[str] = None,
                      include_children: bool = True) -> list:
        where, params = [], []
        if platform:
            where.append("s.platform = %s")
            params.append(platform)
        if not include_children:
            where.append("(s.parent_session_id IS NULL OR s.start_reason IN ('compression', 'undo'))")
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        with self._connection() as conn:
            return conn.execute(
                f"SELECT {', '.join('s.' + f for f in SESSION_FIELDS)}, {_CONTINUED_IN}, {_PREVIEW}"
                f" FROM hermes_sessions s {clause} ORDER BY s.updated_at DESC, s.id DESC LIMIT %s OFFSET %s",
                (*params, max(0, int(limit)), max(0, int(offset)))).fetchall()

    def delete(self, session_id: str) -> bool:
        with self._connection(write=True) as conn:
            return conn.execute("DELETE FROM hermes_sessions WHERE id = %s", (session_id,)).rowcount > 0

    # -- messages
    def append(self, session_id: str, messages: Iterable[dict]) -> int:
        """As :meth:`plugins.sessions.store.SessionStore.append`: one transaction; the session's row is
        locked first, so two appends to one session never take the same ``seq``."""
        session_id = check_id(session_id)
        if isinstance(messages, dict):
            raise ValueError("append() takes a list of messages, got one dict")
        rows = [encode_message(m, i) for i, m in enumerate(messages)]  # a bad message writes nothing
        if not rows:
            return 0
        now = time.time()
        with self._connection(write=True) as conn:
            conn.execute("INSERT INTO hermes_sessions (id, started_at, updated_at) VALUES (%s, %s, %s)"
                         " ON CONFLICT (id) DO NOTHING", (session_id, now, now))
            conn.execute("UPDATE hermes_sessions SET message_count = message_count + %s, updated_at = %s"
                         " WHERE id = %s", (len(rows), now, session_id))
            last = conn.execute("SELECT COALESCE(MAX(seq), -1) AS last FROM hermes_messages WHERE session_id = %s",
                                (session_id,)).fetchone()["last"]
            with conn.cursor() as cur:
                cur.executemany(f"INSERT INTO hermes_messages ({_COLUMNS}) VALUES ({', '.join(['%s'] * 10)})",
                                [(session_id, last + 1 + i, *row, now) for i, row in enumerate(rows)])
        return len(rows)

    def import_session(self, meta: dict, rows: list, known: Optional[int] = None) -> bool:
        """As :meth:`plugins.sessions.store.SessionStore.import_session`: one transaction; False (and nothing
        written) when a session of that id is here already, unless ``known`` says how many of ``rows`` it holds."""
        session_id = check_id(meta.get("id"))
        now = time.time()
        fields = imported_fields(meta, rows, now)
        with self._connection(write=True) as conn:
            if known is None:
                marks = ", ".join(["%s"] * len(fields))
                if conn.execute(f"INSERT INTO hermes_sessions ({', '.join(fields)}) VALUES ({marks}) ON CONFLICT (id)"
                                " DO NOTHING", tuple(fields.values())).rowcount == 0:
                    return False
            else:
                changed = {key: value for key, value in fields.items() if key not in ("id", "title")}
                conn.execute(f"UPDATE hermes_sessions SET {', '.join(f'{key} = %s' for key in changed)} WHERE id = %s",
                             (*changed.values(), session_id))
            with conn.cursor() as cur:
                cur.executemany(f"INSERT INTO hermes_messages ({_COLUMNS}) VALUES ({', '.join(['%s'] * 10)})",
                                [(session_id, r["seq"], r["role"], r["content"], r["content_json"], r["tool_calls"],
                                  r["tool_call_id"], r["reasoning"], r["extra"], r["created_at"] or now)
                                 for r in rows[known or 0:]])
        return True

    def load(self, session_id: str) -> Optional[list]:
        with self._connection() as conn:
            if not conn.execute("SELECT 1 FROM hermes_sessions WHERE id = %s", (session_id,)).fetchone():
                return None
            rows = conn.execute("SELECT role, content, content_json, tool_calls, tool_call_id, reasoning, extra"
                                " FROM hermes_messages WHERE session_id = %s ORDER BY seq", (session_id,)).fetchall()
        return [decode_message(r) for r in rows]

    def message_count(self, session_id: Optional[str] = None) -> int:
        with self._connection() as conn:
            if session_id is None:
                return conn.execute("SELECT count(*) AS n FROM hermes_messages").fetchone()["n"]
            return conn.execute("SELECT count(*) AS n FROM hermes_messages WHERE session_id = %s",
                                (session_id,)).fetchone()["n"]

    def search(self, query: str, limit: int = 10, *, session_id: Optional[str] = None,
               exclude_session: Optional[str] = None, role: Optional[str] = None) -> list:
        """Messages with every word of ``query`` (plain text, taken literally), best match first."""
        if not str(query).split():
            raise ValueError("the search query is empty")
        where, params = ["m.search @@ q"], []
        for clause, value in (("m.session_id = %s", session_id), ("m.session_id <> %s", exclude_session),
                              ("m.role = %s", role)):
            if value:
                where.append(clause)
                params.append(value)
        with self._connection() as conn:
            return conn.execute(
                "SELECT m.id AS message_id, m.session_id, m.seq, m.role, m.created_at,"
                " ts_headline('simple', coalesce(m.content, ''), q, 'StartSel=[, StopSel=], MaxWords=16, MinWords=4,"
                " MaxFragments=2, FragmentDelimiter=\" ... \"') AS snippet, s.title, s.model, s.platform, s.started_at"
                " FROM plainto_tsquery('simple', %s) q, hermes_messages m JOIN hermes_sessions s ON s.id = m.session_id"
                f" WHERE {' AND '.join(where)} ORDER BY ts_rank(m.search, q) DESC, m.id LIMIT %s",
                (str(query), *params, max(1, min(int(limit), 200)))).fetchall()

    # -- maintenance
    def check(self) -> list:
        """What is inconsistent (a session's message count that is not its messages'); [] when sound."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT s.id, s.message_count, count(m.id) AS n FROM hermes_sessions s LEFT JOIN hermes_messages m"
                " ON m.session_id = s.id GROUP BY s.id HAVING s.message_count <> count(m.id) ORDER BY s.id").fetchall()
        return [f"session {r['id']} counts {r['message_count']} messages but has {r['n']}" for r in rows]

    def repair(self) -> str:
        """Set every session's message count from its messages; what was done, in a few words."""
        with self._connection(write=True) as conn:
            fixed = conn.execute(
                "UPDATE hermes_sessions s SET message_count = c.n FROM (SELECT s2.id, count(m.id) AS n FROM"
                " hermes_sessions s2 LEFT JOIN hermes_messages m ON m.session_id = s2.id GROUP BY s2.id) c"
                " WHERE c.id = s.id AND s.message_count <> c.n").rowcount
        return f"recounted the messages of {fixed} session(s)"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
