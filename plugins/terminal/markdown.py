"""The answer's Markdown on a terminal (``display.final_response_markdown``, hermes-agent's key): ``render`` shows
**bold** bold and `code` in colour, ``strip`` takes the markers away, ``raw`` leaves the text as the model wrote it.

Line by line, so it works on a streamed answer: a line is shown when its newline comes (or when it grows wider than
the terminal). Code blocks are shown as they are, fence lines left out. Only a terminal sees this: an answer piped
to a file or another program stays the model's Markdown."""

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

    def __init__(self, mode: str, colour: bool):
        self.colour = colour and mode == "render"
        self.fence = ""  # the open code block's fence

    def _style(self, text: str, **style) -> str:
        return click.style(text, **style) if self.colour else text

    def line(self, text: str, continued: bool = False):
        """The line as shown (without its newline), or ``None`` for a fence line; ``continued``: the rest of a line
        whose start is shown already."""
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
