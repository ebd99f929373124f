"""``mcp_servers`` in config.yaml, in hermes-agent's format, as :class:`Server`
records (their keys are declared in :mod:`plugins.mcp.keys`).

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
        ssl_verify: ~/certs/company-ca.pem  # its authority (false: no check); client_cert, client_key: mutual TLS
        tools: {include: [search], resources: false, prompts: false}
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from plugins.mcp.keys import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT


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
    ssl_verify: Any = None  # a remote server's certificate: None (the default check), False (none) or an authority
    client_cert: Any = None  # mutual TLS: the certificate hermes shows (a PEM path, or [cert, key])
    client_key: Any = None
    auth: str = ""  # "oauth": signed in with `hermes mcp login` (plugins.mcp.oauth)
    oauth: dict = field(default_factory=dict)  # scope, client_id, client_secret, redirect_port

    @property
    def toolset(self) -> str:
        return f"mcp-{self.name}"

    def offers(self, tool_name: str) -> bool:
        """The ``tools`` policy: include wins over exclude."""
        if self.include:
            return tool_name in self.include
        return tool_name not in self.exclude

    def where(self) -> str:
        """Where it runs, for people to read (``mcp list``, ``doctor``): a URL's password and the values of its
        query's token-like parameters hidden, as a pasted listing must not carry them."""
        if self.transport == "stdio":
            return " ".join([self.command, *map(str, self.args)])
        from urllib.parse import urlsplit, urlunsplit

        try:
            parts = urlsplit(self.url)
            password = parts.password
        except ValueError:  # a broken URL: its connection says what is wrong; nothing of it is shown
            return "(a URL that cannot be read)"
        netloc = parts.netloc.replace(f":{password}@", ":***@") if password else parts.netloc
        query = "&".join(re.sub(r"^([^=]*(?:token|key|secret|pass|auth|sig|session|code)[^=]*)=.*", r"\1=***", item,
                                flags=re.IGNORECASE) for item in parts.query.split("&")) if parts.query else ""
        return urlunsplit(parts._replace(netloc=netloc, query=query))


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
        sampling=entry["sampling"] if isinstance(entry.get("sampling"), dict) else {}, source=source,
        ssl_verify=entry.get("ssl_verify"), client_cert=entry.get("client_cert"), client_key=entry.get("client_key"),
        auth=str(entry.get("auth") or "").strip().lower(),
        oauth=entry["oauth"] if isinstance(entry.get("oauth"), dict) else {})


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
            shipped = dict(entries[name][0])
            if "url" in entry and "command" not in entry:  # a url of the user's replaces a shipped command
                for key in ("command", "args"):
                    shipped.pop(key, None)
            elif "command" in entry and "url" not in entry:  # and a command of the user's a shipped url
                shipped.pop("url", None)
            entries[name] = ({**shipped, **entry}, entries[name][1])
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
    if server.command and server.url:  # which one was meant? (command won, unsaid)
        found.append("give a command (a local server) or a url (a remote one), not both")
    elif server.transport not in ("stdio", "http", "sse"):
        found.append(f"transport must be stdio, http or sse, not {server.transport!r}")
    elif server.transport == "stdio" and not server.command:
        found.append("a stdio server needs a command (or give a url for a remote one)")
    elif server.transport != "stdio" and not re.match(r"https?://", server.url):
        found.append(f"url must start with http:// or https:// (got {server.url or 'none'!r})")
    elif server.auth not in ("", "oauth"):
        found.append(f"auth {server.auth!r} is not known here (auth: oauth signs in to a remote server)")
    elif server.auth and server.transport == "stdio":
        found.append("auth: oauth is for a remote server (url), not a command")
    elif server.transport != "stdio":
        from plugins import tls

        try:
            tls_context(server)
        except tls.TLSError as exc:
            found.append(str(exc))
    return found


def tls_context(server: Server) -> Any:
    """The SSL context a remote server is reached with (its ``ssl_verify``, ``client_cert`` and ``client_key``,
    hermes-agent's keys), or None for the default check; a :class:`plugins.tls.TLSError` names what is wrong."""
    from plugins import tls

    return tls.context(tls.verify_of(server.ssl_verify), server.client_cert, server.client_key,
                       names=("ssl_verify", "client_cert", "client_key"))
