"""``.env`` beside config.yaml: where hermes-agent keeps its API keys (``$HERMES_HOME/.env``), read into the
environment once per process. A variable the environment already has wins (a key exported for one run is the
one used). ``KEY=VALUE`` lines, ``export KEY=VALUE`` too, values quoted or not, ``#`` comments."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

log = logging.getLogger(__name__)
LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)")
_read: set = set()  # the files read in this process
_loaded: dict = {}  # name -> the value a file gave it (reload replaces only those, while unchanged)


def load(folder: Path) -> list:
    """Put the variables of ``folder/.env`` that the environment lacks into it; the names set."""
    path = folder / ".env"
    if path in _read or not path.is_file():
        return []
    _read.add(path)
    names = []
    for name, value in _entries(path):
        if name not in os.environ:
            os.environ[name] = _loaded[name] = value
            names.append(name)
    return names


def reload(folder: Path) -> tuple:
    """``.env`` again, for a process that read it (chat's /reload): ``(added, changed, removed)`` names. A variable it
    set takes the file's new value, or goes when the file has it no more; one the environment had otherwise
    (exported in the shell) still wins."""
    added, changed, entries = [], [], dict(_entries(folder / ".env"))
    for name, value in entries.items():
        if name not in os.environ:
            added.append(name)
        elif _loaded.get(name) == os.environ[name] != value:  # set from the file, and not by anyone since
            changed.append(name)
        else:
            continue
        os.environ[name] = _loaded[name] = value
    removed = [name for name, value in _loaded.items() if name not in entries and os.environ.get(name) == value]
    for name in removed:
        del os.environ[name], _loaded[name]
    return added, changed, removed


def _entries(path: Path) -> list:
    """The ``(name, value)`` lines of the file (one not readable is said, and has none)."""
    try:
        text = path.read_text(encoding="utf-8")
        if os.stat(path).st_mode & 0o077:  # keys readable by other users of the machine
            log.warning("%s can be read by other users; it holds keys: chmod 600 %s", path, path)
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("%s: not read (%s)", path, exc)
        return []
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        found = LINE.fullmatch(line)
        if found is None:
            log.warning("%s:%d: not KEY=VALUE; skipped", path, number)
            continue
        name, value = found[1], found[2].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0]  # an unquoted value ends at a comment
        entries.append((name, value))
    return entries


def save(folder: Path, name: str, value: str) -> Path:
    """``name=value`` into ``folder/.env`` (its line replaced, or added), the file readable by its owner alone:
    ``hermes config set OPENAI_API_KEY sk-...``, as hermes-agent's saves a key."""
    if not re.fullmatch(r"[^\s'\"#]*", value):
        if "'" in value:
            raise ValueError("a key with both a quote and a space or # in it cannot be written to .env")
        value = f"'{value}'"
    path = folder / ".env"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    kept = [line for line in lines if not ((found := LINE.fullmatch(line.strip())) and found[1] == name)]
    text = "\n".join([*kept, f"{name}={value}"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(".env.new")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(temporary, 0o600)  # an older file's mode is not kept: keys are the owner's
    os.replace(temporary, path)
    return path
