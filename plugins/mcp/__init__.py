"""MCP: the tools, resources and prompts of Model Context Protocol servers.

They are hermes tools (``mcp__<server>__<tool>``, toolset ``mcp-<server>``).

Servers come from ``mcp_servers`` in config.yaml (hermes-agent's format, see
:mod:`plugins.mcp.config`) and from plugins (``register_mcp_servers``). They
start in the background when the first agent whose toolsets choose them is
built (never for ``--help``, ``plugins list`` or ``config``, nor under ``-t
file``), and its first model call waits for those still connecting; the SDK is
imported only then. ``hermes mcp`` lists, tests, adds and removes them;
a conversation follows config.yaml's changes before its next model call
(``mcp.auto_reload_on_config_change``), and ``/reload-mcp`` in chat reads it again now.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from kernel import hookimpl

_manager: Any = None  # plugins.mcp.servers.Manager, once an agent needs a server
_reread: dict = {}  # id(host) -> config.yaml as last read again for its servers (newer than the host's config)
_making = threading.Lock()


@hookimpl
def register_hookspecs(add):
    from plugins.mcp import hookspecs

    add(hookspecs)


@hookimpl
def register_config(declare, config):
    from plugins.mcp.keys import declare_keys

    declare_keys(declare, config)


@hookimpl
def register_toolsets(register, config):
    servers = config.get("mcp_servers")
    for name in servers if isinstance(servers, dict) else ():  # `-t mcp-NAME` is known before it connects
        register(f"mcp-{name}", [], f"the tools of MCP server {name}")


def all_servers(host, config: Any = None) -> dict:
    """name -> :class:`plugins.mcp.config.Server` of every shipped and configured server (``config``: another
    reading of config.yaml than the host's)."""
    from plugins.mcp.config import configured
    from plugins.mcp.hookspecs import MCP_SERVERS

    shipped = {name: (entry.value, entry.plugin) for name, entry in host.registry[MCP_SERVERS].items()}
    return configured(config or _reread.get(id(host)) or host.config, shipped)


def manager(host):
    """This process's servers (see :mod:`plugins.mcp.servers`), made the first time one is needed."""
    global _manager
    from hermes.host.config import data_dir
    from kernel.secrets import Secrets
    from plugins.mcp.sampling import Sampler
    from plugins.mcp.servers import Manager

    with _making:  # agents of a server are built on several threads
        if _manager is not None:
            return _manager
        config = host.config
        _manager = Manager(data_dir(), Secrets(config.key_envs(),
                                                passthrough=config.get("tools.env_passthrough") or []))
        _manager.sampler = Sampler(host)
    return _manager


@hookimpl
def agent_tools(agent, starting) -> Optional[list]:
    host = agent.host
    if starting:
        _follow_config(agent)  # config.yaml as this agent starts: what later turns compare with
    if _manager is None and not _any_server(host):
        return None  # nothing configured: no SDK import, no thread
    if starting:  # start what is not running yet, answer at once with what is connected, and be asked again
        servers = all_servers(host)
        if not (chosen := _chosen(agent, servers)):
            return None  # its toolsets name no server (`-t file`): none is started for it, nor waited for
        running = manager(host)
        running.agents.add(agent)
        running.update(servers, start=chosen)  # before the first model call if some are still connecting
        if any(conn.state == "connecting" for name, conn in running.connections.items() if name in chosen):
            agent.tools_changed()
    else:  # before a model call: wait for its servers still connecting, within this hook's own deadline
        running = _manager
        if running is None or not (chosen := _chosen(agent, running.connections)):
            return None
        running.agents.add(agent)
        limit = float(agent.config.get("plugins.hook_timeout") or 0) or 3600.0
        running.wait_connecting(min(max(0.0, limit - 2.0), _discovery_wait(agent)), agent, chosen)
    return running.tools(_cache())


def _discovery_wait(agent) -> float:
    """hermes-agent's ``mcp_discovery_timeout``: the first model call waits that long for servers still connecting,
    the later ones not at all (a server that connects after says so, and the next call has its tools)."""
    from plugins.mcp.keys import DISCOVERY

    seconds = agent.config.get(DISCOVERY)
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return float("inf")
    waited, agent.state[DISCOVERY] = agent.state.get(DISCOVERY), True
    return 0.0 if waited else max(0.0, float(seconds))


@hookimpl
def pre_llm_call(agent):
    """hermes-agent's mcp.auto_reload_on_config_change: servers added, changed or removed in config.yaml since it
    was last read (``hermes mcp add`` in another terminal) start or stop before the turn's first model call."""
    if _follow_config(agent):
        agent.tools_changed()


_config_seen: dict = {}  # config.yaml -> its stamp when its mcp_servers were last read


def _follow_config(agent) -> bool:
    """Read config.yaml's servers again if it changed since it was last read, and start or stop them: whether it
    did."""
    from hermes.host.paths import stamp
    from plugins.mcp.keys import AUTO_RELOAD

    path = getattr(agent.host.config, "path", None)
    if not path or not agent.config.get(AUTO_RELOAD, True):
        return False
    now = stamp(str(path))
    if _config_seen.setdefault(str(path), now) == now:
        return False
    _config_seen[str(path)] = now
    from hermes.host.config import ConfigError, load_config

    try:
        fresh = load_config(path, lenient=True)
    except ConfigError as exc:  # an edit half done: the servers stay as they are until it reads
        import logging

        logging.getLogger("hermes.mcp").warning("config.yaml was not read again for its MCP servers: %s", exc)
        return False
    _reread[id(agent.host)] = fresh
    servers = all_servers(agent.host)
    if not servers and _manager is None:
        return False
    running = manager(agent.host)
    running.update(servers, start=_chosen(agent, servers))
    running.agents.add(agent)
    return True


def _chosen(agent, servers) -> set:
    """The names of ``servers`` whose tools ``agent`` offers (their toolset ``mcp-NAME``)."""
    return {name for name in servers if agent.offers(f"mcp-{name}")}


def _any_server(host) -> bool:
    from plugins.mcp.hookspecs import MCP_SERVERS

    configured = (_reread.get(id(host)) or host.config).get("mcp_servers")
    return bool(isinstance(configured, dict) and configured) or bool(host.registry[MCP_SERVERS])


def _cache():
    from hermes.host.config import data_dir

    return data_dir() / "cache" / "mcp"


@hookimpl
def register_slash_commands(register):
    register("reload-mcp", _reload, description="read mcp_servers in config.yaml again and reconnect")


def _reload(raw_args: str, agent) -> str:
    from hermes.host.config import ConfigError, load_config
    from plugins.mcp.cli import status_lines

    host = agent.host
    try:
        fresh = load_config(host.config.path, lenient=True)
    except ConfigError as exc:
        return f"config.yaml was not read again: {exc}"
    running = manager(host)
    running.shutdown()
    _reread[id(host)] = fresh  # what later agents (a subagent) start from too
    servers = all_servers(host)
    running.update(servers, start=(chosen := _chosen(agent, servers)))
    running.agents.add(agent)
    running.wait_connecting(float(agent.config.get("plugins.hook_timeout") or 30) - 2.0, agent, chosen)
    agent.tools_changed()
    return "\n".join(status_lines(running)) or "no MCP servers are configured"


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent, online):
    """A line per configured server: connected with its tools (``online``), or why not."""
    from types import SimpleNamespace

    from plugins.doctor.hookspecs import FAIL, OK, Check
    from plugins.mcp.cli import connect_all, row_of

    if not online:
        return [Check(f"mcp {name}", OK, f"{server.where()}: not connected (--offline)")
                for name, server in sorted(all_servers(agent.host).items()) if server.enabled]
    lines = []
    for server, conn in connect_all(SimpleNamespace(host=agent.host)).values():  # as `hermes mcp list` connects
        r = row_of(server, conn)
        if r["status"] == "ready":
            lines.append(Check(f"mcp {r['name']}", OK, f"{r['where']}: {len(r['tools'])} tools"))
        elif r["status"] != "disabled":
            lines.append(Check(f"mcp {r['name']}", FAIL, f"{r['where']}: {r['status']}: {r['last_error'] or '-'}"))
    return lines


@hookimpl
def register_commands(cli, config):
    from plugins.mcp.cli import mcp_group

    cli.add_command(mcp_group())
