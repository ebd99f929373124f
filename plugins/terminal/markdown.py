"""The answer's Markdown on a terminal (``display.final_response_markdown``, hermes-agent's key): ``render`` shows
**bold** bold and `code` in colour, ``strip`` takes the markers away, ``raw`` leaves the text as the model wrote it.

Line by line, so it works on a streamed answer: a line is shown when its newline comes (or when it grows wider than
the terminal). Code blocks are shown as they are, fence lines left out; a table is held until it ends, then shown
with its columns lined up. Only a terminal sees this: an answer piped to a file or another program stays the model's
Markdown."""

from __future__ import annotations

import re

import click

FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
RULE = re.compile(r"^\s{0,3}([-_*])(\s*\1){2,}\s*$")
QUOTE = re.compile(r"^(\s{0,3})>\s?")
BULLET = re.compile(r"^(\s*)[-*+]\s+(?=\S)")
# inline spans, tried in this order at each place: code first (nothing inside it is Markdown)
INLINE = re.compile(
    r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
    r"|!?\[(?P<link_text>[^\]]+)\]\((?P<url>[^)\s]+)\)"
    r"|(?P<strong>\*\*|__)(?P<strong_text>\S(?:.*?\S)?)(?P=strong)(?!\w)"
    r"|(?<![\w*])\*(?P<em_text>[^\s*](?:[^*]*?[^\s*])?)\*(?![\w*])"
    r"|(?<!\w)_(?P<em2_text>[^\s_](?:[^_]*?[^\s_])?)_(?!\w)"
    r"|~~(?P<strike_text>\S(?:.*?\S)?)~~")


class Markdown:
    """One answer's lines, for ``mode`` ``render`` (with ``colour``) or ``strip``; it remembers code blocks."""

    def __init__(self, mode: str, colour: bool, width: int = 80):
        self.colour = colour and mode == "render"
        self.fence = ""  # the open code block's fence
        self.width = width  # the terminal's: a wider table is shown a row at a time
        self.table: list = []  # the rows of a table held back until it ends (its columns need all of them)

    def _style(self, text: str, **style) -> str:
        return click.style(text, **style) if self.colour else text

    def line(self, text: str, continued: bool = False):
        """The line as shown (without its newline; a table that ended before it comes first), or ``None`` for a
        fence line and a table's row; ``continued``: the rest of a line whose start is shown already."""
        if not self.fence and not continued and text.lstrip().startswith("|"):
            self.table.append(text)
            return None
        table = self.finish()
        shown = self._line(text, continued)
        return shown if table is None else table if shown is None else f"{table}\n{shown}"

    def finish(self):
        """The table held back, as shown (the answer or the model call ended), or ``None``."""
        rows, self.table = self.table, []
        return _table(self, rows) if rows else None

    def _line(self, text: str, continued: bool):
        fence = None if continued else FENCE.match(text)
        if self.fence:
            if fence and fence.group(1)[0] == self.fence[0] and len(fence.group(1)) >= len(self.fence) \
                    and not text[fence.end():].strip():
                self.fence = ""
                return None
            return self._style(text, fg="cyan")
        if continued:
            return self.inline(text)
        if fence:
            self.fence = fence.group(1)
            return None
        if not text.strip(" *"):  # "* * * * *": a cron line, not a rule or a list
            return text
        if RULE.match(text):
            return self._style("─" * 24, dim=True)
        heading = HEADING.match(text)
        if heading:
            return self._style(self.inline(heading.group(2)), bold=True, underline=len(heading.group(1)) == 1)
        quote = QUOTE.match(text)
        if quote:
            return quote.group(1) + self._style("│ ", dim=True) + self.inline(text[quote.end():])
        bullet = BULLET.match(text)
        if bullet:
            return bullet.group(1) + "• " + self.inline(text[bullet.end():])
        return self.inline(text)

    def inline(self, text: str) -> str:
        def span(found: re.Match) -> str:
            if found.group("code"):
                return self._style(found.group("code_text"), fg="cyan")
            if found.group("url"):
                shown, url = found.group("link_text"), found.group("url")
                return self._style(shown, underline=True) + ("" if shown == url else self._style(f" ({url})", dim=True))
            if found.group("strong"):
                return self._style(self.inline(found.group("strong_text")), bold=True)
            if found.group("strike_text") is not None:
                return self._style(found.group("strike_text"), strikethrough=True)
            return self._style(found.group("em_text") or found.group("em2_text"), italic=True)

        return INLINE.sub(span, text)


DIVIDER = re.compile(r"^\s*\|?(\s*:?-+:?\s*\|)*\s*:?-+:?\s*\|?\s*$")
ESCAPES = re.compile(r"\x1b\[[0-9;]*m")


def _cells(row: str) -> list:
    """A table row's cells: split at each ``|`` outside code and not escaped."""
    cells, cell, code = [], "", False
    text = row.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") and not text.endswith("\\|") else text
    for i, char in enumerate(text):
        if char == "`":
            code = not code
        if char == "|" and not code and (i == 0 or text[i - 1] != "\\"):
            cells.append(cell.strip())
            cell = ""
        else:
            cell += char
    return [*cells, cell.strip()]


def _width(text: str) -> int:
    """The columns ``text`` takes on a terminal (its colours none, a wide character two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in ESCAPES.sub("", text))


def _aligned(cell: str, room: int, left: bool, right: bool) -> str:
    """A cell in the room its column leaves: ``---:`` to the right, ``:---:`` centred, else to the left."""
    if right and not left:
        return " " * room + cell
    if right and left:
        return " " * (room // 2) + cell + " " * (room - room // 2)
    return cell + " " * room


def _table(md: Markdown, rows: list) -> str:
    """A Markdown table with its columns lined up (its header bold), or, wider than the terminal, each row as
    ``header: value`` lines; rows without a divider under the first, as they are."""
    if len(rows) < 2 or not DIVIDER.match(rows[1]):  # no table without its divider ("| grep x" in prose)
        return "\n".join(md.inline(row) for row in rows)
    cells = [[md.inline(c) for c in _cells(row)] for i, row in enumerate(rows) if i != 1]
    count = max(len(row) for row in cells)
    cells = [row + [""] * (count - len(row)) for row in cells]
    widths = [max(_width(row[i]) for row in cells) for i in range(count)]
    aligns = [(c.startswith(":"), c.endswith(":")) for c in (_cells(rows[1]) + [""] * count)[:count]]
    if sum(widths) + 2 * (count - 1) > md.width:
        names = [ESCAPES.sub("", name) for name in cells[0]]
        return "\n\n".join("\n".join(f"{md._style(name or '-', bold=True)}: {value}".rstrip()
                                     for name, value in zip(names, row))
                           for row in cells[1:])
    lines = ["  ".join(_aligned(cell, width - _width(cell), *align) for cell, width, align in zip(row, widths, aligns))
             .rstrip() for row in cells]
    lines[0] = md._style(lines[0], bold=True)
    lines.insert(1, md._style("  ".join("─" * width for width in widths), dim=True))
    return "\n".join(lines)
