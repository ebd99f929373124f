"""Message dicts <-> table rows, and user text -> a safe FTS5 query."""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Optional

# Keys of a message dict that have their own column. Anything else (provider
# specific assistant keys, a tool message's "name", ...) goes to ``extra``.
CORE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "reasoning")


def _dumps(value: Any) -> str:
    # default=str: a stray non-JSON value (a datetime, an SDK object) is
    # stored as its text rather than losing the whole batch.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _text_of(content: Any) -> Optional[str]:
    """The searchable text of a message content (str, or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(parts) if parts else None
    return None


def encode_message(msg: Any, index: int = 0) -> tuple:
    """A message dict -> (role, content, content_json, tool_calls, tool_call_id, reasoning, extra)."""
    if not isinstance(msg, dict) or not isinstance(msg.get("role"), str) or not msg["role"]:
        raise ValueError(f"message {index}: expected a dict with a non-empty string 'role', got {msg!r:.80}")
    extra = {k: v for k, v in msg.items() if k not in CORE_KEYS}
    content = content_json = None
    if "content" in msg:
        if isinstance(msg["content"], str):
            content = msg["content"]
        else:
            content_json = _dumps(msg["content"])
            content = _text_of(msg["content"])
    # A core key whose value has an unexpected type is kept verbatim in extra
    # so the round trip stays exact.
    tool_calls = tool_call_id = reasoning = None
    if "tool_calls" in msg:
        if isinstance(msg["tool_calls"], list):
            tool_calls = _dumps(msg["tool_calls"])
        else:
            extra["tool_calls"] = msg["tool_calls"]
    for key in ("tool_call_id", "reasoning"):
        if key in msg:
            if isinstance(msg[key], str):
                if key == "tool_call_id":
                    tool_call_id = msg[key]
                else:
                    reasoning = msg[key]
            else:
                extra[key] = msg[key]
    return (
        msg["role"],
        content,
        content_json,
        tool_calls,
        tool_call_id,
        reasoning,
        _dumps(extra) if extra else None,
    )


_BROKEN = object()
UNREADABLE_CALLS = "[hermes: this message's tool calls could not be read from the session store]"


def decode_message(row: sqlite3.Row) -> dict:
    """A stored row as a message. A damaged JSON column never makes a session
    impossible to load: content falls back to its text, unreadable tool calls
    keep what can be salvaged (id and name, arguments replaced by the schema's
    marker when the history is repaired), an unreadable ``extra`` is dropped."""
    msg: dict = {"role": row["role"]}
    if row["content_json"] is not None:
        content = _json_or(row["content_json"], _BROKEN)
        msg["content"] = (row["content"] if row["content"] is not None else row["content_json"]) \
            if content is _BROKEN else content
    elif row["content"] is not None:
        msg["content"] = row["content"]
    if row["tool_calls"] is not None:
        calls = _json_or(row["tool_calls"], _BROKEN)
        if not isinstance(calls, list):
            calls = _salvage_calls(row["tool_calls"])
            if not calls:
                msg["content"] = ((msg.get("content") or "") + "\n" + UNREADABLE_CALLS).strip()
        msg["tool_calls"] = calls
    if row["tool_call_id"] is not None:
        msg["tool_call_id"] = row["tool_call_id"]
    if row["reasoning"] is not None:
        msg["reasoning"] = row["reasoning"]
    extra = _json_or(row["extra"], _BROKEN)
    if isinstance(extra, dict):
        msg.update(extra)
    return msg


def _json_or(text, default):
    if text is None:
        return default
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return default


def _salvage_calls(text: str) -> list:
    """Tool calls from a damaged JSON column: each ``"id"`` with the ``"name"``
    that follows it; their arguments are lost (repair marks them)."""
    import re

    calls = []
    for match in re.finditer(r'"id"\s*:\s*"([^"]+)".*?"name"\s*:\s*"([^"]+)"', text or "", re.S):
        calls.append({"id": match.group(1), "type": "function",
                      "function": {"name": match.group(2), "arguments": None}})
    return calls


def fts_query(text: str) -> str:
    """User text -> an FTS5 query that matches all its words, with every word
    quoted so FTS syntax in the input (``"``, ``AND``, ``*``, ``:``) is literal."""
    terms = [t for t in str(text).split() if t.strip('"')]
    if not terms:
        raise ValueError("the search query is empty")
    return " ".join('"' + t.replace('"', '""') + '"' for t in terms)
