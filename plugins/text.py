"""Files read as text for the model (context files, skills, read_file): UTF-8, or UTF-16 with its byte order mark,
and "no text" for a binary file, whose bytes would reach the model as thousands of replacement characters."""

from __future__ import annotations

from typing import Optional

UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")  # a file starting so is UTF-16 text (its NULs are no sign of a binary one)


def decoded(raw: bytes) -> Optional[str]:
    """``raw`` as text (a UTF-8 byte order mark dropped; UTF-16 with its mark, as some Windows editors save it);
    None when it is no text: a NUL in it, or more than a tenth replacement characters (a few bad bytes pass)."""
    text = raw.decode("utf-16" if raw[:2] in UTF16_MARKS else "utf-8", errors="replace")
    return None if "\x00" in text or text.count("\ufffd") > len(text) // 10 else text.removeprefix("\ufeff")
