"""The hook a plugin ships an MCP server through (added by the ``mcp`` plugin)."""

from __future__ import annotations

from typing import Any, Callable

from kernel import hookspec
from kernel.hookspecs import Table

#: ``host.registry[MCP_SERVERS]``: name -> Entry whose value is the server's entry (a dict)
MCP_SERVERS = Table("register_mcp_servers")


@hookspec
def register_mcp_servers(register: Callable[..., None], config: Any) -> None:
    """Ship MCP servers with your plugin; once per plugin host. Each is
    started like one under ``mcp_servers`` in config.yaml, and an entry of
    the same name there changes it key by key (``enabled: false`` turns it
    off). Its tools are ``mcp__<name>__<tool>`` in toolset ``mcp-<name>``.

    :param register: ``register(name, entry, description="")``; ``entry`` is
        a mapping in config.yaml's format (``command``, ``args``, ``env``,
        ``url``, ``headers``, ``timeout`` ...), e.g.
        ``{"command": sys.executable, "args": ["-m", "my_plugin.server"]}``.
    :param config: the loaded configuration.
    """
