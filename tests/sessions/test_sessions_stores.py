"""The session store contract, on both stores: SQLite in a temp folder and PostgreSQL on a real server
(``postgres_url``: a fresh database on a server started for the test session)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pytest

from plugins.sessions.store import SessionStore, StoreError, UnknownSession
from tests.sessions.test_sessions_store import ODD_MESSAGES, step


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request, home):
    if request.param == "sqlite":
        s = SessionStore.for_data_dir(home)
    else:
        from plugins.sessions_postgres.store import PostgresStore

        s = PostgresStore(request.getfixturevalue("postgres_url"))
    yield s
    s.close()


def _again(store):
    """A second store object on the same data (what another process opens)."""
    if isinstance(store, SessionStore):
        return SessionStore(store.path)
    from plugins.sessions_postgres.store import PostgresStore

    return PostgresStore(store.url)


def test_round_trip_exact_and_seen_by_another_connection(any_store):
    assert any_store.ensure_session("s1", model="m", provider="p", platform="cli",
                                    provider_config={"model": "m", "api_mode": "chat_completions"}) is True
    assert any_store.ensure_session("s1", model="other") is False  # start data kept
    any_store.append("s1", ODD_MESSAGES)
    any_store.append("s1", step(1))
    other = _again(any_store)
    try:
        assert other.load("s1") == ODD_MESSAGES + step(1)
        assert other.get_session("s1")["model"] == "m"
        assert other.provider_config("s1") == {"model": "m", "api_mode": "chat_completions"}
        assert other.message_count("s1") == len(ODD_MESSAGES) + 2
    finally:
        other.close()
    assert any_store.load("never") is None


def test_a_bad_message_writes_nothing(any_store):
    any_store.append("s", [{"role": "user", "content": "one"}])
    with pytest.raises(ValueError, match="message 1"):
        any_store.append("s", [{"role": "user", "content": "two"}, {"content": "no role"}])
    with pytest.raises(ValueError):
        any_store.append("s", {"role": "user"})
    assert any_store.load("s") == [{"role": "user", "content": "one"}]
    assert any_store.get_session("s")["message_count"] == 1


def test_turn_ends_add_up_usage(any_store):
    any_store.append("s", [{"role": "user", "content": "hi"}])
    any_store.end_session("s", "completed", {"input_tokens": 10, "output_tokens": 3, "request_count": 2})
    any_store.end_session("s", "interrupted", {"input_tokens": 5, "reasoning_tokens": True, "output_tokens": -1})
    meta = any_store.get_session("s")
    assert (meta["input_tokens"], meta["output_tokens"], meta["api_call_count"], meta["reasoning_tokens"]) == \
        (15, 3, 2, 0)
    assert meta["end_reason"] == "interrupted" and meta["ended_at"] >= meta["started_at"]


def test_ids_prefixes_titles(any_store):
    for sid in ("20261204_aaa", "20261204_aab", "20261205_b%_"):
        any_store.append(sid, [{"role": "user", "content": sid}])
    assert any_store.resolve_id("20261205") == "20261205_b%_"
    assert any_store.resolve_id("20261204_aab") == "20261204_aab"
    assert any_store.matching_ids("2026120_") == []  # _ and % are literal
    with pytest.raises(UnknownSession, match="ambiguous"):
        any_store.resolve_id("20261204_aa")
    with pytest.raises(UnknownSession, match="no session with id 'zzz'"):
        any_store.resolve_id("zzz")
    any_store.set_title("20261204_aaa", "  a   title ")
    assert any_store.get_session("20261204_aaa")["title"] == "a title"
    for bad, why in (("", "empty"), ("x" * 201, "too long")):
        with pytest.raises(StoreError, match=why):
            any_store.set_title("20261204_aaa", bad)
    with pytest.raises(UnknownSession):
        any_store.set_title("nope", "t")


def test_list_latest_children_and_continuations(any_store):
    any_store.ensure_session("top", platform="cli")
    any_store.append("top", [{"role": "user", "content": "first question"}])
    any_store.ensure_session("child", platform="cli", parent_session_id="top", reason="delegation")
    any_store.append("child", [{"role": "user", "content": "sub task"}])
    assert any_store.latest_session_id("cli") == "top"  # a delegated child is never "the last conversation"
    any_store.ensure_session("next", platform="cli", parent_session_id="top", reason="compression")
    any_store.append("next", [{"role": "user", "content": "summary"}])
    rows = {r["id"]: r for r in any_store.list_sessions(platform="cli")}
    assert set(rows) == {"top", "child", "next"}
    assert rows["top"]["preview"] == "first question" and rows["top"]["continued_in"] == "next"
    assert rows["next"]["continued_in"] is None
    assert any_store.latest_session_id("cli") == "next"
    assert [r["id"] for r in any_store.list_sessions(limit=1, offset=0)] == ["next"]
    assert any_store.list_sessions(platform="api") == []


def test_search_every_word_literally(any_store):
    any_store.append("a", [{"role": "user", "content": "the purple elephant dances"},
                           {"role": "assistant", "content": "an elephant never forgets"}])
    any_store.append("b", [{"role": "user", "content": "purple rain"}])
    hits = any_store.search("purple elephant")
    assert [(h["session_id"], h["seq"]) for h in hits] == [("a", 0)]
    assert "[purple]" in hits[0]["snippet"] and "[elephant]" in hits[0]["snippet"]
    assert {h["session_id"] for h in any_store.search("purple")} == {"a", "b"}
    assert [h["session_id"] for h in any_store.search("purple", exclude_session="a")] == ["b"]
    assert [h["seq"] for h in any_store.search("elephant", session_id="a", role="assistant")] == [1]
    for syntax in ('"purple', "purple AND", "purple*", "NEAR(purple)", "purple:", "a & b | !c"):
        any_store.search(syntax)  # taken as words, never as query syntax (no error)
    with pytest.raises(ValueError):
        any_store.search("   ")


def test_delete_removes_the_session_and_its_messages(any_store):
    any_store.append("gone", [{"role": "user", "content": "unique marmalade"}])
    any_store.append("kept", [{"role": "user", "content": "kept marmalade"}])
    assert any_store.delete("gone") is True and any_store.delete("gone") is False
    assert any_store.load("gone") is None and any_store.message_count("gone") == 0
    assert [h["session_id"] for h in any_store.search("marmalade")] == ["kept"]


def test_hermes_agents_sessions_are_imported_whole_with_their_times_once(any_store, tmp_path):
    from plugins.sessions import hermes_agent
    from tests.sessions import agents_db

    agents_db.make(tmp_path / "state.db")
    before = (tmp_path / "state.db").read_bytes()
    imported = list(hermes_agent.read(tmp_path / "state.db"))
    assert [meta["id"] for meta, _ in imported] == [agents_db.FIRST, agents_db.SECOND]  # oldest first
    assert [any_store.import_session(meta, rows) for meta, rows in imported] == [True, True]
    assert any_store.load(agents_db.FIRST) == agents_db.FIRST_MESSAGES  # no rewound, system or session_meta rows
    assert any_store.load(agents_db.SECOND) == agents_db.SECOND_MESSAGES
    first = any_store.get_session(agents_db.FIRST)
    assert {key: first[key] for key in ("title", "model", "provider", "platform", "started_at", "updated_at",
                                        "ended_at", "end_reason", "message_count", "input_tokens", "output_tokens",
                                        "api_call_count", "continued_in")} == {
        "title": "tmp listing", "model": "gpt-5.1", "provider": "openrouter", "platform": "cli",
        "started_at": agents_db.T0, "updated_at": agents_db.T0 + 4, "ended_at": agents_db.T0 + 60,
        "end_reason": "compression", "message_count": 4, "input_tokens": 1200, "output_tokens": 80,
        "api_call_count": 3, "continued_in": agents_db.SECOND}
    assert any_store.get_session(agents_db.SECOND)["start_reason"] == "compression"
    assert [h["session_id"] for h in any_store.search("files")] == [agents_db.FIRST, agents_db.FIRST]
    # a second import leaves what is here alone; a conversation resumed here goes on after the imported messages
    any_store.append(agents_db.SECOND, [{"role": "user", "content": "and now?"}])
    assert [any_store.import_session(meta, rows) for meta, rows in hermes_agent.read(tmp_path / "state.db")] == \
        [False, False]
    assert any_store.load(agents_db.SECOND) == agents_db.SECOND_MESSAGES + [{"role": "user", "content": "and now?"}]
    assert (tmp_path / "state.db").read_bytes() == before  # only read (SQLite's -wal and -shm made by any reader)
    # the sessions went on in hermes-agent: what it added comes over, unless the copy here went on another way
    import sqlite3

    conn = sqlite3.connect(tmp_path / "state.db")
    conn.executemany("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)", [
        (agents_db.FIRST, "user", "and in /var?", agents_db.T0 + 100),
        (agents_db.FIRST, "assistant", "Only caches.", agents_db.T0 + 101),
        (agents_db.SECOND, "user", "a cat?", agents_db.T0 + 102)])
    conn.commit()
    conn.close()
    now = {meta["id"]: (meta, rows) for meta, rows in hermes_agent.read(tmp_path / "state.db")}
    assert hermes_agent.went_on(any_store, agents_db.SECOND, now[agents_db.SECOND][1]) is None  # "and now?" here
    known = hermes_agent.went_on(any_store, agents_db.FIRST, now[agents_db.FIRST][1])
    any_store.set_title(agents_db.FIRST, "renamed here")
    assert known == 4 and any_store.import_session(*now[agents_db.FIRST], known=known)
    assert any_store.load(agents_db.FIRST) == agents_db.FIRST_MESSAGES + [
        {"role": "user", "content": "and in /var?"}, {"role": "assistant", "content": "Only caches."}]
    went_on = any_store.get_session(agents_db.FIRST)
    assert (went_on["updated_at"], went_on["message_count"]) == (agents_db.T0 + 101, 6)
    assert went_on["title"] == "renamed here"
    assert [h["created_at"] for h in any_store.search("caches")] == [agents_db.T0 + 101]  # its time, not the import's


def test_an_older_state_db_of_hermes_agents_with_fewer_columns_is_read_too(tmp_path):
    """Earlier schemas lack columns added since (active, reasoning, title, the token counts): what is there is read."""
    import sqlite3

    from plugins.sessions import hermes_agent

    conn = sqlite3.connect(tmp_path / "state.db")
    conn.executescript("""
        CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, started_at REAL NOT NULL);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
            content TEXT, tool_call_id TEXT, tool_calls TEXT, timestamp REAL NOT NULL);
        INSERT INTO sessions VALUES ('20250101_000000_old', 'cli', 'gpt-4o', 1735689600);
        INSERT INTO messages (session_id, role, content, tool_calls, timestamp)
            VALUES ('20250101_000000_old', 'user', 'old times', NULL, 1735689601),
                   ('20250101_000000_old', 'assistant', 'indeed', 'not json', 1735689602);
    """)
    conn.close()
    [(meta, rows)] = list(hermes_agent.read(tmp_path / "state.db"))
    assert meta == {"id": "20250101_000000_old", "model": "gpt-4o", "platform": "cli", "started_at": 1735689600}
    assert [(r["role"], r["content"], r["tool_calls"], r["created_at"]) for r in rows] == [
        ("user", "old times", None, 1735689601), ("assistant", "indeed", None, 1735689602)]  # unreadable calls: none


def test_threads_append_to_one_store(any_store):
    def write(n):
        for i in range(10):
            any_store.append(f"t{n}", [{"role": "user", "content": f"{n}:{i}"}])

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in range(4):
        assert [m["content"] for m in any_store.load(f"t{n}")] == [f"{n}:{i}" for i in range(10)]
    assert any_store.check() == []


HOLDER = """
import sys, time
sys.path[:0] = {path!r}
{make}
print(store.claim("held") or "claimed", flush=True)
sys.stdin.read()  # until the test closes it
"""


def test_one_writer_per_session_across_processes(any_store, home):
    if isinstance(any_store, SessionStore):
        make = f"from plugins.sessions.store import SessionStore\nstore = SessionStore({str(any_store.path)!r})"
    else:
        make = f"from plugins.sessions_postgres.store import PostgresStore\nstore = PostgresStore({any_store.url!r})"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HOLDER.format(path=sys.path, make=make))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "claimed"
        refused = any_store.claim("held")
        assert refused.startswith("session held is being written by another hermes process") \
            and f"pid {holder.pid}" in refused, refused
        assert any_store.claim("free") is None and any_store.claim("free") is None  # again: still ours
        any_store.release("free")
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    # the holder ended: its lock went with it (PostgreSQL lets it go as the server sees the connection close, a moment
    # after the process is gone; CI found the moment once)
    deadline = time.monotonic() + 10
    while any_store.claim("held") is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any_store.claim("held") is None


def test_a_plugin_store_is_chosen_by_sessions_store(home, tmp_path, make_agent):
    """``register_session_stores``: a plugin's store, picked by name, gets every session hook's work."""
    import plugins.sessions as sessions_plugin
    from kernel import hookimpl

    made = []

    class Elsewhere:
        @hookimpl
        def register_session_stores(self, register):
            def factory(config):
                made.append(config.get("sessions.store"))
                return SessionStore(tmp_path / "elsewhere.db")

            register("elsewhere", factory)

    config = {"sessions": {"store": "elsewhere"}}
    agent = make_agent(sessions_plugin, Elsewhere(), script=["stored elsewhere"], config=config)
    assert agent.run_conversation("hello")["exit_reason"] == "completed"
    assert made == ["elsewhere"]  # one store per process and config
    assert not (home / "state.db").exists()
    other = SessionStore(tmp_path / "elsewhere.db")
    assert [m["content"] for m in other.load(agent.session_id)] == ["hello", "stored elsewhere"]
    other.close()

    typo = make_agent(sessions_plugin, Elsewhere(), script=["x"], config={"sessions": {"store": "elsewher"}})
    with pytest.raises(StoreError, match="'elsewher', which no enabled plugin registers .*did you mean 'elsewhere'"):
        sessions_plugin.get_store(typo.config, typo.host)


def test_postgres_makes_its_schema_once_and_refuses_a_newer_one(postgres_url):
    import psycopg

    from plugins.sessions_postgres.store import SCHEMA_VERSION, PostgresStore

    stores = [PostgresStore(postgres_url) for _ in range(4)]
    threads = [threading.Thread(target=s.append, args=(f"s{i}", [{"role": "user", "content": "hi"}]))
               for i, s in enumerate(stores)]  # four first connections at once: one makes the tables
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r["id"] for r in stores[0].list_sessions()) == ["s0", "s1", "s2", "s3"]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM hermes_schema").fetchall() == [(SCHEMA_VERSION,)]
        conn.execute("INSERT INTO hermes_schema (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    for s in stores:
        s.close()
    newer = PostgresStore(postgres_url)
    with pytest.raises(StoreError, match=f"made by a newer hermes \\(schema {SCHEMA_VERSION + 1}"):
        newer.load("s0")
    with pytest.raises(StoreError, match="made by a newer hermes"):  # every time, not only the first
        newer.load("s0")
    newer.close()


def _drop_connections(url, store) -> None:
    """What a server restart does to one process: its connections end."""
    import psycopg

    pids = [c.info.backend_pid for c in (store._conn, store._locks) if c is not None]
    with psycopg.connect(url, autocommit=True) as conn:
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_postgres_takes_its_writer_locks_again_after_the_server_dropped_them(postgres_url):
    from plugins.sessions_postgres.store import PostgresStore

    mine, other = PostgresStore(postgres_url), PostgresStore(postgres_url)
    assert mine.claim("kept") is None and mine.claim("taken") is None
    mine.append("kept", [{"role": "user", "content": "one"}])
    _drop_connections(postgres_url, mine)
    assert other.claim("taken") is None  # its lock went with the connection: another process may take it now
    with pytest.raises(StoreError, match="failed: terminating connection"):  # the write that finds it gone: one line
        mine.append("kept", [{"role": "user", "content": "lost"}])
    with pytest.raises(StoreError, match="another process writes session taken now; this one stops writing it"):
        mine.append("kept", [{"role": "user", "content": "lost"}])  # reconnecting, it learns it lost "taken"
    mine.append("kept", [{"role": "user", "content": "two"}])
    assert [m["content"] for m in mine.load("kept")] == ["one", "two"]
    assert other.claim("kept").startswith("session kept is being written by another hermes process")
    mine.close()
    other.close()


def test_prunable_takes_old_conversations_whole_and_keeps_any_still_in_use(any_store, monkeypatch):
    """`hermes sessions prune`'s choice: sessions last active before the cut, oldest first; sessions linked by
    parent_session_id (a compression's continuation, a subagent's) go together, or stay together."""
    import time

    clock = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    said = [{"role": "user", "content": "hi"}]

    def started(session_id, platform="cli", parent=None, reason=""):
        any_store.ensure_session(session_id, platform=platform, parent_session_id=parent, reason=reason)
        any_store.append(session_id, said)

    started("a"), started("a2", parent="a", reason="compression"), started("c", platform="run")
    started("p"), started("k", parent="p", reason="delegation"), started("b")
    clock[0] += 30 * 86400  # a month later b goes on after a compression, and r starts
    started("b2", parent="b", reason="compression"), started("r")
    before = clock[0] - 86400
    assert sorted(row["id"] for row in any_store.prunable(before)) == ["a", "a2", "c", "k", "p"]
    assert [row["id"] for row in any_store.prunable(before, platform="run")] == ["c"]
    assert any_store.prunable(1.0) == []
    for row in any_store.prunable(before):
        assert any_store.delete(row["id"])
    assert sorted(row["id"] for row in any_store.list_sessions()) == ["b", "b2", "r"]
    assert any_store.load("a") is None and any_store.load("b") == said
