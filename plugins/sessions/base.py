"""What every session store shares, whichever database it keeps (SQLite here, PostgreSQL in
:mod:`plugins.sessions_postgres`): the errors, the session's fields, the checks of what a caller
gives, and :class:`Store`, the answers built on a store's own."""

from __future__ import annotations

from typing import Any, Optional


class StoreError(Exception):
    """A session store problem, already phrased for the user (one line)."""


class UnknownSession(StoreError):
    """No session with that id (or id prefix)."""


USAGE_COLUMNS = {  # the normalized usage's keys -> the session's totals' columns
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_tokens": "cache_read_tokens",
    "cache_write_tokens": "cache_write_tokens",
    "reasoning_tokens": "reasoning_tokens",
    "request_count": "api_call_count",
}

SESSION_FIELDS = (
    "id", "parent_session_id", "start_reason", "model", "provider", "platform", "title", "started_at", "updated_at",
    "ended_at", "end_reason", "message_count", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "reasoning_tokens", "api_call_count",
)

def imported_fields(meta: dict, rows: list, now: float) -> dict:
    """The session row of an imported session (``import_session``): the fields ``meta`` has, its start and last
    activity from its rows' times when not given, and the count of its rows."""
    fields = {key: meta[key] for key in SESSION_FIELDS if meta.get(key) is not None}
    times = [row["created_at"] for row in rows if row.get("created_at")]
    fields.setdefault("started_at", min(times, default=now))
    fields.setdefault("updated_at", max(times, default=fields["started_at"]))
    fields["message_count"] = len(rows)
    return fields


def ambiguous(prefix: str, ids: list) -> str:
    """The one line for an id prefix that starts several sessions' ids (``ids``: some of them)."""
    return f"session id {str(prefix).strip()!r} is ambiguous (matches {', '.join(ids[:2])}, ...)"


def stored_start(text: Optional[str]) -> dict:
    """How a session was started, from the JSON its store keeps: strings (``model``, ``provider`` ...) and
    ``toolsets`` (a list of names); ``{}`` when unknown or unreadable (an older session, a damaged row)."""
    import json

    try:
        started = json.loads(text) if text else {}
    except ValueError:
        return {}
    if not isinstance(started, dict):
        return {}
    kept = {key: value for key, value in started.items() if isinstance(value, str) and value and key != "toolsets"}
    names = started.get("toolsets")
    if isinstance(names, list) and all(isinstance(name, str) for name in names):
        kept["toolsets"] = names
    return kept


def usage_adds(usage: Optional[dict]) -> dict:
    """column -> what a turn's ``usage`` (the normalized shape) adds to the session's totals."""
    return {column: int(value) for key, column in USAGE_COLUMNS.items()
            if isinstance(value := (usage or {}).get(key), (int, float)) and not isinstance(value, bool) and value > 0}


def clean_title(title: Any) -> str:
    title = " ".join(str(title).split())
    if not title:
        raise StoreError("the title is empty")
    if len(title) > 200:
        raise StoreError(f"the title is too long ({len(title)} characters, at most 200)")
    return title


def check_id(session_id: Any) -> str:
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValueError(f"a session id must be a non-empty string, got {session_id!r}")
    return session_id


class Store:
    """What every store builds on its own answers (``matching_ids``, ``list_sessions``): the same for all."""

    def resolve_id(self, prefix: str) -> str:
        """An exact id, or a unique prefix of one, or a title (for the command line)."""
        ids = self.matching_ids(prefix) or [found for found in [self.titled_id(prefix)] if found]
        if len(ids) == 1:
            return ids[0]
        if ids:
            raise UnknownSession(ambiguous(prefix, ids))
        prefix = str(prefix).strip()
        raise UnknownSession(f"no session with id {prefix!r}" if prefix else "no session id given")

    def titled_id(self, title: str, page: int = 200) -> Optional[str]:
        """The session a title names, as hermes-agent resumes one by its title: the most recently active of those so
        titled (case and spacing aside), followed to where it went on after a compression or an undo."""
        wanted = " ".join(str(title).split()).casefold()
        found, offset = None, 0
        while wanted and found is None:
            rows = self.list_sessions(limit=page, offset=offset, include_children=False)
            found = next((r["id"] for r in rows if " ".join((r.get("title") or "").split()).casefold() == wanted), None)
            if len(rows) < page:
                break
            offset += page
        for _ in range(50 if found else 0):
            went_on = (self.get_session(found) or {}).get("continued_in")
            if not went_on:
                break
            found = went_on
        return found

    def latest_session_id(self, platform: Optional[str] = None) -> Optional[str]:
        """The most recently active top-level session (a delegated child is
        never "the last conversation"; a continuation after compression or an
        undo is)."""
        rows = self.list_sessions(limit=1, platform=platform, include_children=False)
        return rows[0]["id"] if rows else None

    def prunable(self, before: float, platform: Optional[str] = None) -> list:
        """The sessions ``hermes sessions prune`` deletes: last active before ``before`` (seconds since the
        epoch), of ``platform`` if given, oldest first. A conversation goes whole or not at all: sessions linked
        by ``parent_session_id`` (a continuation after compression or an undo, a subagent's) are kept together
        when one of them is."""
        rows, page = [], 1000
        while batch := self.list_sessions(limit=page, offset=len(rows)):
            rows += batch
            if len(batch) < page:
                break
        linked: dict = {}
        for row in rows:
            if row["parent_session_id"]:
                linked.setdefault(row["id"], []).append(row["parent_session_id"])
                linked.setdefault(row["parent_session_id"], []).append(row["id"])
        kept = {row["id"] for row in rows if (row["updated_at"] or 0) >= before
                or (platform and row["platform"] != platform)}
        todo = list(kept)
        while todo:
            for other in linked.get(todo.pop(), ()):
                if other not in kept:
                    kept.add(other)
                    todo.append(other)
        return [row for row in reversed(rows) if row["id"] not in kept]

    def delete_unclaimed(self, ids: list) -> tuple:
        """Delete the sessions of ``ids`` no other process writes, then compact the file when the store can.
        ``(deleted ids, ids in use, sizes)``: sizes are the file's before and after, or why it was not
        compacted, or ``None`` (nothing to compact)."""
        deleted, busy = [], []
        for session_id in ids:
            if self.claim(session_id):  # a run writes it (resumed since it was listed): kept
                busy.append(session_id)
                continue
            if self.delete(session_id):
                deleted.append(session_id)
            self.release(session_id)  # a server's store holds a lock per claim: not thousands at once
        try:  # SQLite keeps deleted rows' space for later rows: the file shrinks only when compacted
            sizes = self.compact() if deleted and hasattr(self, "compact") else None
        except StoreError as exc:
            sizes = f"{exc}: the file keeps its size for now (later sessions reuse the space)"
        return deleted, busy, sizes
