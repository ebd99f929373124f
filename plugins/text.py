"""Files read as text for the model (context files, skills, the file tools): UTF-8, or UTF-16 with its byte order
mark, and "no text" for a binary file, whose bytes would reach the model as thousands of replacement characters."""

from __future__ import annotations

import io
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
