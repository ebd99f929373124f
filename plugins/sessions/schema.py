"""The session database's schema: numbered migrations and the full-text index."""

from __future__ import annotations

import sqlite3

# Each migration runs in its own transaction, in order; the version
# reached is recorded in ``schema_version``. Never edit a released migration:
# add a new one.

MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            """CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                parent_session_id TEXT,
                start_reason TEXT,
                model TEXT,
                provider TEXT,
                platform TEXT,
                title TEXT,
                started_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                ended_at REAL,
                end_reason TEXT,
                message_count INTEGER NOT NULL DEFAULT 0,
                input_tokens INTEGER NOT NULL DEFAULT 0,
                output_tokens INTEGER NOT NULL DEFAULT 0,
                cache_read_tokens INTEGER NOT NULL DEFAULT 0,
                cache_write_tokens INTEGER NOT NULL DEFAULT 0,
                reasoning_tokens INTEGER NOT NULL DEFAULT 0,
                api_call_count INTEGER NOT NULL DEFAULT 0
            )""",
            "CREATE INDEX sessions_updated ON sessions(updated_at)",
            "CREATE INDEX sessions_parent ON sessions(parent_session_id)",
            # content: the text (searchable); content_json: the JSON of a
            # content that is not a plain string (None, a list of parts).
            # Both NULL means the message had no "content" key.
            """CREATE TABLE messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                role TEXT NOT NULL,
                content TEXT,
                content_json TEXT,
                tool_calls TEXT,
                tool_call_id TEXT,
                reasoning TEXT,
                extra TEXT,
                created_at REAL NOT NULL,
                UNIQUE (session_id, seq)
            )""",
        ],
    ),
    # how the session was started (model, provider, api_mode, base_url, api_key_env: never a key),
    # as JSON, for a resume to go on with
    (2, ["ALTER TABLE sessions ADD COLUMN provider_config TEXT"]),
    # The full-text index is brought up to date when a search reads it, not on every insert (its trigger was
    # over a third of an append): ``fts_progress.upto`` is the highest message id indexed, -1 for an index to
    # build. A file an older hermes indexed on insert is indexed up to its last message. The version also keeps
    # an older hermes, whose insert trigger would index a message a second time, from writing the file.
    (3, [
        "CREATE TABLE fts_progress (upto INTEGER NOT NULL)",
        "INSERT INTO fts_progress (upto) SELECT CASE WHEN EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger'"
        " AND name = 'messages_fts_ai') THEN COALESCE((SELECT MAX(id) FROM messages), 0) ELSE -1 END",
        "DROP TRIGGER IF EXISTS messages_fts_ai",
        "DROP TRIGGER IF EXISTS messages_fts_ad",
        "DROP TRIGGER IF EXISTS messages_fts_au",
    ]),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]

# The full-text index's table and triggers are kept outside the numbered migrations because they depend on the
# SQLite build (FTS5), not on the schema version: a file made without FTS5 gets its index the first time a build
# with FTS5 opens it. The triggers keep the indexed messages (id <= upto) in step with the table; the rest are
# indexed by a search's catch-up (CATCH_UP).
FTS_TABLE = (
    "CREATE VIRTUAL TABLE messages_fts USING fts5("
    "content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2')"
)
FTS_TRIGGERS = {
    "messages_fts_forget": """CREATE TRIGGER messages_fts_forget AFTER DELETE ON messages
        WHEN old.id <= (SELECT upto FROM fts_progress) BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END""",
    "messages_fts_reindex": """CREATE TRIGGER messages_fts_reindex AFTER UPDATE OF content ON messages
        WHEN old.id <= (SELECT upto FROM fts_progress) BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END""",
}
# Under the write lock: index the messages written since, and remember the last one.
CATCH_UP = [
    "INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages"
    " WHERE id > (SELECT upto FROM fts_progress)",
    "UPDATE fts_progress SET upto = MAX(upto, COALESCE((SELECT MAX(id) FROM messages), upto))",
]


def fts5_available() -> bool:
    """True when this Python's SQLite was built with FTS5."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.probe USING fts5(x)")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()
