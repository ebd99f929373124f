"""SessionStore on real SQLite in a temp folder."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from plugins.sessions import schema
from plugins.sessions.schema import SCHEMA_VERSION
from plugins.sessions.store import SessionStore, StoreError, UnknownSession


def step(i: int) -> list[dict]:
    """One loop step: an assistant message with a tool call, and its result."""
    call_id = f"call_{i}"
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "echo", "arguments": f'{{"n": {i}}}'}}
            ],
            "reasoning": f"thinking about step {i}",
        },
        {"role": "tool", "tool_call_id": call_id, "content": f"result {i}"},
    ]


ODD_MESSAGES = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "héllo wörld ✓ 你好"},
    {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]},
    {"role": "assistant", "content": ""},
    {"role": "assistant", "content": None, "tool_calls": []},
    {"role": "assistant"},  # no content key at all
    {
        "role": "assistant",
        "content": "done",
        "reasoning": "r",
        "codex_reasoning_items": [{"id": "rs_1", "encrypted_content": "abc"}],
        "finish_reason": "stop",
        "nested": {"a": [1, 2.5, None, True]},
    },
    {"role": "tool", "tool_call_id": "c9", "name": "echo", "content": '{"ok": true}'},
    {"role": "assistant", "content": "x", "reasoning": None, "tool_call_id": None},  # wrong-typed core keys
]


def test_round_trip_exact(store):
    store.ensure_session("s1", model="m", provider="p", platform="cli")
    store.append("s1", ODD_MESSAGES)
    store.append("s1", step(1))
    assert store.load("s1") == ODD_MESSAGES + step(1)
    # A fresh connection (another process would do the same) reads the same.
    again = SessionStore(store.path)
    assert again.load("s1") == ODD_MESSAGES + step(1)
    again.close()


def test_unknown_and_empty_sessions(store):
    assert store.load("nope") is None
    store.ensure_session("empty")
    assert store.load("empty") == []
    assert store.get_session("nope") is None


def test_append_creates_the_session_and_start_fills_it_in(store):
    store.append("late", [{"role": "user", "content": "hi"}])
    assert store.get_session("late")["model"] is None
    assert store.ensure_session("late", model="m", platform="cli") is False
    meta = store.get_session("late")
    assert (meta["model"], meta["platform"], meta["message_count"]) == ("m", "cli", 1)


def test_append_only_earlier_rows_untouched(store):
    store.append("s", [{"role": "user", "content": "first"}] + step(0))
    conn = sqlite3.connect(store.path)
    before = conn.execute("SELECT id, seq, content, created_at FROM messages ORDER BY id").fetchall()
    changes_before = conn.total_changes
    store.append("s", step(1))
    after = conn.execute("SELECT id, seq, content, created_at FROM messages ORDER BY id").fetchall()
    conn.close()
    # The old rows keep their ids, positions, contents and timestamps; the new ones follow.
    assert after[: len(before)] == before
    assert len(after) == len(before) + 2
    assert [r[1] for r in after] == list(range(len(after)))
    assert after[-1][0] > before[-1][0]
    assert changes_before == 0


def test_append_write_cost_does_not_depend_on_history(store):
    """Count the rows SQLite changes per append: constant, whatever the history."""
    store.append("big", [{"role": "user", "content": f"m{i}"} for i in range(500)])
    store.append("small", [{"role": "user", "content": "m"}])
    conn = store._conn
    costs = {}
    for sid in ("big", "small"):
        with store._lock:
            before = conn.total_changes
        store.append(sid, step(7))
        with store._lock:
            costs[sid] = conn.total_changes - before
    assert costs["big"] == costs["small"]
    # total_changes also counts trigger and FTS shadow-table writes; what
    # matters is that it is a small constant, not a function of the history.
    assert costs["big"] < 20


def test_bad_message_writes_nothing(store):
    store.append("s", [{"role": "user", "content": "keep"}])
    for bad in ([{"role": "user"}, {"content": "no role"}], [{"role": ""}], ["text"], [None]):
        with pytest.raises(ValueError):
            store.append("s", bad)
    with pytest.raises(ValueError):
        store.append("s", {"role": "user", "content": "a dict, not a list"})
    with pytest.raises(ValueError):
        store.append("", [{"role": "user", "content": "x"}])
    assert store.load("s") == [{"role": "user", "content": "keep"}]


def test_non_json_values_are_kept_as_text(store):
    class Odd:
        def __str__(self):
            return "odd-object"

    store.append("s", [{"role": "assistant", "content": "x", "meta": Odd()}])
    assert store.load("s") == [{"role": "assistant", "content": "x", "meta": "odd-object"}]


def test_end_session_adds_usage_per_turn(store):
    store.ensure_session("s", model="m")
    store.end_session("s", "completed", {"input_tokens": 10, "output_tokens": 3, "request_count": 2})
    store.end_session(
        "s",
        "interrupted_by_user",
        {"input_tokens": 5, "cache_read_tokens": 7, "cache_write_tokens": 1, "reasoning_tokens": 2,
         "request_count": 1, "total_tokens": 999, "bogus": "x", "output_tokens": True},
    )
    meta = store.get_session("s")
    assert meta["end_reason"] == "interrupted_by_user"
    assert meta["ended_at"] >= meta["started_at"]
    got = {k: meta[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                                "reasoning_tokens", "api_call_count")}
    assert got == {"input_tokens": 15, "output_tokens": 3, "cache_read_tokens": 7, "cache_write_tokens": 1,
                   "reasoning_tokens": 2, "api_call_count": 3}


def test_list_latest_and_children(store):
    store.ensure_session("a", platform="cli")
    store.append("a", [{"role": "user", "content": "first question here"}])
    store.ensure_session("g", platform="telegram")
    store.append("g", [{"role": "user", "content": "from the gateway"}])
    store.ensure_session("child", platform="cli", parent_session_id="a", reason="delegation")
    store.append("child", [{"role": "user", "content": "sub task"}])
    assert store.latest_session_id() == "g"
    assert store.latest_session_id("cli") == "a"  # the child is newer, but not a conversation to continue
    store.ensure_session("a2", platform="cli", parent_session_id="a", reason="compression")
    assert store.latest_session_id("cli") == "a2"
    assert store.latest_session_id("nowhere") is None

    rows = store.list_sessions(limit=10)
    assert [r["id"] for r in rows] == ["a2", "child", "g", "a"]
    assert rows[-1]["preview"] == "first question here"
    assert [r["id"] for r in store.list_sessions(limit=2)] == ["a2", "child"]
    assert [r["id"] for r in store.list_sessions(limit=2, offset=2)] == ["g", "a"]
    assert [r["id"] for r in store.list_sessions(platform="telegram")] == ["g"]
    # Appending to an older session makes it the latest again.
    store.append("a", [{"role": "user", "content": "back"}])
    assert store.latest_session_id("cli") == "a"


def test_delete_removes_messages_and_index(store):
    store.append("s", [{"role": "user", "content": "zebra crossing"}])
    store.append("t", [{"role": "user", "content": "zebra stripes"}])
    assert len(store.search("zebra")) == 2
    assert store.delete("s") is True
    assert store.delete("s") is False
    assert store.load("s") is None
    assert [h["session_id"] for h in store.search("zebra")] == ["t"]
    assert store.message_count() == 1


def test_title_and_resolve_id(store):
    store.ensure_session("20261129_abc")
    store.ensure_session("20261129_abd")
    store.set_title("20261129_abc", "  My   first\ttalk ")
    assert store.get_session("20261129_abc")["title"] == "My first talk"
    with pytest.raises(UnknownSession):
        store.set_title("missing", "x")
    with pytest.raises(StoreError):
        store.set_title("20261129_abc", "   ")
    assert store.resolve_id("20261129_abc") == "20261129_abc"
    assert store.resolve_id("20261129_abd") == "20261129_abd"
    with pytest.raises(UnknownSession, match="ambiguous"):
        store.resolve_id("20261129_ab")
    with pytest.raises(UnknownSession, match="no session"):
        store.resolve_id("zzz")
    # LIKE wildcards in the input are literal
    with pytest.raises(UnknownSession):
        store.resolve_id("%")


def test_schema_version_and_reopen(store):
    store.append("s", [{"role": "user", "content": "x"}])
    store.close()
    conn = sqlite3.connect(store.path)
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    again = SessionStore(store.path)
    assert again.load("s") == [{"role": "user", "content": "x"}]
    assert again.journal_mode == "wal"
    again.close()


def test_newer_schema_is_refused_untouched(store):
    store.append("s", [{"role": "user", "content": "x"}])
    store.close()
    conn = sqlite3.connect(store.path)
    conn.execute("UPDATE schema_version SET version = 999")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer than this hermes"):
        SessionStore(store.path).load("s")


def test_migrations_run_in_order_one_transaction_each(home, monkeypatch):
    extra = (SCHEMA_VERSION + 1, ["ALTER TABLE sessions ADD COLUMN note TEXT", "THIS IS NOT SQL"])
    s = SessionStore.for_data_dir(home)
    s.append("s", [{"role": "user", "content": "x"}])
    s.close()
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS + [extra])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", extra[0])
    with pytest.raises(StoreError):
        SessionStore.for_data_dir(home).load("s")
    # The failed migration rolled back whole: version and columns unchanged.
    conn = sqlite3.connect(home / "state.db")
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == extra[0] - 1
    assert "note" not in [r[1] for r in conn.execute("PRAGMA table_info(sessions)")]
    conn.close()
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:-1] + [(extra[0], extra[1][:1])])
    s = SessionStore.for_data_dir(home)
    assert s.load("s") == [{"role": "user", "content": "x"}]
    s.close()
    conn = sqlite3.connect(home / "state.db")
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == extra[0]
    assert "note" in [r[1] for r in conn.execute("PRAGMA table_info(sessions)")]
    conn.close()


def test_threads_share_one_store(store):
    errors = []

    def work(n):
        try:
            for i in range(20):
                store.append(f"t{n}", step(i))
                assert store.load(f"t{n}")[-1]["content"] == f"result {i}"
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for n in range(4):
        assert store.load(f"t{n}") == [m for i in range(20) for m in step(i)]


def test_a_version_1_database_gains_how_its_sessions_started(home, monkeypatch):
    with monkeypatch.context() as patch:  # a state.db written before the start was recorded
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
        patch.setattr(schema, "SCHEMA_VERSION", 1)
        old = SessionStore.for_data_dir(home)
        old.load("nothing-yet")
        with old._write() as conn:
            conn.execute("INSERT INTO sessions (id, model, started_at, updated_at) VALUES ('old', 'm', 1, 1)")
        old.close()
    store = SessionStore.for_data_dir(home)
    assert store.provider_config("old") == {}  # unknown, not an error
    store.ensure_session("new", model="m", provider_config={"model": "m", "api_mode": "scripted"})
    store.ensure_session("new", provider_config={"model": "other"})  # a resume keeps the start
    assert store.provider_config("new") == {"model": "m", "api_mode": "scripted"}
    assert store.matching_ids("o") == ["old"] and store.matching_ids("") == []
    store.close()


def test_another_writer_between_two_appends_is_seen(store):
    """The store remembers a session's next seq between its own appends; another writer (another
    process's store on the same file) appending or deleting meanwhile conflicts, and the append is made
    again from the file: every message kept once, in order, the count right."""
    other = SessionStore(store.path)
    store.append("s", step(0))
    other.append("s", [{"role": "user", "content": "from the other process"}])
    store.append("s", step(1))
    loaded = store.load("s")
    assert [m.get("content") for m in loaded] == [None, "result 0", "from the other process", None, "result 1"]
    assert store.get_session("s")["message_count"] == 5
    other.delete("s")
    store.append("s", [{"role": "user", "content": "after the delete"}])
    assert [m["content"] for m in store.load("s")] == ["after the delete"]
    other.close()


def test_a_read_after_writes_waits_for_locks_again(store):
    """Writes leave the connection's busy timeout at 0 in WAL mode (the writers take turns themselves, and
    a pragma less per write); a read sets SQLite's wait back before it runs."""
    store.append("s", step(0))
    with store._write() as conn:
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 0
    assert len(store.load("s")) == 2
    with store._connection() as conn:
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000


def test_compact_gives_deleted_space_back_and_is_an_error_while_another_process_writes(store):
    """`sessions prune` compacts state.db (SQLite keeps deleted rows' pages for later rows): the file shrinks;
    while another connection holds a write transaction it is a StoreError naming the file (after the wait)."""
    for i in range(20):
        store.append(f"s{i}", [{"role": "user", "content": "x" * 50_000}])
    for i in range(19):
        store.delete(f"s{i}")
    before, after = store.compact()
    assert after < before / 4 and store.load("s19")[0]["content"] == "x" * 50_000
    holder = sqlite3.connect(store.path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match=str(store.path)):
            store.compact()
    finally:
        holder.close()
