"""Built-in plugin image-gen: the model makes pictures with ``image_generate`` (hermes-agent's tool).

The tool asks an OpenAI-compatible images endpoint (``POST /v1/images/generations``: OpenAI's own by default, or
``image_gen.base_url``) through the openai SDK for one picture of the prompt, square, landscape or portrait, and
keeps it in the data folder's ``generated_images/``; the model reads where it is. ``image_gen.model``
(``gpt-image-1``) and ``image_gen.api_key_env`` (``OPENAI_API_KEY``) say which model and key; the tool is offered
only where that key is set. hermes-agent's other image backends (FAL, its managed gateway) are not here."""

from __future__ import annotations

import os

from kernel import hookimpl
from kernel.types import Tool, ToolError

SIZES = {"square": "1024x1024", "landscape": "1536x1024", "portrait": "1024x1536"}


@hookimpl
def register_config(declare):
    declare("image_gen.model", str, "gpt-image-1", "the model image_generate asks for a picture")
    declare("image_gen.base_url", str, "", "an OpenAI-compatible images endpoint (empty: OpenAI's)")
    declare("image_gen.api_key_env", str, "OPENAI_API_KEY", "the variable holding the images endpoint's key")


def _key(config) -> str:
    return os.environ.get(str(config.get("image_gen.api_key_env") or "OPENAI_API_KEY"), "").strip()


def image_generate(args, ctx):
    import base64

    import openai

    from hermes.host.files import atomic_write
    from plugins.tool_args import arg, check_args, endpoint_error, fresh_path

    args = check_args(args, "image_generate")
    prompt = arg(args, "prompt", str, tool="image_generate").strip()
    aspect = arg(args, "aspect_ratio", str, tool="image_generate", default="square").strip().lower()
    if not prompt:
        raise ToolError("image_generate: 'prompt' is empty: say what the picture shows")
    if aspect not in SIZES:
        raise ToolError(f"image_generate: aspect_ratio is one of {', '.join(SIZES)}, not {aspect!r}")
    config = ctx.agent.config
    model = str(config.get("image_gen.model") or "gpt-image-1")
    client = openai.OpenAI(api_key=_key(config) or "none", base_url=config.get("image_gen.base_url") or None,
                           max_retries=1, timeout=300)
    try:
        answer = client.images.generate(model=model, prompt=prompt, size=SIZES[aspect], n=1)
        data = base64.b64decode(answer.data[0].b64_json or "", validate=True)
    except openai.APIError as exc:
        raise endpoint_error("image_generate", "images", exc) from None
    except (ValueError, IndexError, TypeError) as exc:
        raise ToolError(f"image_generate: no picture came ({str(exc).splitlines()[0][:300] or type(exc).__name__})") \
            from None
    if not data:
        raise ToolError("image_generate: the images endpoint sent no picture (it may only send links, which are "
                        "not fetched)")
    path = fresh_path(config.data_dir / "generated_images", prompt, ".png", "image")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)
    return {"path": str(path), "model": model, "size": SIZES[aspect], "bytes": len(data),
            "revised_prompt": getattr(answer.data[0], "revised_prompt", None) or None}


@hookimpl
def register_tools(register, config):
    register(Tool(
        name="image_generate",
        description="Make a picture from a description with an image model; the picture is saved and its path "
                    "returned. aspect_ratio: square (default), landscape or portrait.",
        parameters={"type": "object", "properties": {
            "prompt": {"type": "string", "description": "What the picture shows, in detail"},
            "aspect_ratio": {"type": "string", "enum": list(SIZES)}}, "required": ["prompt"]},
        handler=image_generate, toolset="image_gen", check=lambda: bool(_key(config))))
