"""The ``fts`` memory backend: real SQLite FTS5 in the test's HERMES_HOME."""

from __future__ import annotations

import json
import sqlite3

import pytest

from hermes.host.config import Config
from kernel.types import ToolError
from plugins_memory import fts_memory, manager
from plugins_memory.fts_memory import FtsMemory, fts_query


@pytest.fixture
def fts(hermes_home):
    backend = FtsMemory(Config({}))
    assert backend.is_available()
    backend.initialize("s1", hermes_home=str(hermes_home), platform="cli")
    return backend


def test_save_search_prefetch(fts, hermes_home):
    assert fts.path == hermes_home / "memories" / "facts.db"
    fts._tool_save({"content": "The staging database runs PostgreSQL 16", "tags": "infra"})
    fts._tool_save({"content": "Ada prefers tabs over spaces"})
    fts._tool_save({"content": "Deploys happen on Tuesdays"})

    found = fts._tool_search({"query": "which database do we use?"})
    assert found["count"] == 1 and "PostgreSQL" in found["results"][0]["content"]
    assert found["results"][0]["tags"] == "infra"

    text = fts.prefetch("does Ada like tabs?")
    assert text.startswith("Saved facts") and "Ada prefers tabs" in text and "PostgreSQL" not in text
    assert fts.prefetch("nothing relevant here") == ""
    assert fts.prefetch("") == ""

    # a new instance (next session) reads the same file
    again = FtsMemory(Config({}))
    assert again.count() == 3


@pytest.mark.parametrize(
    "query",
    ['he said "hi"', "NEAR(a b)", "col:value", "a* OR -b", "AND", "x' OR 1=1 --", "(((", "ünïcödé wörds", '"', "^start"],
)
def test_user_text_never_breaks_the_fts_query(fts, query):
    fts.save("he said hi to ünïcödé wörds at the start")
    fts.prefetch(query)  # must not raise sqlite3.OperationalError
    assert isinstance(fts.search(query), list)


def test_fts_query_quotes_every_term():
    assert fts_query('say "hello" AND bye*') == '"say" OR "hello" OR "bye"'
    assert fts_query("the and of") == ""  # stop words only
    assert fts_query("don't") == '"don"'


def test_tool_argument_errors(fts):
    with pytest.raises(ToolError, match="content"):
        fts._tool_save({"content": "  "})
    with pytest.raises(ToolError, match="at most 2000"):
        fts._tool_save({"content": "x" * 2001})
    with pytest.raises(ToolError, match="query"):
        fts._tool_search({})
    with pytest.raises(ToolError, match="no searchable word"):
        fts._tool_search({"query": "the ?!"})
    with pytest.raises(ToolError, match="limit"):
        fts._tool_search({"query": "x", "limit": 0})
    with pytest.raises(ToolError, match="no fact with id 99"):
        fts._tool_forget({"id": 99})


def test_forget_removes_from_the_index(fts):
    fact = fts._tool_save({"content": "temporary secret word zebra"})["id"]
    assert fts.search("zebra")
    assert fts._tool_forget({"id": fact}) == {"forgotten": True, "id": fact}
    assert fts.search("zebra") == []


def test_memory_tool_writes_are_indexed(fts):
    fts.on_memory_write("add", "user", "Ada works at the observatory")
    fts.on_memory_write("add", "memory", "the observatory wifi is slow")
    fts._tool_save({"content": "Ada's observatory has a red door"})
    hits = fts.search("observatory")
    assert sorted(h["tags"] for h in hits) == ["", "memory-tool:memory", "memory-tool:user"]
    # replace and remove in the built-in memory take the mirrored fact along, nothing else
    fts.on_memory_write("replace", "user", "Ada works at the planetarium", {"old_text": "observatory"})
    assert sorted(h["content"] for h in fts.search("observatory planetarium")) == [
        "Ada works at the planetarium", "Ada's observatory has a red door", "the observatory wifi is slow"]
    fts.on_memory_write("remove", "memory", "wifi")
    assert [h["content"] for h in fts.search("wifi")] == []


def test_removing_from_memory_stops_the_recall(make_agent, hermes_home):
    script = [
        {"tool_calls": [("memory", {"action": "add", "target": "user", "content": "Password hint: blue whale"})]},
        {"tool_calls": [("memory", {"action": "remove", "target": "user", "old_text": "blue whale"})]},
        "forgotten",
    ]
    agent = make_agent(manager, fts_memory, config={"memory": {"provider": "fts"}}, script=script)
    assert agent.chat("remember then forget my hint") == "forgotten"
    assert manager.runtime(agent).worker.drain(5)
    later = make_agent(manager, fts_memory, config={"memory": {"provider": "fts"}}, script=["no idea"])
    later.chat("what is my password hint, the whale one?")
    user = [m for m in later.scripted.requests[0].messages if m["role"] == "user"][-1]["content"]
    assert "blue whale" not in user and "<memory-context>" not in user


def test_fts_backend_through_the_agent(make_agent, hermes_home):
    agent = make_agent(
        manager,
        fts_memory,
        config={"memory": {"provider": "fts"}},
        script=[
            {"tool_calls": [("memory_save", {"content": "The launch code word is marmalade"})]},
            "saved",
        ],
    )
    assert {"memory", "memory_save", "memory_search", "memory_forget"} <= set(agent.tools)
    assert agent.chat("remember the launch code word: marmalade") == "saved"
    result = json.loads([m for m in agent.messages if m["role"] == "tool"][0]["content"])
    assert result["saved"] is True

    # the next session recalls it before the model is called
    later = make_agent(
        manager,
        fts_memory,
        config={"memory": {"provider": "fts"}},
        script=[{"tool_calls": [("memory_search", {"query": "launch code"})]}, "it is marmalade"],
    )
    assert later.chat("what was the launch code word?") == "it is marmalade"
    first = later.scripted.requests[0]
    user = [m for m in first.messages if m["role"] == "user"][-1]["content"]
    assert "<memory-context>" in user and "marmalade" in user
    assert "Long-term facts" in first.messages[0]["content"]
    found = json.loads([m for m in later.messages if m["role"] == "tool"][0]["content"])
    assert found["count"] == 1 and "marmalade" in found["results"][0]["content"]
    con = sqlite3.connect(hermes_home / "memories" / "facts.db")
    try:
        rows = con.execute("SELECT content, session_id FROM facts").fetchall()
    finally:
        con.close()
    assert rows == [("The launch code word is marmalade", agent.session_id)]


def test_fts_tools_not_registered_unless_selected(make_agent):
    agent = make_agent(manager, fts_memory, script=["hi"])
    assert "memory_search" not in agent.tools and "memory" in agent.tools


def test_a_damaged_fact_store_is_one_clear_line_and_left_alone(make_agent, hermes_home, caplog):
    import logging

    facts = hermes_home / "memories" / "facts.db"
    facts.parent.mkdir(parents=True)
    facts.write_bytes(b"\x00not sqlite at all\n" * 300)
    before = facts.read_bytes()
    with caplog.at_level(logging.INFO):
        agent = make_agent(
            manager, fts_memory, config={"memory": {"provider": "fts"}},
            script=[{"tool_calls": [("memory_save", {"content": "x"})]}, "carried on"],
        )
        assert agent.chat("remember x") == "carried on"
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None
    line = errors[0].getMessage()
    assert "failed to initialize" in line and str(facts) in line and "move it aside" in line
    result = json.loads([m for m in agent.messages if m["role"] == "tool"][0]["content"])
    assert "not active" in result["error"]
    assert facts.read_bytes() == before
