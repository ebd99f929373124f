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
    conn = sqlite3.connect(home / "state.db")
    assert conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')").fetchall() == []
    conn.close()


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
