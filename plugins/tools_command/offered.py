"""Which tools an agent is offered, and why not the others: ``hermes tools list``'s table and ``hermes serve``'s
``/v1/toolsets`` (no click here: the server's application is made without it)."""

from __future__ import annotations


def rows(agent) -> list:
    """Every tool the registry or a plugin's ``agent_tools`` has, offered or not, with why not."""
    registry, disabled = agent.host.registry, set(agent.config.get("agent.disabled_tools") or [])
    reached = set(registry.tools) if agent.toolsets is None else registry.expand_toolsets(agent.toolsets)
    known = {**registry.tools, **agent.tools}
    out = []
    for name, tool in sorted(known.items(), key=lambda item: (item[1].toolset, item[0])):
        why = ("" if name in agent.tools else "disabled (agent.disabled_tools)" if name in disabled
               else "not in toolsets" if name not in reached else "unavailable here (its check says no)")
        out.append({"name": name, "toolset": tool.toolset, "plugin": tool.plugin, "offered": not why, "why": why,
                    "description": (tool.description or "").strip().split("\n")[0]})
    out += [{"name": name, "toolset": "", "plugin": "", "offered": False, "why": "disabled (agent.disabled_tools)",
             "description": ""} for name in sorted(disabled - set(known))]  # an MCP server's, left out by it
    return out
