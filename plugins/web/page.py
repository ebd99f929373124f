"""A web page as text the model reads: HTML to Markdown-like text with the standard library's parser (headings as
``#``, list items, links as ``[text](url)``, code kept in fences), scripts, styles and forms dropped; a PDF's text
with pypdf."""

from __future__ import annotations

import logging
import re
from html.parser import HTMLParser
from urllib.parse import urljoin

SKIPPED = {"script", "style", "noscript", "template", "svg", "head", "iframe", "select", "button", "form", "nav"}
BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "aside", "table", "tr", "ul", "ol", "dl",
          "dt", "dd", "blockquote", "figure", "figcaption", "hr", "details", "summary", "address"}


class _Text(HTMLParser):
    def __init__(self, base_url: str):
        super().__init__(convert_charrefs=True)
        self.base_url, self.title, self.out = base_url, "", []
        self.skipping = 0  # inside elements whose text is not the page's (scripts, menus)
        self.in_title = self.in_pre = False
        self.link = None  # [href, where its text starts in out] of the <a> being read

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "title":
            self.in_title = not self.title  # the head's; an inline SVG's <title> is not the page's
        if tag in SKIPPED:
            self.skipping += 1
        if self.skipping:
            return
        if tag in BLOCKS:
            self.out.append("\n\n")
        elif re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag in ("br", "td", "th"):
            self.out.append("\n" if tag == "br" else " | ")
        elif tag == "pre":
            self.in_pre = True
            self.out.append("\n\n```\n")
        elif tag == "code" and not self.in_pre:
            self.out.append("`")
        elif tag == "a" and attrs.get("href") and not attrs["href"].startswith(("javascript:", "#")):
            try:
                self.link = [urljoin(self.base_url, attrs["href"]), len(self.out)]
            except ValueError:  # not a URL (a broken IPv6 host): the text alone
                pass
        elif tag == "img" and (attrs.get("alt") or "").strip():
            self.out.append(f"[IMAGE: {attrs['alt'].strip()}]")

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag in SKIPPED:
            self.skipping = max(0, self.skipping - 1)
            return
        if self.skipping:
            return
        if tag == "pre":
            self.in_pre = False
            self.out.append("\n```\n\n")
        elif tag == "code" and not self.in_pre:
            self.out.append("`")
        elif tag == "a" and self.link is not None:
            href, start = self.link
            text = " ".join("".join(self.out[start:]).split())
            self.out[start:] = [f"[{text}]({href})" if text else ""]
            self.link = None
        elif tag in BLOCKS or re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n")

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        elif not self.skipping:
            self.out.append(data if self.in_pre else re.sub(r"\s+", " ", data))


def html_to_text(html: str, base_url: str = "") -> tuple:
    """``(title, text)`` of an HTML page; links made absolute against ``base_url``."""
    parser = _Text(base_url)
    # `<![` opens a marked section in SGML; the parser raises on one that is not CDATA, where browsers read text
    parser.feed(re.sub(r"<!\[(?!CDATA\[)", "&lt;![", html, flags=re.I))
    parser.close()
    text = "".join(parser.out)
    parts = re.split(r"(\n```\n.*?\n```\n)", text, flags=re.S)  # fenced code keeps its lines as they were
    for i in range(0, len(parts), 2):
        lines = (re.sub(r" {2,}", " ", line.strip()) for line in parts[i].split("\n"))
        parts[i] = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
    return " ".join(parser.title.split()), re.sub(r"\n{3,}", "\n\n", "".join(parts)).strip()


def charset(content_type: str, body: bytes) -> str:
    """The page's encoding: the header's charset, else a ``<meta charset>`` near the top, else UTF-8."""
    found = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.I) or \
        re.search(rb"<meta[^>]+charset=[\"']?([\w.:-]+)", body[:4096], re.I)
    name = found.group(1) if found else "utf-8"
    name = name.decode("ascii", "replace") if isinstance(name, bytes) else name
    import codecs

    try:
        return codecs.lookup(name).name
    except LookupError:
        return "utf-8"


def pdf_text(body: bytes, limit: int, cancelled) -> tuple:
    """``(title, text)`` of a PDF, the pages that fit in ``limit`` characters (a long one says where it stopped)."""
    from io import BytesIO

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    from kernel.types import ToolError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its notes on damaged files are our error message's
    try:
        reader = PdfReader(BytesIO(body))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ToolError("the PDF is encrypted")
        title, pages, text = str((reader.metadata or {}).get("/Title") or ""), len(reader.pages), ""
        for number, page in enumerate(reader.pages, 1):
            if cancelled():
                raise ToolError("interrupted while reading the PDF")
            part = f"\n\n[page {number}]\n" + (page.extract_text() or "").strip()
            if text and len(text) + len(part) > limit:  # whole pages only (the first one clipped if need be)
                rest = f"pages {number}-{pages}" if number < pages else f"page {pages}"
                return title, text.strip() + f"\n\n[... {rest} not read: a larger char_limit reads more ...]"
            text += part
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:  # a damaged file is any of these in pypdf
        raise ToolError(f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    return title, text.strip()
