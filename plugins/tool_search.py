"""Built-in plugin tool-search: many tools without their schemas in every request (hermes-agent's tool search).

A few MCP servers can offer hundreds of tools, and each model call would carry all of their schemas: tens of
thousands of tokens before the conversation starts, paid again on every call. When the tools of MCP servers and of
third-party plugins would take more than ``tools.tool_search.threshold_pct`` (10) percent of the model's context
window, each request offers them through two tools instead: ``tool_search`` finds tools by what they do and gives
their schemas, ``tool_call`` runs one. The built-in tools are always offered as they are.

``tool_call`` runs the tool through the loop's own tool path, so approval, the ``pre_tool_call`` and
``post_tool_call`` hooks and masking see the tool itself, and the display shows it. The requests' tool list stays
the same from call to call (the providers' prompt caches keep working) as long as the tools do.

Settings (hermes-agent's): ``tools.tool_search.enabled`` (``auto``: past the threshold; ``on``: always; ``off``),
``tools.tool_search.threshold_pct``, ``tools.tool_search.search_default_limit`` (5) and
``tools.tool_search.max_search_limit`` (20).
"""

from __future__ import annotations

import json
import re
from typing import Any

from kernel import hookimpl

SEARCH, CALL = "tool_search", "tool_call"
OURS = ("builtin", "object")  # plugins whose tools are always offered whole: hermes' own, an embedder's in-process
_WORD = re.compile(r"[a-z0-9]+")


@hookimpl
def register_config(declare):
    declare("tools.tool_search.enabled", (str, bool), "auto", "offer MCP servers' and third-party plugins' tools "
            "through tool_search and tool_call: auto (when their schemas pass threshold_pct), on, off",
            choices=("auto", "on", "off", True, False))
    declare("tools.tool_search.threshold_pct", float, 10, "the percent of the context window those tools' schemas "
            "may take before auto hides them behind tool_search", minimum=0)
    declare("tools.tool_search.search_default_limit", int, 5, "the tools one tool_search returns by default",
            minimum=1)
    declare("tools.tool_search.max_search_limit", int, 20, "the most tools one tool_search returns", minimum=1)


@hookimpl
def agent_tools(agent, starting):
    """The two bridges, for an agent that may have tools to hide: MCP servers configured, or a plugin that did not
    come with hermes (without either, nothing is added to its tools or its prompt)."""
    servers = agent.config.get("mcp_servers")
    if not (isinstance(servers, dict) and servers) and not any(
            c.source not in OURS and c.status == "enabled" for c in getattr(agent.host, "records", ())):
        return None
    return bridges()


def bridges() -> list:
    from kernel.types import Tool

    return [Tool(
        name=SEARCH,
        description="Find tools that are not in your tool list (those of MCP servers and plugins) by what they do. "
                    "Returns each match's name, description and parameters; run one with tool_call.",
        parameters={"type": "object", "properties": {
            "query": {"type": "string", "description": "What the tool should do, in a few words (\"create a github "
                                                       "issue\"), or part of its name."},
            "limit": {"type": "integer", "description": "How many tools to return at most."}},
            "required": ["query"]},
        handler=search, toolset="tool_search", parallel_safe=True,
        plugin="tool-search"), Tool(
        name=CALL,
        description="Run a tool that tool_search found, with its arguments as its parameters describe them.",
        parameters={"type": "object", "properties": {
            "name": {"type": "string", "description": "The tool's name, as tool_search gave it."},
            "arguments": {"type": "object", "description": "The tool's arguments."}},
            "required": ["name"]},
        handler=call, toolset="tool_search", plugin="tool-search")]


@hookimpl
def register_toolsets(register):
    register("tool_search", [], description="tool_search and tool_call: the tools of MCP servers and plugins "
             "without their schemas in every request, when they are many (with toolsets named, add this one)")


@hookimpl
def pre_api_request(call, agent):
    """Before each model call: the hidden tools out of the request and the two bridges in, or the bridges out."""
    request = call.request
    if not request.tools or SEARCH not in agent.tools:
        return
    ours = {SEARCH, CALL}
    hidden = {s["name"] for s in request.tools if s["name"] not in ours and hideable(agent, s["name"])}
    out = ours if not hidden or not _hiding(agent, [s for s in request.tools if s["name"] in hidden]) else hidden
    request.tools = [s for s in request.tools if s["name"] not in out]


def hidden_tools(agent) -> "set | None":
    """The tools this agent's requests offer through tool_search (none: an empty set), as its first request will
    choose them; None when the bridges are not offered either (they then leave every request)."""
    if SEARCH not in agent.tools:
        return set()
    hidden = {name for name in agent.tools if name not in (SEARCH, CALL) and hideable(agent, name)}
    return hidden if hidden and _hiding(agent, [agent.tools[n].schema() for n in hidden]) else None


def hideable(agent, name: str) -> bool:
    """A tool of an MCP server or of a plugin installed beside hermes (not a built-in, nor an embedder's own)."""
    plugin = getattr(agent.tools.get(name), "plugin", "")
    if plugin == "mcp":
        return True
    record = agent.host.record(plugin) if plugin and hasattr(agent.host, "record") else None
    return record is not None and record.source not in OURS


def _hiding(agent, schemas: list) -> bool:
    mode = agent.config.get("tools.tool_search.enabled", "auto")
    mode = "on" if mode is True else "off" if mode is False else str(mode).lower()
    if mode != "auto":
        return mode == "on"
    from plugins.compressor import context_window

    window = context_window(agent.provider_config.model, agent.config.get("model_context_length"))
    tokens = len(json.dumps(schemas, ensure_ascii=False)) / 4  # the rule of thumb the compressor uses too
    return tokens > window * float(agent.config.get("tools.tool_search.threshold_pct", 10)) / 100


def _words(text: str) -> set:
    return set(_WORD.findall(re.sub(r"([a-z])([A-Z])", r"\1 \2", text or "").lower()))


def search(args: dict, ctx: Any) -> dict:
    from plugins.tool_args import arg, check_args

    args = check_args(args, SEARCH)
    query = arg(args, "query", str, tool=SEARCH).strip()
    agent, config = ctx.agent, ctx.agent.config
    most = int(config.get("tools.tool_search.max_search_limit", 20))
    limit = max(1, min(arg(args, "limit", int, tool=SEARCH,
                           default=int(config.get("tools.tool_search.search_default_limit", 5))), most))
    wanted, phrase = _words(query), query.lower()
    scored = []
    for name, tool in agent.tools.items():
        if name in (SEARCH, CALL) or not hideable(agent, name):
            continue
        named, described = _words(name), _words(tool.description)
        score = 5 * (phrase in name.lower()) + sum(3 * (w in named) + (w in described) for w in wanted)
        if score:
            scored.append((-score, name, tool))
    found = [{"name": name, "description": tool.description, "parameters": tool.parameters}
             for _, name, tool in sorted(scored)[:limit]]
    if not found:
        return {"tools": [], "note": f"no tool matches {query!r}; try other words (what it does, or a server's name)"}
    return {"tools": found, "matched": len(scored), "note": "run one with tool_call {name, arguments}"}


def call(args: dict, ctx: Any) -> str:
    from types import SimpleNamespace

    from kernel.tools import execute_batch
    from kernel.types import ToolError
    from plugins.tool_args import arg, check_args

    args = check_args(args, CALL)
    name = arg(args, "name", str, tool=CALL).strip()
    arguments = arg(args, "arguments", dict, tool=CALL, default={})
    agent = ctx.agent
    if name in (SEARCH, CALL) or name not in agent.tools:
        raise ToolError(f"tool_call: no tool named {name!r} here; tool_search finds the tools it runs")
    if not hideable(agent, name):
        raise ToolError(f"tool_call: {name} is in your tool list: call it directly")
    inner = {"id": f"{ctx.tool_call_id}.1", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
    turn = agent.turn or SimpleNamespace(task_id=ctx.task_id, turn_id=ctx.turn_id, api_request_id=ctx.api_request_id,
                                         cut=False)
    return execute_batch(agent, [inner], turn)[0]["content"]
