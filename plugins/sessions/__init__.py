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
    store = _stores.get(data_dir)  # as given: every append asks, and resolving a path costs a stat per part
    if store is not None:
        return store
    from plugins.sessions.store import SessionStore

    path = Path(data_dir).resolve()
    with _stores_lock:
        store = _stores.get(path)
        if store is None:
            store = _stores[path] = SessionStore.for_data_dir(path)
        if Path(data_dir).is_absolute():  # a relative one depends on the folder we are in
            _stores[data_dir] = store
        return store


def close_stores() -> None:
    """Close every open store (tests; a forked worker)."""
    with _stores_lock:
        for store in set(_stores.values()):
            store.close()
        _stores.clear()


def _store_for(agent=None, config=None):
    cfg = config if config is not None else getattr(agent, "config", None)
    if cfg is not None:
        return get_store(cfg.data_dir)
    from hermes.host.paths import data_dir

    return get_store(data_dir())


# --------------------------------------------------------------------------
# Persistence hooks


# --------------------------------------------------------------------------
# One writer per session: an flock on data_dir/locks/<id>.lock, held by the
# process writing the session until it ends (a killed process drops it).

_claims: dict = {}  # (data dir, session id) -> the open lock file
_claims_lock = threading.Lock()


def _claim(agent, session_id: str):
    """None if this process now holds the writer lock of ``session_id``, else why not."""
    return claim_in(Path(_store_for(agent).path).parent / "locks", session_id)


def claim_in(folder: Path, session_id: str):
    """:func:`_claim` in the locks folder of a store (``hermes sessions delete`` takes it too)."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: no cross-process guard
        return None
    import os

    key = (folder, session_id)
    with _claims_lock:
        if key in _claims:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)
        fh = os.fdopen(os.open(folder / f"{safe}.lock", os.O_RDWR | os.O_CREAT, 0o644), "r+", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid = _owner(fh)
            fh.close()
            owner = f" (pid {pid})" if pid else ""
            return (f"session {session_id} is being written by another hermes process{owner}; "
                    "resume it when that one has finished")
        fh.seek(0)
        fh.write(str(os.getpid()))  # over the old pid, then cut: a reader never sees it empty
        fh.truncate()
        fh.flush()
        _claims[key] = fh
    return None


def _owner(fh) -> str:
    """The pid in a lock file (the owner writes it just after locking: wait a moment for it)."""
    import time

    for _ in range(20):
        fh.seek(0)
        pid = fh.read().strip()
        if pid.isdigit():
            return pid
        time.sleep(0.01)
    return ""


def _release(agent, session_id: str) -> None:
    folder = Path(_store_for(agent).path).parent / "locks"
    with _claims_lock:
        fh = _claims.pop((folder, session_id), None)
    if fh is not None:
        fh.close()  # closing the file drops the lock


@hookimpl
def claim_session(session_id, agent):
    return _claim(agent, session_id)


@hookimpl
def on_session_start(session_id, model, platform, provider, parent_session_id, reason, agent):
    _claim(agent, session_id)  # a new session is this process's to write too
    _store_for(agent).ensure_session(
        session_id,
        model=model or "",
        provider=provider or "",
        platform=platform or "",
        parent_session_id=parent_session_id,
        reason=reason or "",
        provider_config=started_with(agent),
    )


STARTED_WITH = ("model", "provider", "api_mode", "base_url", "api_key_env")  # what -m, --provider ... set


def started_with(agent) -> dict:
    """The agent's provider as a resume should set it again: a base URL without a user and password in
    it, a local file (a scripted provider's) by its whole path; never a key (``api_key_env`` names one)."""
    import os
    from urllib.parse import urlsplit

    config = getattr(agent, "provider_config", None)
    fields = {key: str(getattr(config, key, "") or "") for key in STARTED_WITH}
    url = fields["base_url"]
    if "://" in url and "@" in urlsplit(url).netloc:
        parts = urlsplit(url)
        fields["base_url"] = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    elif url and "://" not in url and os.path.exists(url):
        fields["base_url"] = os.path.abspath(url)
    return {key: value for key, value in fields.items() if value}


@hookimpl
def append_messages(session_id, messages, agent):
    if messages:
        _store_for(agent).append(session_id, list(messages))


@hookimpl
def load_session(session_id, agent):
    return _store_for(agent).load(session_id)


@hookimpl
def resolve_session(session_id, agent):
    ids = _store_for(agent).matching_ids(session_id)
    return ids[0] if len(ids) == 1 else ids or None


@hookimpl
def latest_session(platform, agent):
    return _store_for(agent).latest_session_id(platform or None)


@hookimpl
def session_info(session_id, agent):
    store = _store_for(agent)
    info = store.provider_config(session_id)
    for _ in range(50):  # up the chain of continuations (compression, undo) to the one the user named
        meta = store.get_session(session_id)
        if not meta:
            break
        if meta.get("title"):
            return {**info, "title": meta["title"]}
        session_id = meta.get("parent_session_id")
        if not session_id or meta.get("start_reason") not in ("compression", "undo"):
            break
    return info or None


@hookimpl
def on_session_end(session_id, exit_reason, usage, agent):
    _store_for(agent).end_session(session_id, exit_reason or "", usage or {})


@hookimpl
def on_session_finalize(session_id, agent):
    _release(agent, session_id)  # shut down, or continued in a new session after compression


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
