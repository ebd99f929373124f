"""Built-in plugin: the PostgreSQL session store (``sessions.store: postgres``).

For gateways and services on several workers, or hosts that share their sessions:
``sessions.database_url: postgresql://user:password@host/db`` (``${VAR}`` in it is taken from the
environment, so the password need not be in config.yaml). The store makes and migrates its own tables.
Its driver, psycopg, is imported only when the store is used (``pip install 'hermes-kernel[postgres]'``).
"""

from __future__ import annotations

import os
import re

from kernel import hookimpl

requires_plugins = ("sessions-sqlite",)  # its plugin brings the store hook and the session hooks that use it


def expand(url: str, key: str = "sessions.database_url") -> str:
    """``${VAR}`` in the URL from the environment (unset: a one-line error naming it and the ``key``)."""
    from plugins.sessions.base import StoreError

    def value(match) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise StoreError(f"{key} names ${{{name}}}, which is not set")
        return os.environ[name]

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", value, url)


def shown(url: str) -> str:
    """The URL without its password, to name the database in a message."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = f"{parts.username}@" if parts.username else ""
    return parts._replace(netloc=user + parts.netloc.rpartition("@")[2]).geturl()


def make_store(config):
    from plugins.sessions.base import StoreError
    from plugins.sessions_postgres.store import PostgresStore

    url = expand(str(config.get("sessions.database_url") or "").strip())
    if not url.startswith(("postgresql://", "postgres://")):
        raise StoreError("sessions.store is postgres: set sessions.database_url to postgresql://user@host/db"
                         + (f" (it is {shown(url)!r})" if url else ""))
    return PostgresStore(url)


@hookimpl
def register_session_stores(register):
    register("postgres", make_store, description="a PostgreSQL database many hosts share (sessions.database_url)")
