"""``vision_analyze``: the model looks at an image through a model that sees.

The image (a file here, an http(s) URL fetched as ``web_extract`` fetches, with the same address checks, or a
``data:`` URL) goes with the question to the model ``auxiliary.vision`` names (hermes-agent's block), else to the
conversation's own; the tool returns its answer. PNG, JPEG, GIF and WebP, told by their bytes, up to
``web.max_bytes``. One at a time: an auxiliary model's call borrows the agent's provider for its duration."""

from __future__ import annotations

import base64
import binascii
import os

from kernel.types import ProviderError, Tool, ToolError
from plugins.images import sniff
from plugins.tool_args import arg, check_args, is_interrupted, resolve_path

DEFAULT_QUESTION = "Describe this image in detail: what it shows, any text in it, anything unusual."


def _load(source: str, settings: dict, ctx) -> bytes:
    limit = settings["max_bytes"]
    if source.startswith("data:"):
        try:
            return base64.b64decode(source.partition(",")[2], validate=True)
        except (binascii.Error, ValueError):
            raise ToolError("vision_analyze: the data: URL holds no base64 image") from None
    if source.lower().startswith(("http://", "https://")):
        from plugins.web import refused
        from plugins.web.fetching import fetch

        if why := refused(source, ctx.agent, "URL"):
            raise ToolError(f"vision_analyze: {why}")

        try:
            got = fetch(source, cancelled=lambda: is_interrupted(ctx.agent), **settings)
        except ToolError as exc:
            raise ToolError(f"vision_analyze: {source[:80]}: {exc}") from None
        if got.status >= 400:
            raise ToolError(f"vision_analyze: {source[:80]} answered HTTP {got.status} {got.reason}".rstrip())
        if got.truncated:
            raise ToolError(f"vision_analyze: the image is larger than web.max_bytes ({limit:,} bytes)")
        return got.body
    path = resolve_path(source, "vision_analyze")
    if not path.is_file():
        raise ToolError(f"vision_analyze: no image file at {source}")
    if os.path.getsize(path) > limit:
        raise ToolError(f"vision_analyze: {source} is larger than web.max_bytes ({limit:,} bytes)")
    return path.read_bytes()


def look(ctx, data: bytes, question: str, tool: str) -> str:
    """What the model that sees (``auxiliary.vision``, else the conversation's) answers about the image ``data``."""
    from hermes.host.config import ConfigError
    from plugins import auxiliary

    kind = sniff(data)
    try:
        call = auxiliary.caller(ctx.agent, auxiliary.provider_config(ctx.agent.config, "vision"), "vision")
    except ConfigError as exc:
        raise ToolError(f"{tool}: {exc}") from None
    if call is None:
        raise ToolError(f"{tool}: this agent cannot call a model")
    image = f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"
    ctx.progress(f"asking about {kind} ({len(data):,} bytes)")
    try:
        return call([{"role": "user", "content": [{"type": "text", "text": question},
                                                  {"type": "image_url", "image_url": {"url": image}}]}])
    except ProviderError as exc:
        raise ToolError(f"{tool}: the model could not look at it: {exc.message or exc}") from None


def make_vision_analyze(settings: dict) -> Tool:
    def vision_analyze(args, ctx):
        args = check_args(args, "vision_analyze")
        source = arg(args, "image_url", str, tool="vision_analyze").strip()
        question = arg(args, "question", str, tool="vision_analyze", default="").strip() or DEFAULT_QUESTION
        data = _load(source, settings, ctx)
        if not sniff(data):
            shown = "the data: URL" if source.startswith("data:") else source  # not its kilobytes of base64
            raise ToolError(f"vision_analyze: {shown} is not a PNG, JPEG, GIF or WebP image")
        return {"analysis": look(ctx, data, question, "vision_analyze")}

    return Tool(
        name="vision_analyze",
        description=("Look at an image: a file path, an http(s) URL or a data: URL (PNG, JPEG, GIF or WebP). A model "
                     "that sees answers the question about it (default: describe it, text in it included)."),
        parameters={"type": "object", "properties": {
            "image_url": {"type": "string", "description": "The image: a path, an http(s) URL or a data: URL"},
            "question": {"type": "string", "description": "What to find out about it"}},
            "required": ["image_url"]},
        handler=vision_analyze, toolset="vision")
