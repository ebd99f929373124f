"""The ``session_search`` tool: full-text search over past sessions."""

from __future__ import annotations

import json
import time

from kernel.types import Tool, ToolError

MAX_LIMIT = 50

PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words to look for; a message matches when it contains all of them.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": "How many matching messages to return (default 10).",
        },
        "role": {
            "type": "string",
            "enum": ["user", "assistant", "tool", "system"],
            "description": "Only messages with this role.",
        },
        "session_id": {"type": "string", "description": "Only this session."},
    },
    "required": ["query"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Search the messages of past conversations (not the current one) by words. "
    "Returns the best matches with their session id, date, role and a snippet "
    "with the matched words in [brackets]."
)


def _when(ts) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts)) if ts else ""


def search_handler(args: dict, ctx) -> str:
    from plugins.sessions import _store_for
    from plugins.sessions.base import StoreError

    if not isinstance(args, dict):
        raise ToolError("arguments must be an object with a 'query' string")
    unknown = sorted(set(args) - set(PARAMETERS["properties"]))
    if unknown:
        raise ToolError(f"unknown argument(s): {', '.join(unknown)}")
    query = args.get("query")
    if not isinstance(query, str) or not query.split():
        raise ToolError("'query' must be a non-empty string")
    limit = args.get("limit", 10)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ToolError(f"'limit' must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    role = args.get("role")
    if role is not None and role not in PARAMETERS["properties"]["role"]["enum"]:
        raise ToolError(f"'role' must be one of user, assistant, tool, system, got {role!r}")
    session_id = args.get("session_id")
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise ToolError("'session_id' must be a non-empty string")

    agent = getattr(ctx, "agent", None)
    current = getattr(ctx, "session_id", None) or getattr(agent, "session_id", None)
    try:
        hits = _store_for(agent).search(
            query,
            limit,
            session_id=session_id,
            exclude_session=None if session_id else current,
            role=role,
        )
    except (StoreError, ValueError) as exc:
        raise ToolError(str(exc)) from None
    results = [
        {
            "session_id": h["session_id"],
            "session_title": h["title"],
            "session_started": _when(h["started_at"]),
            "message_index": h["seq"],
            "role": h["role"],
            "when": _when(h["created_at"]),
            "snippet": h["snippet"],
        }
        for h in hits
    ]
    return json.dumps({"query": query, "count": len(results), "results": results}, ensure_ascii=False)


def session_search_tool() -> Tool:
    return Tool(
        name="session_search",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        handler=search_handler,
        toolset="session_search",
        parallel_safe=True,
    )
