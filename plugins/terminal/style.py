"""Colour for the terminal front end, with click's styles: only on a terminal,
never when ``NO_COLOR`` is set (https://no-color.org) or ``TERM=dumb``.

The answer itself stays in the terminal's own colour; what the agent does
(tool lines, status) is dimmer, problems stand out."""

from __future__ import annotations

import os

import click

# role -> click.style arguments
ROLES = {
    "prompt": {"fg": "green", "bold": True},
    "tool": {"fg": "cyan"},
    "ok": {"fg": "green"},
    "failed": {"fg": "red"},
    "status": {"fg": "yellow"},
    "error": {"fg": "red", "bold": True},
    "dim": {"dim": True},
    "question": {"fg": "magenta", "bold": True},
    "added": {"fg": "green"},  # a diff's lines
    "removed": {"fg": "red"},
}


def colour_on(stream) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def paint(text: str, role: str, stream) -> str:
    """``text`` styled for ``role`` when ``stream`` shows colour, else as it is."""
    return click.style(text, **ROLES[role]) if colour_on(stream) else text
