"""hermes-agent's sessions, read from its ``state.db`` for ``hermes sessions import``. The file is opened read-only and
never changed. Each session comes as our store's fields and message rows: the conversation's messages that are still
active (a rewind's are not), in the order hermes-agent wrote them, with their times. Its own bookkeeping rows (the
system prompt, ``session_meta``) stay behind: our agent builds its system prompt afresh."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from itertools import groupby
from pathlib import Path
from typing import Iterator, Optional

from plugins.sessions.base import StoreError
from plugins.sessions.codec import decode_message, encode_message

TABLES = {"sessions", "messages", "state_meta"}  # what tells hermes-agent's state.db from another one (ours too)
ROLES = ("user", "assistant", "tool")
JSON_CONTENT = "\x00json:"  # how hermes-agent marks a content that is a list of parts (an image and its text)
SESSION_COLUMNS = {  # ours -> hermes-agent's column of the same meaning
    "model": "model", "provider": "billing_provider", "platform": "source", "title": "title",
    "parent_session_id": "parent_session_id", "started_at": "started_at", "ended_at": "ended_at",
    "end_reason": "end_reason", "input_tokens": "input_tokens", "output_tokens": "output_tokens",
    "cache_read_tokens": "cache_read_tokens", "cache_write_tokens": "cache_write_tokens",
    "reasoning_tokens": "reasoning_tokens", "api_call_count": "api_call_count",
}


def is_agents(path: Path) -> bool:
    """Is ``path`` hermes-agent's state.db (its ``sessions``, ``messages`` and ``state_meta`` tables)?"""
    try:
        with closing(_open(path)) as conn:
            return TABLES <= tables(conn)
    except (StoreError, sqlite3.Error):
        return False


def find(data_dir: Path) -> Optional[Path]:
    """hermes-agent's state.db: the data folder's own when it is shared with hermes-agent, else ``~/.hermes``'s."""
    for folder in (Path(data_dir), Path.home() / ".hermes"):
        if (folder / "state.db").is_file() and is_agents(folder / "state.db"):
            return folder / "state.db"
    return None


def read(path: Path) -> Iterator[tuple[dict, list[dict]]]:
    """Each session of hermes-agent's ``path`` by its id (which starts with its time): (our session fields, our
    message rows). The messages are read in one pass, sorted by session: a query per session scans the whole table
    of a file without hermes-agent's index (3,000 sessions took a minute)."""
    with closing(_open(path)) as conn:
        if missing := TABLES - tables(conn):
            raise StoreError(f"{path}: not hermes-agent's state.db (no {', '.join(sorted(missing))} table)")
        have = _columns(conn, "sessions")
        picked = {ours: theirs for ours, theirs in SESSION_COLUMNS.items() if theirs in have}
        ended = {row[0] for row in conn.execute("SELECT id FROM sessions WHERE end_reason = 'compression'")} \
            if "end_reason" in have else set()
        kept = _columns(conn, "messages")
        active = " AND active = 1" if "active" in kept else ""  # rewound rows are 0
        wanted = ["session_id", "role", "content", "tool_calls", "tool_call_id"] + \
            [column for column in ("reasoning", "timestamp") if column in kept]
        sessions = conn.execute(f"SELECT id, {', '.join(picked.values())} FROM sessions WHERE id IS NOT NULL"
                                " ORDER BY id").fetchall()
        by_session = groupby(conn.execute(f"SELECT {', '.join(wanted)} FROM messages WHERE role IN {ROLES}{active}"
                                          " ORDER BY session_id, id"), key=lambda row: row["session_id"])
        group = next(by_session, None)
        for session in sessions:
            while group is not None and (group[0] is None or group[0] < session["id"]):  # of no session: left
                group = next(by_session, None)
            rows = []
            if group is not None and group[0] == session["id"]:
                rows = [_row(seq, message) for seq, message in enumerate(group[1])]
                group = next(by_session, None)
            meta = {"id": session["id"], **{ours: session[theirs] for ours, theirs in picked.items()}}
            if meta.get("parent_session_id") in ended:  # shown as the continuation of the session it compressed
                meta["start_reason"] = "compression"
            yield meta, rows


def import_into(store, source: Path) -> dict:
    """hermes-agent's sessions of ``source`` into ``store`` (``hermes sessions import``, ``hermes import``): the new
    ones, and what hermes-agent added to one imported before (unless it went on here); what was done, counted."""
    if not hasattr(store, "import_session"):
        raise StoreError(f"the session store {store.where} cannot import sessions")
    done = {"source": str(source), "imported": 0, "messages": 0, "went_on": 0, "already_here": 0}
    for meta, rows in read(source):
        if store.import_session(meta, rows):
            done["imported"], done["messages"] = done["imported"] + 1, done["messages"] + len(rows)
        elif (known := went_on(store, meta["id"], rows)) is not None:
            store.import_session(meta, rows, known=known)  # with their times, and the session's totals
            done["went_on"], done["messages"] = done["went_on"] + 1, done["messages"] + len(rows) - known
        else:
            done["already_here"] += 1
    return done


def went_on(store, session_id: str, rows: list) -> Optional[int]:
    """How many of ``rows`` (a session imported before, as hermes-agent holds it now) are here, when it added more
    since (``import_session(meta, rows, known=...)`` adds them); None when it has no more, or when the copy here went
    on another way (it is left as it is)."""
    if len(rows) <= store.message_count(session_id):
        return None
    here, there = store.load(session_id) or [], [decode_message(row) for row in rows]
    return len(here) if there[:len(here)] == here else None


def _row(seq: int, stored: sqlite3.Row) -> dict:
    message: dict = {"role": stored["role"]}
    content = stored["content"]
    if isinstance(content, str) and content.startswith(JSON_CONTENT):
        try:
            content = json.loads(content[len(JSON_CONTENT):])
        except ValueError:
            pass  # kept as the text it is
    if content is not None or stored["role"] != "assistant":
        message["content"] = "" if content is None else content
    try:
        calls = json.loads(stored["tool_calls"]) if stored["tool_calls"] else None
    except ValueError:
        calls = None
    if isinstance(calls, list) and calls:
        message["tool_calls"] = calls
    if stored["tool_call_id"]:
        message["tool_call_id"] = stored["tool_call_id"]
    keys = stored.keys()
    if "reasoning" in keys and stored["reasoning"]:
        message["reasoning"] = stored["reasoning"]
    columns = ("role", "content", "content_json", "tool_calls", "tool_call_id", "reasoning", "extra")
    created = stored["timestamp"] if "timestamp" in keys else None
    return {**dict(zip(columns, encode_message(message, seq))), "seq": seq, "created_at": created}


def _open(path: Path) -> sqlite3.Connection:
    if not Path(path).is_file():
        raise StoreError(f"{path}: no such file")
    try:  # read-only: hermes-agent's file is never changed, not even its journal
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot read it as a SQLite database: {exc}") from None
    return conn


def tables(conn: sqlite3.Connection) -> set:
    """The names of a SQLite database's tables."""
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(conn: sqlite3.Connection, table: str) -> set:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
