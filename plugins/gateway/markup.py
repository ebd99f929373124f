"""The model's Markdown as Telegram's HTML (``parse_mode: HTML``), the subset Telegram shows: bold, italic,
strikethrough, inline code, code blocks with their language, links, quotes; a heading is bold, a list item's mark a
bullet, a table a monospaced block (a phone's screen cannot lay one out). Whatever is not markup is escaped, so the
model's ``<`` and ``&`` are text. Telegram refusing the result is answered by the plain text
(:meth:`plugins.gateway.telegram.Telegram.send`)."""

from __future__ import annotations

import html
import re

FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+#.-]*)\s*$")
INLINE = re.compile(
    r"`([^`\n]+)`"                                   # code
    r"|\[([^\]\n]+)\]\((https?://[^)\s]+)\)"         # a link
    r"|\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__"  # bold
    r"|~~(?=\S)(.+?)(?<=\S)~~"                       # strikethrough
    r"|(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"  # italic, *so*
    r"|(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])"    # italic, _so_ (not snake_case)
)
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")


def _inline(text: str) -> str:
    out, at = [], 0
    for found in INLINE.finditer(text):
        out.append(html.escape(text[at:found.start()], quote=False))
        code, label, url, bold, bold2, strike, italic, italic2 = found.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code, quote=False)}</code>")
        elif label is not None:
            out.append(f'<a href="{html.escape(url)}">{_inline(label)}</a>')
        elif bold or bold2:
            out.append(f"<b>{_inline(bold or bold2)}</b>")
        elif strike:
            out.append(f"<s>{_inline(strike)}</s>")
        else:
            out.append(f"<i>{_inline(italic or italic2)}</i>")
        at = found.end()
    out.append(html.escape(text[at:], quote=False))
    return "".join(out)


def to_html(markdown: str) -> str:
    """``markdown`` as Telegram HTML."""
    out, lines, i = [], markdown.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:  # to the closing fence (or the end: an answer cut short)
            body, i = [], i + 1
            while i < len(lines) and not lines[i].strip().startswith(fence.group(1)):
                body.append(lines[i])
                i += 1
            language = f' class="language-{html.escape(fence.group(2))}"' if fence.group(2) else ""
            out.append(f"<pre><code{language}>{html.escape(chr(10).join(body), quote=False)}</code></pre>")
            i += 1
            continue
        if TABLE_ROW.match(line):
            rows = []
            while i < len(lines) and TABLE_ROW.match(lines[i]):
                rows.append(lines[i].strip())
                i += 1
            out.append(f"<pre>{html.escape(chr(10).join(rows), quote=False)}</pre>")
            continue
        heading = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        quote = re.match(r"^\s*>\s?(.*)$", line)
        item = re.match(r"^(\s*)[-*+]\s+(.*)$", line)
        if heading:
            out.append(f"<b>{_inline(heading.group(1))}</b>")
        elif quote:
            out.append(f"<blockquote>{_inline(quote.group(1))}</blockquote>")
        elif item:
            out.append(f"{item.group(1)}• {_inline(item.group(2))}")
        else:
            out.append(_inline(line))
        i += 1
    return "\n".join(out).replace("</blockquote>\n<blockquote>", "\n")


def to_starred(text: str, link: str) -> str:
    """The model's Markdown as Slack and WhatsApp show it: **bold** and __bold__ as *bold*, ~~gone~~ as ~gone~, a
    heading as a bold line, [label](url) as ``link`` says (``\\1`` the label, ``\\2`` the address); code, italics
    with _ and quotes are theirs already."""
    parts = re.split(r"(```.*?```|`[^`\n]+`)", text, flags=re.DOTALL)  # code is left as it is
    for i in range(0, len(parts), 2):
        piece = re.sub(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__", lambda m: f"*{m[1] or m[2]}*", parts[i])
        piece = re.sub(r"~~(?=\S)(.+?)(?<=\S)~~", r"~\1~", piece)
        piece = re.sub(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)", link, piece)
        parts[i] = re.sub(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", r"*\1*", piece, flags=re.MULTILINE)
    return "".join(parts)


STYLES = {"b": "BOLD", "i": "ITALIC", "s": "STRIKETHROUGH", "code": "MONOSPACE", "pre": "MONOSPACE"}


def to_styled(markdown: str) -> tuple:
    """``markdown`` as plain text and the ranges that style it (Signal's ``START:LENGTH:STYLE``, counted in UTF-16
    units), read from :func:`to_html`'s HTML: a link's address follows its text, a quote's lines start with "> "."""
    from html.parser import HTMLParser

    parts, opened, ranges, at = [], [], [], [0]

    def add(text: str) -> None:
        if any(tag == "blockquote" for tag, *_ in opened):
            text = text.replace("\n", "\n> ")
        parts.append(text)
        at[0] += len(text.encode("utf-16-le")) // 2

    class Reader(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "blockquote":
                add("> ")
            opened.append((tag, at[0], dict(attrs).get("href") or "", len(parts)))

        def handle_endtag(self, tag):
            while opened:
                name, start, href, first = opened.pop()
                if name == tag:
                    break
            else:
                return
            if STYLES.get(tag) and at[0] > start and not (tag == "code" and opened and opened[-1][0] == "pre"):
                ranges.append(f"{start}:{at[0] - start}:{STYLES[tag]}")
            if tag == "a" and href and href != "".join(parts[first:]):
                add(f" ({href})")

        def handle_data(self, data):
            add(data)

    reader = Reader(convert_charrefs=True)
    reader.feed(to_html(markdown))
    reader.close()
    return "".join(parts), ranges
