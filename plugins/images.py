"""Images in the user's message: ``hermes run --image``, an API client's image parts, an editor's pasted screenshot.

``agent.image_input_mode`` (hermes-agent's key) says how they reach the model:

* ``native``: as content parts of the user's message (OpenAI's ``image_url`` shape, which each provider plugin
  translates), so a model that sees gets the pixels;
* ``text``: kept in the data folder's ``images`` (named by their content, 0600, gone after 30 days), the message
  saying where, for the ``vision_analyze`` tool (a model that does not see still gets the user's text);
* ``auto`` (the default): ``native`` for a model known to see (by its name: Claude, GPT-4o and later, Gemini, a
  ``-vl`` or ``vision`` model ... :data:`SEEING`), else ``text``.
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any, Optional

from kernel.messages import valid_text

MODES = ("auto", "native", "text")
MAX_BYTES = 20 * 1024 * 1024  # OpenAI's limit for one image; Anthropic's is lower and says so
KEPT_DAYS = 30
SEEING = re.compile(r"claude|gpt-4o|gpt-4\.1|gpt-5|(^|/)(o3(?!-mini)|o4)|gemini|vision|[-_.]vl\b|llava|pixtral|grok-4"
                    r"|gemma-?3|llama-?4|moondream|minicpm-v", re.IGNORECASE)
SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
              (b"GIF89a", "image/gif"))


def sniff(raw: bytes) -> Optional[str]:
    """The image type of ``raw`` by its first bytes (a file's name or a client's word can be wrong, and Anthropic
    refuses an image whose declared type is not its own); ``None``: not an image a model takes."""
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for signature, mime in SIGNATURES if raw.startswith(signature)), None)


def decoded(data: Any) -> Optional[tuple]:
    """(bytes, type) of base64 ``data`` that is an image a model takes; ``None`` for anything else."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (ValueError, TypeError):  # binascii.Error is a ValueError
        return None
    mime = sniff(raw)
    return (raw, mime) if mime else None


def data_url(url: str) -> tuple:
    """(type, base64 data) of a ``data:`` URL (``data:image/png;base64,...``)."""
    return url[5:].partition(";")[0], url.partition(",")[2]


FIT_BYTES = 5 * 2**20 * 3 // 4  # the largest file whose base64 every built-in provider takes (Claude's 5 MB)
FIT_SIDE = 8000  # Claude's longest side
SHRUNK_SIDE = 2048  # a shrunk image's longest side: the providers scale larger ones down themselves


def fitted(raw: bytes, mime: str) -> tuple:
    """(bytes, type) of the image as every provider takes it: one over Claude's 5 MB (as base64) or 8000 pixels a side
    is shrunk to a JPEG of at most 2048 pixels a side, when Pillow is installed (``pip install
    'hermes-kernel[images]'``); else, or when it cannot be read, as it is (Claude is then sent a note instead)."""
    try:
        from PIL import Image, ImageOps
    except ImportError:
        return raw, mime
    import io

    try:
        with Image.open(io.BytesIO(raw)) as image:
            if len(raw) <= FIT_BYTES and max(image.size) <= FIT_SIDE:
                return raw, mime
            picture = ImageOps.exif_transpose(image)  # a phone's photo stands as it was taken
            if picture.mode != "RGB":  # JPEG has no transparency: it goes on white
                flat = Image.new("RGB", picture.size, "white")
                flat.paste(picture, mask=picture.convert("RGBA").getchannel("A"))
                picture = flat
            side = SHRUNK_SIDE
            while True:
                picture.thumbnail((side, side))
                out = io.BytesIO()
                picture.save(out, "JPEG", quality=85, optimize=True)
                if out.tell() <= FIT_BYTES or side <= 256:
                    return out.getvalue(), "image/jpeg"
                side //= 2
    except (OSError, ValueError, Image.DecompressionBombError):  # not readable as an image: the provider decides
        return raw, mime


def read_image(path: str) -> tuple:
    """(bytes, type) of the image file ``path``; ValueError with one line when it is not one, or too big."""
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise ValueError(f"{path}: {size / 2**20:.1f} MB; an image may have at most {MAX_BYTES // 2**20} MB")
        with open(path, "rb") as image:
            raw = image.read()
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    mime = sniff(raw)
    if mime is None:
        raise ValueError(f"{path}: not an image a model takes (PNG, JPEG, GIF or WebP)")
    return fitted(raw, mime)


def image_option(command):
    """``--image FILE|URL`` (again for more) on a command: the files read and checked before anything runs."""
    import click

    def read(ctx, param, paths):
        try:  # an http(s) URL is the provider's (or vision_analyze's) to fetch
            return [path if path.startswith(("http://", "https://")) else read_image(path) for path in paths]
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx, param) from None

    return click.option("--image", "images", multiple=True, metavar="FILE|URL", callback=read,
                        help="An image for the model to see with the prompt (again for more).")(command)


def mode(config: Any, model: str) -> str:
    """``native`` or ``text``: how this conversation's images reach ``model``."""
    chosen = str(config.get("agent.image_input_mode", "auto") or "auto").strip().lower()
    if chosen in ("native", "text"):
        return chosen
    return "native" if SEEING.search(model or "") else "text"


def with_images(text: str, images: list, how: str) -> Any:
    """The user's message: ``text`` alone without ``images`` (each (bytes, type), or an http(s) URL); else its
    content parts (``native``) or its text with where each image is (``text``)."""
    if not images:
        return text
    if how == "native":  # no empty text part: Anthropic refuses one; valid_text: as the kernel makes a string
        return [{"type": "text", "text": valid_text(text)}] * bool(text) + [
            {"type": "image_url", "image_url": {"url": image if isinstance(image, str) else
                                                f"data:{image[1]};base64,{base64.b64encode(image[0]).decode()}"}}
            for image in images]
    return "\n\n".join(filter(None, [text, *map(_where, images)]))


def _where(image: Any) -> str:
    if isinstance(image, str):  # a URL: vision_analyze fetches it
        return attached(image)
    try:
        return attached(keep(*image))
    except OSError as exc:  # a data folder that cannot be written: the turn goes on, the model told
        return f"[an image the user attached could not be kept here: {exc.strerror or exc}]"


def attached(where: Any) -> str:
    """What the model reads of an image it does not get: where it is, for vision_analyze."""
    return f"[an image the user attached: {where} (the vision_analyze tool shows it to a model that sees)]"


def client_content(content: Any) -> Any:
    """An API client's message content as the agent's: a string stays one; a list of parts (chat's ``text`` and
    ``image_url``, the Responses API's ``input_text`` and ``input_image``) becomes its text, or text and
    ``image_url`` parts when it holds an image (a ``data:`` URL's type told by its bytes); other parts (audio,
    files) are dropped. ``None``: neither a string nor a list. ValueError: a ``data:`` URL that is no image."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        return None
    parts = []
    for number, part in enumerate(p for p in content if isinstance(p, dict)):
        if part.get("type") in ("text", "input_text") and isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif part.get("type") in ("image_url", "input_image"):
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            detail = (image if isinstance(image, dict) else part).get("detail")  # low, high, auto: OpenAI's
            if isinstance(url, str) and url.strip():
                kept = {"url": _checked(url.strip(), number), **({"detail": detail} if isinstance(detail, str) else {})}
                parts.append({"type": "image_url", "image_url": kept})
    if not any(part["type"] == "image_url" for part in parts):
        return "\n".join(part["text"] for part in parts)
    return parts


def has_content(content: Any) -> bool:
    """Does a user's message say anything: text that is not blank, or an image?"""
    if isinstance(content, list):
        return any(p.get("type") == "image_url" or str(p.get("text") or "").strip() for p in content)
    return bool(str(content or "").strip())


def _checked(url: str, number: int) -> str:
    if not url.startswith("data:"):
        return url
    image = decoded(data_url(url)[1])
    if image is None:
        raise ValueError(f"part {number}: its data: URL is not an image a model takes (PNG, JPEG, GIF or WebP)")
    raw, mime = fitted(*image)
    return f"data:{mime};base64,{data_url(url)[1] if raw is image[0] else base64.b64encode(raw).decode()}"


def shaped(content: Any, how: str) -> Any:
    """The user's message with its image parts as ``how`` wants them: ``native`` as they are; ``text`` its text, each
    image kept in the data folder (a ``data:`` URL) or named by its URL, for vision_analyze."""
    if how == "native" or not isinstance(content, list):
        return content
    text = "\n".join(part["text"] for part in content if part.get("type") == "text")
    urls = [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]  # data: ones _checked
    return with_images(text, [decoded(data_url(url)[1]) if url.startswith("data:") else url for url in urls], "text")


def keep(raw: bytes, mime: str) -> Path:
    """The image in the data folder's ``images`` (named by its content; older ones than :data:`KEPT_DAYS` go)."""
    import hashlib
    import time

    from hermes.host.paths import data_dir

    folder = data_dir() / "images"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    for old in folder.iterdir():  # the folder does not grow for ever
        try:
            if time.time() - old.stat().st_mtime > KEPT_DAYS * 86400:
                old.unlink()
        except OSError:
            pass
    path = folder / f"{hashlib.sha256(raw).hexdigest()[:16]}.{mime.partition('/')[2].replace('jpeg', 'jpg')}"
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(raw)
    return path
