"""The hook a plugin adds a session store through (added by the ``sessions-sqlite`` plugin, which
registers ``sqlite``; ``sessions.store`` in config.yaml picks one)."""

from __future__ import annotations

from typing import Any, Callable

from kernel import hookspec
from kernel.hookspecs import Table

#: ``host.registry[SESSION_STORES]``: name -> Entry whose value is ``factory(config) -> store``
SESSION_STORES = Table("register_session_stores", callable=True)


@hookspec
def register_session_stores(register: Callable[..., None], config: Any) -> None:
    """Offer a place to keep sessions; once per plugin host. ``sessions.store: NAME`` in config.yaml
    selects it (default ``sqlite``); every session hook (``append_messages``, ``load_session``,
    ``resolve_session``, ``latest_session``, ``session_info``, ``claim_session``), ``hermes sessions``,
    the ``session_search`` tool and ``hermes serve``'s ``/api/sessions`` then use it. One store object
    is made per process and config, on first use, and shared by every thread.

    :param register: ``register(name, factory, description="")``; ``factory(config)`` returns the store,
        an object with the methods of :class:`plugins.sessions.store.SessionStore` (its docstrings are
        the contract): ``ensure_session``, ``provider_config``, ``end_session``, ``set_title``,
        ``get_session``, ``matching_ids``, ``resolve_id``, ``list_sessions``, ``latest_session_id``,
        ``delete``, ``append``, ``load``, ``message_count``, ``search``, ``check``, ``claim``,
        ``release``, ``close``, and ``where`` (what to name it by in a message). Its errors for the user
        are :class:`plugins.sessions.store.StoreError`, one line each.
    :param config: the loaded configuration.
    """
