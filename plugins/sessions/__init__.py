"""Built-in plugin: stored sessions, and the SQLite store.

Persists every session's messages as they happen (``append_messages``),
answers ``load_session`` / ``latest_session`` for ``--resume`` and
``--continue``, records turn ends and token counts, offers the
``session_search`` tool and the ``hermes sessions`` commands, all on the store
``sessions.store`` names: ``sqlite`` (``state.db`` in the data folder, this
plugin's; ``hermes-state.db`` beside hermes-agent's own state.db in a folder
shared with it) or one another plugin adds through ``register_session_stores``
(``postgres``: :mod:`plugins.sessions_postgres`).

The store module (and sqlite3) is imported on first use, and the database is
opened on first use, so loading this plugin costs nothing.
"""

from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path

from kernel import hookimpl

_stores: dict = {}  # (store name, what it is made from) -> the store, one per process
_stores_lock = threading.Lock()
_by_config: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a Config -> its store, found once
DEFAULT_STORE = "sqlite"


def get_store(config, host=None):
    """The shared store ``sessions.store`` names (default ``sqlite``) for this config, made on first use
    by the factory its plugin registered (``host`` is needed then, unless it is SQLite). ``config`` may be
    a data folder's path instead: its SQLite store (tests, scripts)."""
    by_path = isinstance(config, (str, os.PathLike))
    if not by_path and config in _by_config:  # every append asks: the data folder is resolved once per config
        return _by_config[config]
    if by_path:
        name, folder, url = DEFAULT_STORE, os.fspath(config), ""
    else:
        name, folder, url = config.get("sessions.store") or DEFAULT_STORE, os.fspath(config.data_dir), \
            config.get("sessions.database_url") or ""
    key = (name, folder, url)  # as given: resolving a path costs a stat per part
    store = _stores.get(key)
    if store is None:
        make = _sqlite if host is None and name == DEFAULT_STORE else _factory(name, host)
        with _stores_lock:
            if key not in _stores:
                _stores[key] = make(folder if by_path else config)
            store = _stores[key]
    if not by_path:
        _by_config[config] = store
    return store


def _factory(name: str, host):
    from plugins.sessions.hookspecs import SESSION_STORES
    from plugins.sessions.base import StoreError

    table = host.registry[SESSION_STORES] if host is not None else {}
    if name not in table:
        from kernel.hints import did_you_mean

        raise StoreError(f"sessions.store is {name!r}, which no enabled plugin registers"
                         f"{did_you_mean(name, list(table))} (stores here: {', '.join(sorted(table)) or 'none'})")
    return table[name].value


def _sqlite(config):
    """The SQLite store (``register_session_stores``' ``sqlite``): state.db in the data folder."""
    from plugins.sessions.store import SessionStore

    folder = config if isinstance(config, str) else config.data_dir
    return SessionStore.for_data_dir(Path(folder).resolve())


def close_stores() -> None:
    """Close every open store (tests; a forked worker)."""
    with _stores_lock:
        for store in set(_stores.values()):
            store.close()
        _stores.clear()
        _by_config.clear()


def _store_for(agent):
    if agent is None:  # a caller with nothing to go by: the data folder's SQLite store
        from hermes.host.paths import data_dir

        return get_store(str(data_dir()))
    return get_store(agent.config, getattr(agent, "host", None))


@hookimpl
def register_hookspecs(add):
    from plugins.sessions import hookspecs

    add(hookspecs)


@hookimpl
def register_session_stores(register):
    register(DEFAULT_STORE, _sqlite, description="state.db in the data folder (SQLite, WAL)")


@hookimpl
def register_config(declare):
    from kernel.keys import Key

    declare(Key("sessions.store", str, DEFAULT_STORE, "where sessions are kept: a store a plugin registers "
                "(sqlite, postgres)", names="session_stores"))
    declare("sessions.database_url", str, "", "the database of a server store (postgres: postgresql://...)")
    declare("sessions.auto_prune", bool, False, "once a day, as a session ends, delete the sessions last active "
            "more than sessions.retention_days ago (as `hermes sessions prune` does)")
    declare("sessions.retention_days", int, 90, "how old auto_prune lets a session grow, in days", minimum=1)
    declare("sessions.min_interval_hours", float, 24, "hours between two auto_prune runs", minimum=0)
    declare("sessions.write_json_snapshots", bool, False, "after each turn, also write the session whole as "
            "sessions/session_ID.json in the data folder (hermes-agent's, for tools that read those files)")
    declare("sessions.vacuum_after_prune", bool, True, "after an auto_prune that deleted sessions, give their space "
            "back to the file system (as `hermes sessions compact`)")


# --------------------------------------------------------------------------
# Persistence hooks; one writer per session (the store's claim, held by the
# process writing the session until it ends: a killed process drops it)


@hookimpl
def claim_session(session_id, agent):
    return _store_for(agent).claim(session_id)


@hookimpl
def on_session_start(session_id, model, platform, provider, parent_session_id, reason, agent):
    store = _store_for(agent)
    store.claim(session_id)  # a new session is this process's to write too
    store.ensure_session(
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
    """The agent's provider and toolsets as a resume should set them again: a base URL without a user and
    password in it, a local file (a scripted provider's) by its whole path; never a key (``api_key_env``
    names one); and ``cwd``, the folder it started in (chat goes back there)."""
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
    fields = {key: value for key, value in fields.items() if value}
    fields["cwd"] = os.getcwd()
    toolsets = getattr(agent, "toolsets", None)  # None: every tool; a resume offers what this session was offered
    return fields if toolsets is None else {**fields, "toolsets": [str(name) for name in toolsets]}


@hookimpl
def append_messages(session_id, messages, agent):
    if messages:
        from plugins.tool_args import masked_calls

        _store_for(agent).append(session_id, [masked_calls(message, agent) for message in messages])


@hookimpl
def load_session(session_id, agent):
    return _store_for(agent).load(session_id)


@hookimpl
def resolve_session(session_id, agent):
    store = _store_for(agent)
    ids = store.matching_ids(session_id)
    return ids[0] if len(ids) == 1 else ids or store.titled_id(session_id)


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
    if agent.config.get("sessions.write_json_snapshots"):
        from plugins.sessions import snapshot

        try:
            snapshot.write(agent, session_id)
        except OSError as exc:  # the store has it all: a warning, not a failed turn
            import logging

            logging.getLogger(__name__).warning("sessions.write_json_snapshots: %s", exc)


@hookimpl
def on_session_finalize(session_id, agent):
    store = _store_for(agent)
    store.release(session_id)  # shut down, or continued in a new session after compression
    if agent.config.get("sessions.auto_prune"):
        _prune_daily(store, agent.config)


def _prune_daily(store, config) -> None:
    """``sessions.auto_prune`` (hermes-agent's keys): at most once per ``sessions.min_interval_hours`` (a day) per
    data folder, the sessions older than ``sessions.retention_days`` go, as ``hermes sessions prune`` deletes them;
    then, with ``sessions.vacuum_after_prune``, the file gives their space back, as ``hermes sessions compact``."""
    import logging
    import time

    log = logging.getLogger(__name__)
    stamp = Path(config.data_dir) / "sessions-pruned"  # its time: the last prune's
    if stamp.exists() and time.time() - stamp.stat().st_mtime < config.get("sessions.min_interval_hours") * 3600:
        return
    stamp.touch()
    days = config.get("sessions.retention_days")
    deleted, _, sizes = store.delete_unclaimed([row["id"] for row in store.prunable(time.time() - days * 86400)])
    if isinstance(sizes, str):
        log.warning("sessions.auto_prune: %s", sizes)
    elif deleted:
        log.info("sessions.auto_prune: %d sessions older than %d days deleted", len(deleted), days)
    if deleted and config.get("sessions.vacuum_after_prune") and hasattr(store, "compact"):
        from plugins.sessions.base import StoreError

        try:
            store.compact()
        except StoreError as exc:  # another process reads or writes it now: the next prune tries again
            log.info("sessions.vacuum_after_prune: %s", exc)


# --------------------------------------------------------------------------
# The session_search tool and the command line


@hookimpl
def register_tools(register, config):
    from plugins.sessions.tool import session_search_tool

    register(session_search_tool())


def _slash_title(raw_args: str, agent) -> str:
    from plugins.sessions.base import StoreError

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
    from plugins.sessions.base import StoreError

    if not raw_args.strip():  # as the other commands say what they take
        return "usage: /search WORDS (messages of past sessions holding all of them)"
    try:
        hits = _store_for(agent).search(raw_args, 10)
    except (StoreError, ValueError) as exc:
        return f"cannot search: {exc}"
    if not hits:
        return "No matches."
    return "\n".join(f"{h['session_id']}  [{h['seq']}] {h['role']}: {' '.join(h['snippet'].split())[:100]}"
                     for h in hits)


def _slash_insights(raw_args: str, agent) -> str:
    """``/insights [AGE]``: ``hermes sessions stats --since AGE`` (30 days), in the chat."""
    import click

    from plugins.numbers import cutoff
    from plugins.sessions.base import StoreError
    from plugins.sessions.commands import stats_lines, usage_since

    try:
        return "\n".join(stats_lines(usage_since(_store_for(agent), cutoff(raw_args.strip() or "30d", "/insights"))))
    except click.BadParameter as exc:
        return f"usage: /insights [AGE] ({exc.message})"
    except StoreError as exc:
        return f"cannot read the sessions: {exc}"


def _slash_sessions(raw_args: str, agent) -> str:
    """``/sessions [N]``: the latest N (10) conversations, this one marked, each as ``/resume`` takes it."""
    from plugins.sessions.base import StoreError
    from plugins.sessions.commands import _one_line, _row

    if raw_args.strip() and not raw_args.strip().isdigit():
        return "usage: /sessions [N] (the latest N sessions; 10 when not given)"
    try:
        rows = _store_for(agent).list_sessions(limit=int(raw_args or 10) or 10, include_children=False)
    except StoreError as exc:
        return f"cannot list sessions: {exc}"
    lines = [_row(r, _one_line(r["title"] or r["preview"] or "", 50)) + ("  (this one)" if r["id"] == agent.session_id
                                                                         else "") for r in rows]
    return "\n".join(lines + ["/resume ID (or a unique start of it, or a title) goes on in one"]) if rows else \
        "no sessions yet"


def _slash_export(raw_args: str, agent) -> str:
    """``/export [FILE.md]``: this chat as ``hermes sessions export`` writes it (default: ``<session id>.md`` here)."""
    from plugins.sessions.base import StoreError
    from plugins.sessions.commands import markdown, write_new

    path = Path(raw_args.strip() or f"{agent.session_id}.md").expanduser()
    store = _store_for(agent)
    try:
        meta, messages = store.get_session(agent.session_id), store.load(agent.session_id)
        if not meta or not messages:
            return "nothing to export yet: say something first"
        write_new(path, markdown(meta, messages))
    except (StoreError, OSError) as exc:
        return f"cannot export: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}: {path}"
    return f"exported {len(messages)} messages to {path.resolve()}"


@hookimpl
def register_slash_commands(register):
    register("title", _slash_title, description="name the current session")
    register("export", _slash_export, description="write this chat as Markdown: /export [FILE.md]")
    register("search", _slash_search, description="search past sessions: /search WORDS")
    register("insights", _slash_insights, description="what the sessions used, by model, platform and day "
             "(hermes-agent's): /insights [AGE: 30d, 12h, 2w]")
    register("sessions", _slash_sessions, description="the latest sessions, to /resume one (hermes-agent's): "
             "/sessions [N]")


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    from plugins.doctor.hookspecs import FAIL, OK, Check
    from plugins.sessions.base import StoreError

    try:
        store = _store_for(agent)
        problems = store.check()
    except StoreError as exc:
        return [Check("sessions", FAIL, str(exc))]
    if problems:
        return [Check("sessions", FAIL, f"{store.where}: damaged: {problems[0]} (`hermes sessions repair`)")]
    return [Check("sessions", OK, f"{store.where}: integrity check passed")]


@hookimpl
def register_commands(cli, config):
    from plugins.sessions.commands import sessions_group

    cli.add_command(sessions_group(config))
