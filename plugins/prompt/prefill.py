"""hermes-agent's ``prefill_messages_file``: a JSON array of ``{"role": "user" | "assistant", "content": ...}``
messages, read when it changes. A file that is not there or not such an array is one warning per process and no
prefill: the conversation goes on without it."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger("hermes.prompt")
_read: dict = {}  # path -> (its stamp, the messages)
_said: set = set()


def prefill(config: Any) -> list:
    """The messages of the configured file (copies: a provider may change what it is given), or []."""
    return problem_and_messages(config, say=True)[1]


def problem_and_messages(config: Any, say: bool = False) -> tuple:
    """(why the configured file gives no messages, or "", its messages); ``say``: warn of it once per process."""
    name = str(config.get("prefill_messages_file") or "").strip()
    path = Path(os.path.expanduser(name))
    if not path.is_absolute() and getattr(config, "path", None):
        path = Path(config.path).parent / path
    try:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        if _read.get(str(path), (None,))[0] != stamp:
            _read[str(path)] = (stamp, _messages(json.loads(path.read_text(encoding="utf-8"))))
        return "", [dict(message) for message in _read[str(path)][1]]
    except (OSError, ValueError) as exc:
        why = f"{path} does not exist" if isinstance(exc, FileNotFoundError) else \
            f"{path}: {exc}" if isinstance(exc, _NotMessages) else f"{path} cannot be read: {exc}"
        if say and why not in _said:
            _said.add(why)
            log.warning("prefill_messages_file: %s; the requests go without it", why)
        return why, []


class _NotMessages(ValueError):
    pass


def _messages(data: Any) -> list:
    if not isinstance(data, list):
        raise _NotMessages(f"expected a JSON array of messages, got {type(data).__name__}")
    for number, message in enumerate(data, 1):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant", "system") or \
                not isinstance(message.get("content"), (str, list)):
            raise _NotMessages(f"message {number} is not {{\"role\": \"user\" or \"assistant\", \"content\": ...}}")
    return data
