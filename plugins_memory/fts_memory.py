"""``fts-memory``: a memory backend of short facts in SQLite with FTS5.

Select it with ``memory.provider: fts``. Facts live in
``<data_dir>/memories/facts.db``. The model saves facts with ``memory_save``
and looks them up with ``memory_search``; before every turn ``prefetch``
finds the facts that share words with the user's message. Writes of the
built-in ``memory`` tool (``add``/``replace``) are indexed too, so they are
searchable.

Each call opens its own short-lived connection: the manager calls the backend
from several threads (prefetch thread, sync worker, tool pool), and SQLite
connections are cheap to open and not meant to be shared across threads.
"""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path
from typing import Any, Optional

from kernel import hookimpl
from kernel.types import Tool, ToolError

from plugins_memory.base import MemoryBackend, backend_proxy_tools

NAME = "fts"
requires_plugins = ["memory"]  # a backend of its memory_backends: without it, not loaded (and listed so)
MAX_FACT_CHARS = 2000
PREFETCH_LIMIT = 5

# words too common to say anything about relevance
_STOP = frozenset(
    """a an and are as at be but by can could did do does for from had has have he her his how i if in
    into is it its me my no not of on or our she so that the their them then there these they this to
    us was we were what when where which who why will with would you your""".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    content, tags, content='facts', content_rowid='id'
);
CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content, tags) VALUES ('delete', old.id, old.content, old.tags);
END;
"""


def fts_query(text: str, *, max_terms: int = 24) -> str:
    """An FTS5 query matching any meaningful word of ``text``.

    Every term is a double-quoted string (inner quotes doubled), so FTS5
    operators and punctuation in user text (``AND``, ``*``, ``"``, ``:``,
    ``-``) are matched literally and can never be a syntax error. Returns
    ``""`` when ``text`` has no usable word.
    """
    terms: list[str] = []
    for word in _WORD.findall(text or ""):
        low = word.lower()
        if low in _STOP or (len(low) < 2 and not low.isdigit()) or low in terms:
            continue
        terms.append(low)
        if len(terms) >= max_terms:
            break
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def fts5_available() -> bool:
    try:
        con = sqlite3.connect(":memory:")
        try:
            con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        finally:
            con.close()
        return True
    except sqlite3.Error:
        return False


class FtsMemory(MemoryBackend):
    """Facts in SQLite FTS5, searched by the words of the user's message."""

    name = NAME

    def __init__(self, config: Any = None, *, path: Optional[Path] = None):
        if path is None:
            path = Path(config.data_dir) / "memories" / "facts.db"
        self.path = Path(path)
        self.session_id = ""
        self._ready = False

    # -- storage
    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(str(self.path), timeout=10)
        if not self._ready:
            try:
                con.executescript(_SCHEMA)
            except BaseException:
                con.close()
                raise
            self._ready = True
        return con

    def _write(self, sql: str, params: tuple) -> sqlite3.Cursor:
        con = self._connect()
        try:
            with con:  # one transaction, committed on success
                return con.execute(sql, params)
        finally:
            con.close()

    def save(self, content: str, tags: str = "") -> int:
        cur = self._write(
            "INSERT INTO facts(content, tags, session_id, created_at) VALUES (?, ?, ?, ?)",
            (content, tags, self.session_id, time.time()),
        )
        return int(cur.lastrowid)

    def forget(self, fact_id: int) -> bool:
        return self._write("DELETE FROM facts WHERE id = ?", (fact_id,)).rowcount > 0

    def search(self, text: str, limit: int = PREFETCH_LIMIT) -> list[dict]:
        query = fts_query(text)
        if not query:
            return []
        con = self._connect()
        try:
            rows = con.execute(
                "SELECT f.id, f.content, f.tags, f.created_at FROM facts_fts "
                "JOIN facts f ON f.id = facts_fts.rowid "
                "WHERE facts_fts MATCH ? ORDER BY bm25(facts_fts) LIMIT ?",
                (query, int(limit)),
            ).fetchall()
        finally:
            con.close()
        return [{"id": r[0], "content": r[1], "tags": r[2], "saved_at": r[3]} for r in rows]

    def count(self) -> int:
        con = self._connect()
        try:
            return int(con.execute("SELECT count(*) FROM facts").fetchone()[0])
        finally:
            con.close()

    # -- lifecycle
    def is_available(self) -> bool:
        return fts5_available()

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.session_id = session_id or ""
        try:
            self._connect().close()  # create the file and schema now: errors show at start
        except sqlite3.DatabaseError as exc:
            raise RuntimeError(
                f"{self.path}: {exc}. The file was left as it is; move it aside to start a new fact store"
            ) from None

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", **kwargs: Any) -> None:
        self.session_id = new_session_id or ""

    def system_prompt_block(self) -> str:
        return (
            "# Long-term facts\n"
            "You have a searchable store of facts from earlier sessions. Facts relevant to the "
            "user's message are shown in <memory-context>. Use `memory_search` to look up more and "
            "`memory_save` to keep a durable fact (one fact per call, self-contained)."
        )

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        hits = self.search(query, PREFETCH_LIMIT)
        if not hits:
            return ""
        return "Saved facts that may be relevant:\n" + "\n".join(f"- {h['content']}" for h in hits)

    def on_memory_write(self, action: str, target: str, content: str, metadata: Optional[dict] = None) -> None:
        tag = f"memory-tool:{target}"
        old_text = (metadata or {}).get("old_text")
        if action == "remove" and not old_text:
            old_text = content  # the manager passes the removed text as content too
        if action in ("replace", "remove") and isinstance(old_text, str) and old_text.strip():
            # what the user had removed from memory must stop being recalled from here too
            self._write("DELETE FROM facts WHERE tags = ? AND instr(content, ?) > 0", (tag, old_text.strip()))
        if action in ("add", "replace") and isinstance(content, str) and content.strip():
            self.save(content.strip()[:MAX_FACT_CHARS], tags=tag)

    # -- tools
    def _tool_save(self, args: dict, ctx: Any = None) -> dict:
        content = args.get("content") if isinstance(args, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise ToolError("'content' must be a non-empty string: the fact to remember")
        content = content.strip()
        if len(content) > MAX_FACT_CHARS:
            raise ToolError(f"a fact holds at most {MAX_FACT_CHARS} chars (got {len(content)}); save it shorter or split it")
        tags = args.get("tags", "")
        if isinstance(tags, list):
            tags = " ".join(str(t) for t in tags)
        if not isinstance(tags, str):
            raise ToolError("'tags' must be a string of words (or a list of words)")
        return {"saved": True, "id": self.save(content, tags.strip())}

    def _tool_search(self, args: dict, ctx: Any = None) -> dict:
        query = args.get("query") if isinstance(args, dict) else None
        if not isinstance(query, str) or not query.strip():
            raise ToolError("'query' must be a non-empty string of words to look for")
        limit = args.get("limit", 10)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 50:
            raise ToolError("'limit' must be an integer from 1 to 50")
        if not fts_query(query):
            raise ToolError("the query has no searchable word (only stop words or punctuation)")
        hits = self.search(query, limit)
        return {"query": query, "count": len(hits), "results": hits}

    def _tool_forget(self, args: dict, ctx: Any = None) -> dict:
        fact_id = args.get("id") if isinstance(args, dict) else None
        if not isinstance(fact_id, int) or isinstance(fact_id, bool):
            raise ToolError("'id' must be the integer id of a fact (as returned by memory_search)")
        if not self.forget(fact_id):
            raise ToolError(f"no fact with id {fact_id}")
        return {"forgotten": True, "id": fact_id}

    def tools(self) -> list[Tool]:
        return [
            Tool(
                name="memory_save",
                description="Save one durable fact to long-term memory (searchable in later sessions).",
                parameters={
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "the fact, self-contained"},
                        "tags": {"type": "string", "description": "optional words to find it by"},
                    },
                    "required": ["content"],
                },
                handler=self._tool_save,
                toolset="memory",
            ),
            Tool(
                name="memory_search",
                description="Search long-term memory for facts matching any of the given words.",
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "words to look for"},
                        "limit": {"type": "integer", "description": "at most this many facts (1-50, default 10)"},
                    },
                    "required": ["query"],
                },
                handler=self._tool_search,
                toolset="memory",
                parallel_safe=True,
            ),
            Tool(
                name="memory_forget",
                description="Delete a fact from long-term memory by its id (from memory_search).",
                parameters={
                    "type": "object",
                    "properties": {"id": {"type": "integer", "description": "the fact's id"}},
                    "required": ["id"],
                },
                handler=self._tool_forget,
                toolset="memory",
            ),
        ]


@hookimpl
def register_memory_backends(register, config):
    register(NAME, FtsMemory, description="facts in SQLite FTS5, recalled by the words of each message")


@hookimpl
def register_tools(register, config):
    # Only when selected: the proxies find the agent's backend at call time.
    if config.get("memory.provider") != NAME:
        return
    prototype = FtsMemory(path=Path("facts.db"))  # only its tool schemas are read; it opens nothing
    for tool in backend_proxy_tools(NAME, prototype.tools()):
        register(tool)
