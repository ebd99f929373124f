"""A state.db as hermes-agent 0.19 (schema 22) writes it, for ``hermes sessions import``: the tables and columns the
import reads, with rows as hermes-agent's SessionDB stores them (checked against a database its own code wrote: a
list content behind its ``\\x00json:`` marker, tool calls as JSON text, a rewind's rows ``active = 0``, a compressed
session's continuation by ``parent_session_id``, its own ``system`` and ``session_meta`` rows)."""

from __future__ import annotations

import json
import sqlite3

FIRST, SECOND = "20261201_090000_aaaa", "20261201_091500_bbbb"
T0 = 1_796_000_000.0
CALLS = [{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls /tmp"}'}}]
PICTURE = [{"type": "text", "text": "what is in this picture"},
           {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
# what our store gives back for each session once imported
FIRST_MESSAGES = [
    {"role": "user", "content": "What files are in /tmp?"},
    {"role": "assistant", "content": "", "tool_calls": CALLS, "reasoning": "list it"},
    {"role": "tool", "content": "a.txt\nb.txt", "tool_call_id": "call_1"},
    {"role": "assistant", "content": "Two files: a.txt and b.txt."},
]
SECOND_MESSAGES = [{"role": "user", "content": PICTURE}, {"role": "assistant", "content": "A cat."}]


def make(path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")  # as hermes-agent keeps it
    conn.executescript("""
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (22);
        CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, system_prompt TEXT,
            parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
            message_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
            cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
            reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT, title TEXT, api_call_count INTEGER DEFAULT 0,
            archived INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
            role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
            timestamp REAL NOT NULL, finish_reason TEXT, reasoning TEXT, active INTEGER NOT NULL DEFAULT 1);
    """)
    conn.execute("INSERT INTO sessions (id, source, model, system_prompt, started_at, ended_at, end_reason,"
                 " input_tokens, output_tokens, billing_provider, title, api_call_count)"
                 " VALUES (?, 'cli', 'gpt-5.1', 'You are hermes-agent.', ?, ?, 'compression', 1200, 80, 'openrouter',"
                 " 'tmp listing', 3)", (FIRST, T0, T0 + 60))
    conn.execute("INSERT INTO sessions (id, source, model, parent_session_id, started_at)"
                 " VALUES (?, 'telegram', 'gpt-5.1', ?, ?)", (SECOND, FIRST, T0 + 61))
    rows = [
        (FIRST, "session_meta", '{"cwd": "/tmp"}', None, None, None, None, 1),
        (FIRST, "user", "What files are in /tmp?", None, None, None, None, 1),
        (FIRST, "assistant", "", None, json.dumps(CALLS), None, "list it", 1),
        (FIRST, "tool", "a.txt\nb.txt", "call_1", None, "terminal", None, 1),
        (FIRST, "assistant", "Two files: a.txt and b.txt.", None, None, None, None, 1),
        (FIRST, "user", "and a mistake", None, None, None, None, 0),  # rewound
        (FIRST, "assistant", "rewound answer", None, None, None, None, 0),
        (SECOND, "system", "a note hermes-agent kept for itself", None, None, None, None, 1),
        (SECOND, "user", "\x00json:" + json.dumps(PICTURE), None, None, None, None, 1),
        (SECOND, "assistant", "A cat.", None, None, None, None, 1),
        ("20261130_no_such_session", "user", "a message of a session that is gone", None, None, None, None, 1),
    ]
    for i, row in enumerate(rows):
        conn.execute("INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name,"
                     " reasoning, active, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (*row, T0 + i))
    conn.execute("CREATE INDEX idx_messages_session ON messages(session_id, timestamp)")
    conn.commit()
    conn.close()
