"""Built-in plugin: the SQLite session store.

Persists every session's messages as they happen (``append_messages``),
answers ``load_session`` / ``latest_session`` for ``--resume`` and
``--continue``, records turn ends and token counts, offers the
``session_search`` tool and the ``hermes sessions`` commands.

The store module (and sqlite3) is imported on first use, and the database is
opened on first use, so loading this plugin costs nothing.
"""

from __future__ import annotations

import threading
from pathlib import Path

from kernel import hookimpl

_stores: dict = {}
_stores_lock = threading.Lock()


def get_store(data_dir):
    """The shared store for a data folder (one per process and folder)."""
    from plugins.sessions.store import SessionStore

    path = Path(data_dir).resolve()
    with _stores_lock:
        store = _stores.get(path)
        if store is None:
            store = _stores[path] = SessionStore.for_data_dir(path)
        return store


def close_stores() -> None:
    """Close every open store (tests; a forked worker)."""
    with _stores_lock:
        for store in _stores.values():
            store.close()
        _stores.clear()


def _store_for(agent=None, config=None):
    cfg = config if config is not None else getattr(agent, "config", None)
    if cfg is not None:
        return get_store(cfg.data_dir)
    from kernel.config import data_dir

    return get_store(data_dir())


# --------------------------------------------------------------------------
# Persistence hooks


@hookimpl
def on_session_start(session_id, model, platform, provider, parent_session_id, reason, agent):
    _store_for(agent).ensure_session(
        session_id,
        model=model or "",
        provider=provider or "",
        platform=platform or "",
        parent_session_id=parent_session_id,
        reason=reason or "",
    )


@hookimpl
def append_messages(session_id, messages, agent):
    if messages:
        _store_for(agent).append(session_id, list(messages))


@hookimpl
def load_session(session_id, agent):
    return _store_for(agent).load(session_id)


@hookimpl
def resolve_session(session_id, agent):
    from plugins.sessions.store import UnknownSession

    try:
        return _store_for(agent).resolve_id(session_id)
    except UnknownSession:
        return None  # unknown or ambiguous: the command line says so


@hookimpl
def latest_session(platform, agent):
    return _store_for(agent).latest_session_id(platform or None)


@hookimpl
def on_session_end(session_id, exit_reason, usage, agent):
    _store_for(agent).end_session(session_id, exit_reason or "", usage or {})


# --------------------------------------------------------------------------
# The session_search tool and the command line


@hookimpl
def register_tools(register, config):
    from plugins.sessions.tool import session_search_tool

    register(session_search_tool())


def _slash_title(raw_args: str, agent) -> str:
    from plugins.sessions.store import StoreError

    if not raw_args.strip():
        return "usage: /title TEXT  (names this session in `hermes sessions list`)"
    store = _store_for(agent)
    try:
        store.ensure_session(agent.session_id, platform=getattr(agent, "platform", "") or "")
        store.set_title(agent.session_id, raw_args)
    except StoreError as exc:
        return f"cannot set the title: {exc}"
    return f"Session {agent.session_id} is now titled: {store.get_session(agent.session_id)['title']}"


def _slash_search(raw_args: str, agent) -> str:
    from plugins.sessions.store import StoreError

    try:
        hits = _store_for(agent).search(raw_args, 10)
    except (StoreError, ValueError) as exc:
        return f"cannot search: {exc}"
    if not hits:
        return "No matches."
    return "\n".join(f"{h['session_id']}  [{h['seq']}] {h['role']}: {' '.join(h['snippet'].split())[:100]}"
                     for h in hits)


@hookimpl
def register_slash_commands(register):
    register("title", _slash_title, description="name the current session")
    register("search", _slash_search, description="search past sessions: /search WORDS")


@hookimpl
def register_commands(cli, config):
    from plugins.sessions.commands import sessions_group

    cli.add_command(sessions_group(config))
