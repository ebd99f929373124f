"""Whether a file write_file or patch just wrote still parses: Python, JSON, YAML and TOML, checked in this process
right after the write (hermes-agent's post-write check). A model that breaks a file's syntax reads so in the same
result, with the line, instead of finding out steps later from a failing run. Only what this change broke is said as
new; a file that did not parse before either is said to be so."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Callable, Optional

MOST = 2_000_000  # characters: a bigger file (generated data) is not checked
_TEMPLATED = ("{{", "{%")  # a Helm or Jinja template is no YAML until rendered
_COMMENTED = re.compile(r"^\s*//|/\*", re.MULTILINE)  # JSON with comments (tsconfig.json, VS Code's settings)


def _python(text: str) -> Optional[str]:
    try:
        compile(text, "<file>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)  # parsed, never run
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "") if exc.lineno else "?"
        return f"{exc.msg} ({where}; Python {sys.version_info[0]}.{sys.version_info[1]}'s grammar)"
    except ValueError as exc:  # a NUL byte
        return str(exc)
    return None


def _json(text: str) -> Optional[str]:
    import json

    if _COMMENTED.search(text):
        return None
    try:
        json.loads(text)
    except ValueError as exc:
        return str(exc)
    return None


def _yaml(text: str) -> Optional[str]:
    if any(mark in text for mark in _TEMPLATED):
        return None
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        for _ in yaml.compose_all(text, Loader=loader):  # composed, not constructed: a custom tag (!Ref) is fine
            pass
    except yaml.YAMLError as exc:
        return " ".join(str(exc).split())
    return None


def _toml(text: str) -> Optional[str]:
    import tomllib

    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return str(exc)
    return None


CHECKS: dict = {".py": ("Python", _python), ".pyi": ("Python", _python), ".json": ("JSON", _json),
                ".yaml": ("YAML", _yaml), ".yml": ("YAML", _yaml), ".toml": ("TOML", _toml)}


def checked(path: Path) -> Optional[tuple]:
    """``(language, check)`` for ``path``'s kind, or None."""
    return CHECKS.get(path.suffix.lower())


def after_write(path: Path, before: Optional[str], after: str) -> Optional[str]:
    """What the result says when ``after`` (the file now) does not parse, or None; ``before`` is the file's text
    before the change (None: a new file, or not read)."""
    kind = checked(path)
    if kind is None or len(after) > MOST:
        return None
    language, check = kind
    problem = check(after)
    if problem is None:
        return None
    if before is not None and len(before) <= MOST and check(before) is not None:
        return f"the file did not parse as {language} before this change either: {problem}"
    return f"the file no longer parses as {language}: {problem}"
