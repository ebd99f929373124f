"""An MCP server's tools as :class:`kernel.types.Tool` records: hermes-agent's
names (``mcp__<server>__<tool>``, each part sanitised), the server's schema and
description, and results the model can read (text; images and binary resources
saved to files it is told of; structured content kept beside the text)."""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import re
from pathlib import Path
from typing import Any, Callable, Optional

from kernel.types import Tool, ToolError

PREFIX, DELIMITER = "mcp__", "__"
NAME_LIMIT = 64  # what the providers accept


def sanitize(part: str) -> str:
    """One part of a tool name: anything but ``[A-Za-z0-9_]`` becomes ``_`` (hyphens too, as hermes-agent does)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", str(part or ""))


def tool_name(server: str, tool: str) -> str:
    name = f"{PREFIX}{sanitize(server)}{DELIMITER}{sanitize(tool)}"
    if len(name) <= NAME_LIMIT:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]  # still unique, within what providers take
    return f"{name[:NAME_LIMIT - 9]}_{digest}"


def input_schema(schema: Any) -> dict:
    """The server's input schema as the providers take it: an object schema (a missing or odd one is an empty one)."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    schema = dict(schema)
    if schema.get("type") != "object":
        schema["type"] = "object"
    if not isinstance(schema.get("properties"), dict):
        schema["properties"] = {}
    return schema


def _media_file(cache: Path, data: str, mime: str) -> str:
    """Save base64 ``data`` under ``cache`` (named by its content); the path, or why not."""
    try:
        raw = base64.b64decode(data, validate=False)
    except (ValueError, TypeError) as exc:
        return f"(undecodable {mime} data: {exc})"
    extension = mimetypes.guess_extension(mime or "") or ".bin"
    path = cache / f"{hashlib.sha256(raw).hexdigest()[:16]}{extension}"
    try:
        cache.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_bytes(raw)
    except OSError as exc:
        return f"(could not save {mime}: {exc})"
    return f"{path} ({mime}, {len(raw)} bytes)"


def content_text(blocks: list, cache: Path) -> str:
    """The text of MCP content blocks: text as it is, images, audio and binary resources as saved files."""
    parts = []
    for block in blocks or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {_media_file(cache, block.data, block.mime_type)}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if text is not None else
                         f"[resource {resource.uri}: {_media_file(cache, resource.blob, resource.mime_type or '')}]")
        elif kind == "resource_link":
            about = f" ({block.description})" if block.description else ""
            parts.append(f"[resource link: {block.uri}{about}]")
        else:
            parts.append(f"[{kind or type(block).__name__} content]")
    return "\n".join(p for p in parts if p)


def call_result(result: Any, cache: Path) -> str:
    """A ``CallToolResult`` as the model reads it (hermes-agent's shape); an error result is a :class:`ToolError`."""
    text = content_text(result.content, cache)
    if result.is_error:
        raise ToolError(text or "the MCP tool returned an error")
    structured = result.structured_content
    if structured is None:
        return json.dumps({"result": text}, ensure_ascii=False)
    if text:
        return json.dumps({"result": text, "structuredContent": structured}, ensure_ascii=False, default=str)
    return json.dumps({"result": structured}, ensure_ascii=False, default=str)


UTILITIES = {
    "list_resources": ("List the resources of MCP server '{server}'", {}, []),
    "read_resource": ("Read a resource of MCP server '{server}' by its URI",
                      {"uri": {"type": "string", "description": "the URI of the resource"}}, ["uri"]),
    "list_prompts": ("List the prompts of MCP server '{server}'", {}, []),
    "get_prompt": ("Get a prompt of MCP server '{server}' by name",
                   {"name": {"type": "string", "description": "the prompt's name"},
                    "arguments": {"type": "object", "description": "its arguments", "additionalProperties": True}},
                   ["name"]),
}


def make_tool(server, name: str, description: str, schema: dict, handler: Callable, parallel: bool) -> Tool:
    return Tool(name=name, description=description, parameters=schema, handler=handler, toolset=server.toolset,
                parallel_safe=parallel, plugin="mcp")


def utility_tools(server, capabilities: Any, handler_for: Callable[[str], Callable]) -> list:
    """hermes-agent's resource and prompt tools, where the policy allows and the server has them."""
    tools = []
    for kind, (text, properties, required) in UTILITIES.items():
        family = "resources" if "resource" in kind else "prompts"
        if not getattr(server, family) or getattr(capabilities, family, None) is None:
            continue
        schema = {"type": "object", "properties": properties, **({"required": required} if required else {})}
        tools.append(make_tool(server, tool_name(server.name, kind), text.format(server=server.name), schema,
                               handler_for(kind), parallel=True))
    return tools


def describe_listing(kind: str, result: Any, cache: Path) -> str:
    """A utility tool's answer (a listing, a resource, a prompt) as JSON the model reads."""
    if kind == "list_resources":
        items = [{"uri": str(r.uri), "name": r.name, "description": r.description, "mime_type": r.mime_type}
                 for r in result.resources]
        return json.dumps({"resources": items}, ensure_ascii=False)
    if kind == "list_prompts":
        items = [{"name": p.name, "description": p.description,
                  "arguments": [{"name": a.name, "required": bool(a.required), "description": a.description}
                                for a in p.arguments or []]} for p in result.prompts]
        return json.dumps({"prompts": items}, ensure_ascii=False)
    if kind == "read_resource":
        contents = []
        for item in result.contents:
            text = getattr(item, "text", None)
            contents.append({"uri": str(item.uri), "mime_type": item.mime_type,
                             **({"text": text} if text is not None else
                                {"saved": _media_file(cache, item.blob, item.mime_type or "")})})
        return json.dumps({"contents": contents}, ensure_ascii=False)
    messages = [{"role": m.role, "content": getattr(m.content, "text", None) or f"[{m.content.type} content]"}
                for m in result.messages]
    return json.dumps({"description": result.description, "messages": messages}, ensure_ascii=False)


def read_only(tool: Any) -> bool:
    annotations: Optional[Any] = getattr(tool, "annotations", None)
    return bool(annotations is not None and annotations.read_only_hint)
