"""The MCP servers of another client's config file, as ``mcp_servers`` entries (``hermes mcp import``).

Claude Desktop, Cursor, Windsurf and Cline keep them under ``mcpServers``, VS Code under ``servers`` (with a
``type``); each is ``command``/``args``/``env`` or ``url``/``headers``. A secret written in the file (an ``env``
value or a header named like a key) is not copied: config.yaml holds ``${VAR}`` and the user exports ``VAR``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


def client_files() -> list:
    """The MCP config files of other clients found here, the project's first: ``hermes mcp import`` without a FILE."""
    import os
    import sys

    home = Path.home()
    claude = (home / "Library" / "Application Support" if sys.platform == "darwin" else
              Path(os.environ.get("APPDATA") or home) if sys.platform == "win32" else
              Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config"))
    places = [Path(".cursor", "mcp.json"), Path(".vscode", "mcp.json"),
              claude / "Claude" / "claude_desktop_config.json", home / ".cursor" / "mcp.json"]
    return [path for path in places if path.is_file()]


def servers_of(data: Any) -> dict:
    """The name -> server mapping of a client's config, or a ValueError saying what the file lacks."""
    found = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(found, dict):
        raise ValueError("no 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code) mapping in it")
    return found


def converted(name: str, server: Any) -> tuple:
    """``(our name, entry, notes)`` for one server; ``entry`` is None when it cannot be used (a note says why)."""
    from plugins.config_command.cli import secret_named

    ours, notes = re.sub(r"[^A-Za-z0-9_-]+", "-", str(name)).strip("-") or "server", []
    if ours != name:
        notes.append(f"named '{ours}' here ({name!r} has characters a server name cannot)")
    if not isinstance(server, dict):
        return ours, None, [f"not a mapping: {server!r}"]
    kind = str(server.get("type") or "").lower()
    if server.get("url"):
        entry: dict = {"url": str(server["url"]), **({"transport": "sse"} if kind == "sse" else {})}
    elif server.get("command"):
        entry = {"command": str(server["command"]), "args": [str(a) for a in server.get("args") or []]}
    else:
        return ours, None, ["neither a command nor a url"]
    for field, prefix in (("env", ""), ("headers", f"{ours.upper().replace('-', '_')}_")):
        values = server.get(field)
        if not isinstance(values, dict) or not values:
            continue
        entry[field] = {}
        for key, value in values.items():
            value = re.sub(r"\$\{env:(\w+)\}", r"${\1}", str(value))  # VS Code's ${env:VAR} is our ${VAR}
            if "${input:" in value or (secret_named(key) and "${" not in value):  # config.yaml keeps no key
                var = key if field == "env" else prefix + re.sub(r"\W", "_", key).upper()
                notes.append(f"{field} {key}: its secret is not copied; written as ${{{var}}}: export {var}")
                value = "${%s}" % var
            entry[field][key] = value
    if server.get("disabled") is True:
        entry["enabled"] = False
    return ours, entry, notes
