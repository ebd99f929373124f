"""The keys of each ``mcp_servers`` entry, declared per server name so ``hermes config check`` names a typo in
one (``mcp_servers.github.comand``). Light to import: it runs whenever plugins load."""

from __future__ import annotations

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
    "ssl_verify": ((bool, str), "a remote server's certificate: false checks nothing, or the file of its authority"),
    "client_cert": ((str, list), "the certificate hermes shows a remote server that asks for one (mutual TLS): a PEM "
                                 "file, its key in it or in client_key, or [cert, key]"),
    "client_key": (str, "the key of client_cert, when not in its file"),
    "auth": (str, "oauth: a remote server signed in to with `hermes mcp login NAME` (its tokens kept, refreshed)"),
    "oauth": (dict, "the sign-in's settings: scope, client_id, client_secret, redirect_port"),
    "oauth.scope": (str, "the scopes asked for (default: what the server says)"),
    "oauth.client_id": (str, "a client registered with the server beforehand (default: hermes registers itself)"),
    "oauth.client_secret": (str, "that client's secret (a confidential client)"),
    "oauth.redirect_port": (int, "the loopback port the sign-in comes back to (default: a free one, then kept)"),
    "enabled": (bool, "false: configured but not started"),
    "timeout": (float, "seconds one call may take (default 300)"),
    "connect_timeout": (float, "seconds to start and connect (default 60)"),
    "supports_parallel_tool_calls": (bool, "its tools may run side by side (else only those annotated read-only)"),
    "tools": (dict, "which of its tools to offer: include, exclude, resources, prompts"),
    "tools.include": ((list[str], str), "only these tools (wins over exclude)"),
    "tools.exclude": ((list[str], str), "every tool but these"),
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
AUTO_RELOAD = "mcp.auto_reload_on_config_change"  # hermes-agent's
DISCOVERY = "mcp_discovery_timeout"  # hermes-agent's
_SECTIONS = {"tools", "sampling", "oauth"}  # mappings whose own keys are declared one by one


def declare_keys(declare, config) -> None:
    """``mcp_servers`` and, for each server named in config.yaml, the keys of its entry."""
    declare(AUTO_RELOAD, bool, True, "a conversation picks up MCP servers added, changed or removed in config.yaml "
            "before its next model call (else: /reload-mcp)")
    declare(DISCOVERY, (int, float), None, "seconds a conversation's first model call waits for MCP servers still "
            "connecting; then it goes on, and a server's tools come with the calls after it connects (hermes-agent's; "
            "unset: each server is waited for, within its connect_timeout)", minimum=0)
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
