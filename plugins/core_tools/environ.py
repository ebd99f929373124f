"""Keys out of hermes' own exec-time environment.

``/proc/PID/environ`` shows the environment a process started with, whatever
it changed since, and every process of the same user can read it: without
the sandbox, a tool's ``cat /proc/$PPID/environ`` would show hermes' keys.
Their values are overwritten there, in place; ``os.environ`` and what child
processes inherit keep them (the providers need them, a plugin's child may).
"""

from __future__ import annotations

import os
from typing import Iterable

_hidden: set = set()  # names already overwritten in this process


def hide_from_proc(names: Iterable[str]) -> list:
    """Overwrite the values of ``names`` in this process's initial environment
    block (Linux; nothing elsewhere). The names it overwrote now."""
    wanted = {n for n in names if n and n in os.environ} - _hidden
    if not wanted:
        return []
    import ctypes

    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[-3]), int(fields[-2])  # env_start, env_end: fields 50 and 51
        with open("/proc/self/environ", "rb") as f:
            shown = f.read()
    except (OSError, ValueError, IndexError):
        return []
    if not 0 < end - start < 1 << 24 or ctypes.string_at(start, end - start) != shown:
        return []  # not the block /proc shows: touch nothing
    done, offset = [], 0
    for entry in shown.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        key = name.decode("utf-8", "replace")
        if eq and value and key in wanted:
            ctypes.memset(start + offset + len(name) + 1, ord("*"), len(value))
            os.putenv(key, os.environ[key])  # children still inherit the value, from a copy
            done.append(key)
        offset += len(entry) + 1
    _hidden.update(wanted)
    return done
