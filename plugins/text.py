"""Text in and out. Files read as text for the model (context files, skills, the file tools): UTF-8, or UTF-16 with
its byte order mark, and "no text" for a binary file, whose bytes would reach the model as thousands of replacement
characters. Text shown on a terminal (:func:`printable`): never a control sequence it would obey."""

from __future__ import annotations

import io
import re
from typing import Iterator, Optional

UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")  # a file starting so is UTF-16 text (its NULs are no sign of a binary one)
SNIFF = 8192  # the bytes a file's start is judged by when it is read line by line


def is_binary(data: bytes) -> bool:
    """A NUL in the first :data:`SNIFF` bytes: no text (UTF-16's NULs aside, which :data:`UTF16_MARKS` tells)."""
    return b"\x00" in data[:SNIFF]


def text_lines(fh) -> Optional[Iterator[str]]:
    """The lines of a file opened binary, as text (UTF-8, or UTF-16 with its mark: some Windows tools write it), or
    None for a binary one: :func:`decoded` for a file read line by line, judged by its start."""
    head = fh.read(SNIFF)
    fh.seek(0)
    if head[:2] in UTF16_MARKS:
        return iter(io.TextIOWrapper(fh, encoding="utf-16", errors="replace", newline=""))
    return None if is_binary(head) else (line.decode("utf-8", errors="replace") for line in fh)


def decoded(raw: bytes) -> Optional[str]:
    """``raw`` as text (a UTF-8 byte order mark dropped; UTF-16 with its mark, as some Windows editors save it);
    None when it is no text: a NUL in it, or more than a tenth replacement characters (a few bad bytes pass)."""
    text = raw.decode("utf-16" if raw[:2] in UTF16_MARKS else "utf-8", errors="replace")
    return None if "\x00" in text or text.count("\ufffd") > len(text) // 10 else text.removeprefix("\ufeff")


# every C0 control but tab and newline, DEL, and the C1 controls (0x9b is CSI on its own)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str, stream=None) -> str:
    """``text`` (a model's, a tool's, a stored session's) as it may be shown
    on a terminal: escape sequences and other control characters are shown
    (ESC as ``^[``), never obeyed, so text cannot set the clipboard (OSC 52),
    the window title or clear the screen. ``\r\n`` is a newline. Unchanged
    when ``stream`` is given and is not a terminal (a pipe or a file gets the
    exact text, as ``--json`` does)."""
    if stream is not None and not (getattr(stream, "isatty", None) and stream.isatty()):
        return text
    return _CONTROLS.sub(_caret, text.replace("\r\n", "\n"))


def _caret(match) -> str:
    code = ord(match.group())
    return f"^{chr(code ^ 0x40)}" if code < 0x20 or code == 0x7F else f"\\x{code:02x}"
