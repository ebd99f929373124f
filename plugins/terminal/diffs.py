"""The change a file tool made, shown under its line in chat and ``hermes run`` (hermes-agent's
``display.inline_diffs``): patch's own diff, and for write_file the file as it was against as it is. The person
sees what changed without opening the file; the model's result is not touched."""

from __future__ import annotations

import json
from typing import Any, Optional

MOST_LINES = 40  # of one diff; the rest is counted
READ_LIMIT = 256 * 1024  # a bigger file's rewrite is not diffed: its line alone says it was written


def before(tool_name: str, args: Any, agent: Any) -> Optional[tuple]:
    """For write_file: (its path, the file's text before the call, "" when it does not exist yet); else None."""
    if tool_name != "write_file" or not isinstance(args, dict) or not isinstance(args.get("path"), str):
        return None
    from kernel.types import ToolError
    from plugins.tool_args import resolve_path, working_folder

    try:
        path = resolve_path(args["path"], tool_name, working_folder(agent))
        if not path.exists():
            return path, ""
        return (path, path.read_text(encoding="utf-8")) if path.stat().st_size <= READ_LIMIT else None
    except (OSError, UnicodeDecodeError, ToolError):
        return None


def diff_of(tool_name: str, result: str, kept: Optional[tuple]) -> str:
    """The unified diff of the change, or ""."""
    if tool_name == "patch":
        try:
            diff = json.loads(result).get("diff")
        except (ValueError, AttributeError):
            return ""
        return diff if isinstance(diff, str) else ""
    if kept is None:
        return ""
    import difflib

    path, old = kept
    try:
        new = path.read_text(encoding="utf-8") if path.stat().st_size <= READ_LIMIT else None
    except (OSError, UnicodeDecodeError):
        return ""
    if new is None:
        return ""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{path.name}", f"b/{path.name}", n=2))


def shown(diff: str) -> list:
    """``(line, role)`` pairs to print, at most :data:`MOST_LINES` of the diff's and one saying what is left out."""
    lines = diff.splitlines()
    lines = lines[next((i for i, line in enumerate(lines) if line.startswith("@@")), len(lines)):]  # no file headers
    out = [(line, "added" if line.startswith("+") else "removed" if line.startswith("-") else
            "tool" if line.startswith("@@") else "dim") for line in lines[:MOST_LINES]]
    if len(lines) > MOST_LINES:
        out.append((f"... {len(lines) - MOST_LINES} more lines of the diff", "dim"))
    return out
