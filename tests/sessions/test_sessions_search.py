"""Full-text search (FTS5) and the session_search tool."""

from __future__ import annotations

import json
import sqlite3
from types import SimpleNamespace

import pytest

from hermes.host.config import Config
from kernel.types import ToolContext, ToolError
from plugins.sessions import schema
from plugins.sessions.codec import fts_query
from plugins.sessions.store import SessionStore, StoreError


@pytest.fixture
def filled(store):
    store.ensure_session("s1", model="m1", platform="cli")
    store.append("s1", [
        {"role": "user", "content": "How do I configure the PostgreSQL connection pool?"},
        {"role": "assistant", "content": "Set max_connections in the pool settings."},
    ])
    store.ensure_session("s2", model="m2", platform="cli")
    store.append("s2", [
        {"role": "user", "content": 'Quote test: "foo bar" and AND OR NOT near(x) col:val prefix*'},
        {"role": "tool", "tool_call_id": "c1", "content": "connection refused by PostgreSQL"},
        {"role": "user", "content": [{"type": "text", "text": "résumé of the meeting"}]},
    ])
    return store


def test_basic_search_ranked_with_snippets(filled):
    hits = filled.search("postgresql")
    assert {h["session_id"] for h in hits} == {"s1", "s2"}
    assert all("[PostgreSQL]" in h["snippet"] for h in hits)
    assert filled.search("postgresql pool")[0]["session_id"] == "s1"  # all words must match
    assert len(filled.search("postgresql pool")) == 1
    assert filled.search("nothing-like-this") == []


def test_filters(filled):
    assert [h["session_id"] for h in filled.search("postgresql", exclude_session="s1")] == ["s2"]
    assert [h["session_id"] for h in filled.search("postgresql", session_id="s1")] == ["s1"]
    assert [h["role"] for h in filled.search("postgresql", role="tool")] == ["tool"]
    assert len(filled.search("postgresql", limit=1)) == 1


def test_list_content_and_diacritics_are_searchable(filled):
    assert [h["seq"] for h in filled.search("resume")] == [2]


@pytest.mark.parametrize(
    "query",
    ['"foo', 'foo"', "AND OR", "NOT", "near(x)", "col:val", "prefix*", "*", "-", "(", ")", "^x", "a''b",
     "'; DROP TABLE messages; --", "x AND", "OR OR OR", "{a b}", "+", "\\", "ünïcödé", "你好"],
)
def test_fts_syntax_in_user_input_is_literal(filled, query):
    hits = filled.search(query)  # must not raise an FTS syntax error
    assert isinstance(hits, list)
    assert filled.message_count() == 5


def test_odd_input_finds_the_literal_words(filled):
    assert [h["session_id"] for h in filled.search('"foo')] == ["s2"]
    assert [h["session_id"] for h in filled.search("AND OR")] == ["s2"]
    assert [h["session_id"] for h in filled.search("col:val")] == ["s2"]


@pytest.mark.parametrize("query", ["", "   ", '"', '""', '" "'])
def test_empty_query_is_an_error(filled, query):
    with pytest.raises(ValueError, match="empty"):
        filled.search(query)


def test_fts_query_quotes_every_term():
    assert fts_query('a "b c*') == '"a" """b" "c*"'


def test_without_fts5_appends_work_and_the_index_is_rebuilt_later(home, monkeypatch):
    s = SessionStore.for_data_dir(home)
    s.append("s", [{"role": "user", "content": "alpha"}])
    s.close()
    # Open the same file with a SQLite that lacks FTS5.
    monkeypatch.setattr(schema, "fts5_available", lambda: False)
    s = SessionStore.for_data_dir(home)
    s.append("s", [{"role": "user", "content": "beta"}])  # the triggers were dropped: no error
    with pytest.raises(StoreError, match="FTS5"):
        s.search("beta")
    assert s.fts is False
    s.close()
    monkeypatch.undo()
    monkeypatch.setenv("HERMES_HOME", str(home))
    s = SessionStore.for_data_dir(home)
    assert [h["seq"] for h in s.search("beta")] == [1]  # rebuilt from the table
    assert s.fts is True
    assert [h["seq"] for h in s.search("alpha")] == [0]
    s.append("s", [{"role": "user", "content": "gamma"}])
    assert [h["seq"] for h in s.search("gamma")] == [2]
    s.close()
    _assert_index_in_step(home / "state.db")


def _assert_index_in_step(path, upto=None):
    """The index holds exactly the messages up to fts_progress.upto (``upto``, else all of them)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        indexed = conn.execute("SELECT upto FROM fts_progress").fetchone()[0]
        assert indexed == (conn.execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()[0]
                           if upto is None else upto)
        in_index = [r[0] for r in conn.execute("SELECT id FROM messages_fts_docsize ORDER BY id")]
        assert in_index == [r[0] for r in conn.execute("SELECT id FROM messages WHERE id <= ? ORDER BY id",
                                                       (indexed,))]
        if upto is None:  # every message indexed: its words are the table's (checked against it)
            conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()


def test_an_append_leaves_the_index_to_the_next_search(store):
    store.append("a", [{"role": "user", "content": "alpha one"}, {"role": "assistant", "content": "alpha two"}])
    assert store.search("alpha") and store.search("one")[0]["seq"] == 0
    _assert_index_in_step(store.path)
    store.append("a", [{"role": "user", "content": "alpha three"}])
    store.append("b", [{"role": "user", "content": "alpha four"}])
    _assert_index_in_step(store.path, upto=2)  # not indexed yet
    store.delete("a")  # an indexed message and one not yet indexed go: the triggers forget only the first
    _assert_index_in_step(store.path, upto=2)
    assert [h["session_id"] for h in store.search("alpha")] == ["b"]
    _assert_index_in_step(store.path)
    with store._write() as conn:  # an edited message is indexed again
        conn.execute("UPDATE messages SET content = 'omega' WHERE session_id = 'b'")
    assert store.search("alpha") == [] and [h["session_id"] for h in store.search("omega")] == ["b"]
    _assert_index_in_step(store.path)


def test_a_file_indexed_on_insert_by_an_older_hermes_is_taken_over_as_it_is(home, monkeypatch):
    with monkeypatch.context() as patch:  # schema 2, with the insert trigger of the hermes that wrote it
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:2])
        patch.setattr(schema, "SCHEMA_VERSION", 2)
        old = SessionStore.for_data_dir(home)
        with old._write() as conn:
            conn.execute(schema.FTS_TABLE)
            conn.execute("CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN"
                         " INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END")
            conn.execute("CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN INSERT INTO"
                         " messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content); END")
        old.append("s", [{"role": "user", "content": "indexed by the old trigger"}])
        old.close()
    store = SessionStore.for_data_dir(home)
    store.append("s", [{"role": "user", "content": "written after the upgrade"}])
    _assert_index_in_step(home / "state.db", upto=1)  # the old messages count as indexed: no rebuild
    triggers = [r[0] for r in sqlite3.connect(home / "state.db").execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")]
    assert triggers == sorted(schema.FTS_TRIGGERS)
    assert [h["seq"] for h in store.search("old trigger")] == [0]
    assert [h["seq"] for h in store.search("upgrade")] == [1]
    _assert_index_in_step(home / "state.db")
    store.close()


# --------------------------------------------------------------------------
# The tool


def _ctx(home, session_id="current"):
    agent = SimpleNamespace(config=Config(), session_id=session_id)
    return ToolContext(agent=agent, tool_name="session_search", tool_call_id="c", task_id="t",
                       session_id=session_id, turn_id="1")


def test_tool_registration():
    import plugins.sessions as plugin

    tools = []
    plugin.register_tools(tools.append, Config())
    (tool,) = tools
    assert (tool.name, tool.toolset, tool.parallel_safe) == ("session_search", "session_search", True)
    assert tool.parameters["required"] == ["query"]


def test_tool_returns_json_and_skips_the_current_session(home):
    from plugins.sessions import get_store
    from plugins.sessions.tool import search_handler

    s = get_store(home)
    s.append("old", [{"role": "user", "content": "we chose the blue logo"}])
    s.append("current", [{"role": "user", "content": "which logo did we choose?"}])
    out = json.loads(search_handler({"query": "logo"}, _ctx(home)))
    assert out["count"] == 1
    (hit,) = out["results"]
    assert hit["session_id"] == "old" and hit["role"] == "user" and "[logo]" in hit["snippet"]
    assert hit["session_started"].endswith("UTC")
    # naming a session searches exactly that one
    out = json.loads(search_handler({"query": "logo", "session_id": "current", "limit": 5}, _ctx(home)))
    assert [r["session_id"] for r in out["results"]] == ["current"]


@pytest.mark.parametrize(
    "args, message",
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": 3}, "query"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "limit": "5"}, "limit"),
        ({"query": "x", "limit": True}, "limit"),
        ({"query": "x", "role": "robot"}, "role"),
        ({"query": "x", "session_id": ""}, "session_id"),
        ({"query": "x", "sql": "drop"}, "unknown"),
        ({"query": '""'}, "empty"),
    ],
)
def test_tool_bad_arguments_are_tool_errors(home, args, message):
    from plugins.sessions.tool import search_handler

    with pytest.raises(ToolError, match=message):
        search_handler(args, _ctx(home))


def test_a_search_while_another_writer_holds_the_file_searches_what_is_indexed(store, monkeypatch, caplog):
    import plugins.sessions.store as module

    store.append("s", [{"role": "user", "content": "alpha indexed"}])
    assert store.search("alpha")  # indexed up to here
    store.append("s", [{"role": "user", "content": "alpha newer"}])
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in a long write
    monkeypatch.setattr(module, "BUSY_TIMEOUT_S", 0.2)
    try:
        assert [h["seq"] for h in store.search("alpha")] == [0]
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert "the newest messages are left out of this search" in caplog.text
    assert sorted(h["seq"] for h in store.search("alpha")) == [0, 1]  # caught up once the file is free
    _assert_index_in_step(store.path)
