"""``/api/sessions``: the stored sessions, as hermes-agent's API server shows them.

They are read from the store ``sessions.store`` names (SQLite by default, or PostgreSQL), through
:func:`plugins.sessions.get_store`: every store lists, renames and deletes, which the session hooks
(``load_session``, ``append_messages``) do not. The stores come with the ``sessions-sqlite`` plugin (the
PostgreSQL one extends it): without it, 503.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

STORE_PLUGIN = "sessions-sqlite"


def _store(server) -> Any:
    record = server.host.record(STORE_PLUGIN)
    if record is None or record.status != "enabled":
        return None
    from plugins.sessions import get_store

    return get_store(server.host.config, server.host)


def _session(row: dict) -> dict:
    return {"id": row["id"], "object": "hermes.session", "title": row.get("title"), "preview": row.get("preview"),
            "platform": row.get("platform"), "model": row.get("model"), "started_at": row.get("started_at"),
            "updated_at": row.get("updated_at"), "ended_at": row.get("ended_at"),
            "end_reason": row.get("end_reason"), "message_count": row.get("message_count"),
            "parent_session_id": row.get("parent_session_id"), "continued_in": row.get("continued_in")}


async def _call(server, request: Request, work):
    """``work(store, session_id)`` on a thread; 503 without a store, 404 for an unknown session."""
    from plugins.serve.app import error

    store = _store(server)
    if store is None:
        return error(503, "no session store that lists sessions is enabled (sessions-sqlite)", kind="server_error",
                     code="session_db_unavailable")
    session_id = request.path_params.get("session_id")
    if session_id is not None:
        try:
            session_id = await asyncio.to_thread(store.resolve_id, session_id)
        except Exception as exc:  # noqa: BLE001 - unknown or ambiguous: the store says which
            return error(404, str(exc), code="session_not_found")
    return await asyncio.to_thread(work, store, session_id)


def _limit(request: Request, name: str, default: int, most: int) -> int:
    value = request.query_params.get(name, "")
    return min(most, int(value)) if value.isdigit() else default


async def list_sessions(server, request: Request) -> Response:
    limit, offset = _limit(request, "limit", 50, 200), _limit(request, "offset", 0, 1_000_000)
    platform = request.query_params.get("source") or request.query_params.get("platform") or None

    def work(store, _):
        rows = store.list_sessions(limit=limit, offset=offset, platform=platform)
        return JSONResponse({"object": "list", "data": [_session(r) for r in rows], "limit": limit,
                             "offset": offset, "has_more": len(rows) == limit})
    return await _call(server, request, work)


async def get_session(server, request: Request) -> Response:
    def work(store, session_id):
        return JSONResponse({"object": "hermes.session", "session": _session(store.get_session(session_id))})
    return await _call(server, request, work)


async def session_messages(server, request: Request) -> Response:
    def work(store, session_id):
        return JSONResponse({"object": "list", "session_id": session_id, "data": store.load(session_id) or []})
    return await _call(server, request, work)


async def patch_session(server, request: Request) -> Response:
    from plugins.serve.app import error

    body = await server.body(request)
    if isinstance(body, Response):
        return body
    unknown = sorted(set(body) - {"title"})
    if unknown or not isinstance(body.get("title"), str):
        return error(400, f"only 'title' (a string) can be changed{'; not ' + ', '.join(unknown) if unknown else ''}",
                     code="unsupported_session_field")

    def work(store, session_id):
        from plugins.sessions.base import StoreError

        try:
            store.set_title(session_id, body["title"])
        except StoreError as exc:
            return error(400, str(exc), param="title", code="invalid_title")
        return JSONResponse({"object": "hermes.session", "session": _session(store.get_session(session_id))})
    return await _call(server, request, work)


async def delete_session(server, request: Request) -> Response:
    def work(store, session_id):
        return JSONResponse({"object": "hermes.session.deleted", "id": session_id,
                             "deleted": bool(store.delete(session_id))})
    return await _call(server, request, work)


def _new_id() -> str:
    import time
    import uuid

    return f"api_{int(time.time())}_{uuid.uuid4().hex[:8]}"


async def create_session(server, request: Request) -> Response:
    from plugins.serve.app import error

    body = await server.body(request)
    if isinstance(body, Response):
        return body
    session_id = str(body.get("id") or body.get("session_id") or _new_id()).strip()
    if not session_id or len(session_id) > 256 or any(c in session_id for c in "\r\n\x00/\\"):
        return error(400, "not a session id", param="id", code="invalid_session_id")

    def work(store, _):
        if not store.ensure_session(session_id, model=str(body.get("model") or ""), platform="api"):
            return error(409, f"session '{session_id}' exists", code="session_exists")
        if isinstance(body.get("title"), str) and body["title"].strip():
            store.set_title(session_id, body["title"])
        return JSONResponse({"object": "hermes.session", "session": _session(store.get_session(session_id))},
                            status_code=201)
    return await _call(server, request, work)


async def fork_session(server, request: Request) -> Response:
    from plugins.serve.app import error

    body = await server.body(request)
    if isinstance(body, Response):
        return body
    fork_id = str(body.get("id") or _new_id()).strip()

    def work(store, session_id):
        meta = store.get_session(session_id)
        if store.get_session(fork_id) is not None:
            return error(409, f"session '{fork_id}' exists", code="session_exists")
        store.ensure_session(fork_id, model=meta.get("model") or "", provider=meta.get("provider") or "",
                             platform=meta.get("platform") or "api", parent_session_id=session_id, reason="fork")
        store.append(fork_id, store.load(session_id) or [])
        if isinstance(body.get("title"), str) and body["title"].strip():
            store.set_title(fork_id, body["title"])
        return JSONResponse({"object": "hermes.session", "session": _session(store.get_session(fork_id))},
                            status_code=201)
    return await _call(server, request, work)


async def chat(server, request: Request, stream: bool = False) -> Response:
    """One turn on a stored session (its history, stored after it as any turn is)."""
    from plugins.serve.app import error
    from plugins.serve.turns import TurnRequest

    body = await server.body(request)
    if isinstance(body, Response):
        return body
    message = body.get("message", body.get("input"))
    if isinstance(message, dict):
        message = message.get("content")
    if not isinstance(message, str) or not message.strip():
        return error(400, "'message' must be the user's text", param="message")
    system = body.get("system_message", body.get("instructions"))
    if system is not None and not isinstance(system, str):
        return error(400, "'system_message' must be a string", param="system_message")
    found = await _call(server, request, lambda store, session_id: session_id)
    if isinstance(found, Response):
        return found
    turn = TurnRequest(user_message=message, system_message=system, session_id=found, stream=stream)
    return await server.session_turn(request, turn)
