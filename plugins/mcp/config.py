"""``mcp_servers`` in config.yaml, in hermes-agent's format, as :class:`Server`
records; the keys of each entry are declared per server name, so ``hermes config
check`` names a typo in one (``mcp_servers.github.comand``).

    mcp_servers:
      time:                               # stdio: a command hermes starts
        command: uvx
        args: [mcp-server-time]
        env: {TZ: Europe/Paris}           # ${VAR} takes a variable of hermes' environment
        timeout: 120                      # seconds per call (default 300)
        connect_timeout: 30               # seconds to connect (default 60)
      docs:                               # remote: streamable HTTP, or SSE with transport: sse
        url: https://example.com/mcp
        headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
        tools: {include: [search], resources: false, prompts: false}
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Optional

DEFAULT_TIMEOUT = 300.0  # seconds a call may take (hermes-agent's default)
DEFAULT_CONNECT_TIMEOUT = 60.0
TRANSPORTS = ("stdio", "http", "streamable_http", "streamable-http", "sse")

# key below mcp_servers.<name> -> (type, help); hermes-agent's names and meanings
ENTRY_KEYS = {
    "command": (str, "the program that runs a stdio server"),
    "args": (list, "its arguments"),
    "env": (dict, "variables for it, on top of the scrubbed base environment (${VAR} takes one of hermes')"),
    "cwd": (str, "the folder it runs in"),
    "url": (str, "a remote server's endpoint (streamable HTTP, or SSE with transport: sse)"),
    "headers": (dict, "HTTP headers for a remote server (${VAR} takes a variable)"),
    "transport": (str, "stdio, http or sse (default: stdio with a command, http with a url)"),
    "enabled": (bool, "false: configured but not started"),
    "timeout": (float, "seconds one call may take (default 300)"),
    "connect_timeout": (float, "seconds to start and connect (default 60)"),
    "supports_parallel_tool_calls": (bool, "its tools may run side by side (else only those annotated read-only)"),
    "tools": (dict, "which of its tools to offer: include, exclude, resources, prompts"),
    "tools.include": ((list, str), "only these tools (wins over exclude)"),
    "tools.exclude": ((list, str), "every tool but these"),
    "tools.resources": (bool, "offer list_resources and read_resource (default true, if the server has resources)"),
    "tools.prompts": (bool, "offer list_prompts and get_prompt (default true, if the server has prompts)"),
    "sampling": (dict, "model requests the server may make through hermes' provider (off unless enabled)"),
    "sampling.enabled": (bool, "answer the server's sampling requests (default false)"),
    "sampling.model": (str, "the model to answer with (default: the agent's)"),
    "sampling.max_tokens_cap": (int, "most tokens one sampling answer may have (default 4096)"),
    "sampling.timeout": (float, "seconds one sampling request may take (default 30)"),
    "sampling.max_rpm": (int, "most sampling requests a minute (default 10)"),
    "sampling.allowed_models": (list, "the models a server may ask for (empty: any)"),
    "sampling.max_tool_rounds": (int, "hermes-agent's; read, not used (sampling never runs tools here)"),
    "sampling.log_level": (str, "hermes-agent's; read, not used"),
    # hermes-agent's keys this client reads but does not need (accepted so a copied block checks clean)
    "keepalive_interval": (float, "hermes-agent's; read, not used"),
    "skip_preflight": (bool, "hermes-agent's; read, not used"),
    "idle_timeout_seconds": (float, "hermes-agent's; read, not used"),
    "max_lifetime_seconds": (float, "hermes-agent's; read, not used"),
}
_SECTIONS = {"tools", "sampling"}  # mappings whose own keys are declared one by one


@dataclass
class Server:
    """One configured MCP server, its ``${VAR}`` references not yet resolved."""

    name: str
    transport: str = "stdio"  # stdio, http or sse
    command: str = ""
    args: list = field(default_factory=list)
    env: dict = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: dict = field(default_factory=dict)
    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    parallel: bool = False
    include: frozenset = frozenset()
    exclude: frozenset = frozenset()
    resources: bool = True
    prompts: bool = True
    sampling: dict = field(default_factory=dict)
    source: str = "config.yaml"  # or the plugin that ships it

    @property
    def toolset(self) -> str:
        return f"mcp-{self.name}"

    def offers(self, tool_name: str) -> bool:
        """The ``tools`` policy: include wins over exclude."""
        if self.include:
            return tool_name in self.include
        return tool_name not in self.exclude

    def where(self) -> str:
        return self.url if self.transport != "stdio" else " ".join([self.command, *map(str, self.args)])


def declare_keys(declare, config) -> None:
    """``mcp_servers`` and, for each server named in config.yaml, the keys of its entry."""
    servers = config.get("mcp_servers") if config is not None else None
    if not isinstance(servers, dict) or not servers:
        declare("mcp_servers", dict, {}, "MCP servers whose tools the agent may call (hermes-agent's format)")
        return
    for name, entry in servers.items():
        base = f"mcp_servers.{name}"
        if not isinstance(entry, dict):
            declare(base, dict, None, f"MCP server {name}")  # a wrong type: config check says so
            continue
        for key, (kind, text) in ENTRY_KEYS.items():
            if key in _SECTIONS and isinstance(entry.get(key), dict):
                continue  # its keys are declared one by one, so a typo below it is found too
            declare(f"{base}.{key}", kind, None, text, minimum=0 if kind in (int, float) else None,
                    choices=TRANSPORTS if key == "transport" else ())


def _names(value: Any) -> frozenset:
    if isinstance(value, str):
        return frozenset({value})
    return frozenset(str(v) for v in value) if isinstance(value, (list, tuple)) else frozenset()


def parse(name: str, entry: Any, source: str = "config.yaml") -> Optional[Server]:
    """A server from its entry; ``None`` for an entry that is not a mapping."""
    if not isinstance(entry, dict):
        return None
    tools = entry.get("tools") if isinstance(entry.get("tools"), dict) else {}
    transport = str(entry.get("transport") or ("stdio" if entry.get("command") or not entry.get("url") else "http"))
    transport = "http" if transport.replace("-", "_") == "streamable_http" else transport
    number = lambda key, default: float(entry[key]) if isinstance(entry.get(key), (int, float)) \
        and not isinstance(entry.get(key), bool) and entry[key] > 0 else default  # noqa: E731
    return Server(
        name=str(name), transport=transport, command=str(entry.get("command") or ""),
        args=[str(a) for a in entry.get("args") or []] if isinstance(entry.get("args"), list) else [],
        env={str(k): str(v) for k, v in entry["env"].items()} if isinstance(entry.get("env"), dict) else {},
        cwd=str(entry.get("cwd") or ""), url=str(entry.get("url") or ""),
        headers={str(k): str(v) for k, v in entry["headers"].items()} if isinstance(entry.get("headers"), dict) else {},
        enabled=entry.get("enabled") is not False, timeout=number("timeout", DEFAULT_TIMEOUT),
        connect_timeout=number("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
        parallel=entry.get("supports_parallel_tool_calls") is True,
        include=_names(tools.get("include")), exclude=_names(tools.get("exclude")),
        resources=tools.get("resources") is not False, prompts=tools.get("prompts") is not False,
        sampling=entry["sampling"] if isinstance(entry.get("sampling"), dict) else {}, source=source)


def configured(config, shipped: Optional[dict] = None) -> dict:
    """name -> :class:`Server`: the plugins' servers (``register_mcp_servers``), then config.yaml's,
    whose entry for the same name changes the shipped one key by key (``enabled: false`` turns it off)."""
    entries: dict = {}
    for name, (entry, plugin) in (shipped or {}).items():
        if isinstance(entry, dict):
            entries[name] = (dict(entry), plugin)
    servers = config.get("mcp_servers") if config is not None else None
    for name, entry in (servers.items() if isinstance(servers, dict) else ()):
        if isinstance(entry, dict) and name in entries:
            entries[name] = ({**entries[name][0], **entry}, entries[name][1])
        else:
            entries[name] = (entry, "config.yaml")
    found = {}
    for name, (entry, source) in entries.items():
        server = parse(name, entry, source)
        if server is not None:
            found[str(name)] = server
    return found


_REFERENCE = re.compile(r"\$\{(?:env:)?([^}]+)\}")


def resolve(value: str, environ=os.environ) -> str:
    """``${VAR}`` (or ``${env:VAR}``) replaced by the variable; an unset one stays as written."""
    return _REFERENCE.sub(lambda m: environ.get(m.group(1).strip(), m.group(0)), value)


def problems(server: Server) -> list:
    """Why this entry cannot start, a line each (nothing: it can)."""
    found = []
    if server.transport not in ("stdio", "http", "sse"):
        found.append(f"transport must be stdio, http or sse, not {server.transport!r}")
    elif server.transport == "stdio" and not server.command:
        found.append("a stdio server needs a command (or give a url for a remote one)")
    elif server.transport != "stdio" and not re.match(r"https?://", server.url):
        found.append(f"url must start with http:// or https:// (got {server.url or 'none'!r})")
    return found
