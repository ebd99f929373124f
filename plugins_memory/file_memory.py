"""Built-in file memory: ``MEMORY.md`` (the agent's notes) and ``USER.md``
(what it knows about the user) in ``<data_dir>/memories``.

Each file is a list of short entries separated by a line holding only ``§``.
Each file has a character budget (``memory.memory_char_limit``,
``memory.user_char_limit``) because the whole of it goes into every system
prompt. The model edits the files through the ``memory`` tool; a write that
would pass the budget is refused with an error saying how much is used and
what to do.

Writes go to disk at once (temp file + rename, so a crash leaves the old file
whole), and each write re-reads the file first so that two agents sharing the
folder do not lose each other's entries. The system prompt holds a snapshot
taken at session start: writes during a session change the files, not this
session's prompt (prompt caching holds); the next session sees them.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from hermes.host.files import atomic_write
from kernel.types import ToolError
from plugins_memory import settings

log = logging.getLogger(__name__)

SEPARATOR = "\n§\n"
TARGETS = {"memory": "MEMORY.md", "user": "USER.md"}
TITLES = {
    "memory": "Memory (your notes from earlier sessions)",
    "user": "User profile (what you know about the user)",
}

# one lock per file path, shared by every store in the process
_locks: dict = {}
_locks_guard = threading.Lock()


def _lock_for(path: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(str(path), threading.Lock())


@contextmanager
def _locked(path: Path):
    """Hold the file's lock for a read-modify-write: a thread lock within this
    process and, where the OS has it, an advisory lock file across processes
    (two hermes sessions sharing one HERMES_HOME)."""
    with _lock_for(path):
        try:
            import fcntl
        except ImportError:  # Windows: threads only
            yield
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.parent / f".{path.name}.lock", "a") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def parse_entries(text: str) -> list[str]:
    """Entries of a memory file (blank entries dropped)."""
    parts = text.replace("\r\n", "\n").split("\n§\n") if text.strip() else []
    return [p.strip() for p in parts if p.strip()]


def render_entries(entries: list[str]) -> str:
    return SEPARATOR.join(entries)


@dataclass
class WriteResult:
    target: str
    entries: list
    used: int
    limit: int
    message: str

    def to_dict(self) -> dict:
        return {
            "success": True,
            "target": self.target,
            "message": self.message,
            "usage": f"{self.used}/{self.limit} chars",
            "entry_count": len(self.entries),
            "note": "Saved to disk. It shows in the system prompt from the next session on.",
        }


class FileMemory:
    """The two memory files of one data folder. ``enabled`` maps target ->
    bool (``memory.memory_enabled``, ``memory.user_profile_enabled``)."""

    def __init__(self, folder: Path, *, memory_limit: int = 2200, user_limit: int = 1375, enabled: Optional[dict] = None):
        self.folder = Path(folder)
        self.limits = {"memory": int(memory_limit), "user": int(user_limit)}
        self.enabled = {"memory": True, "user": True, **(enabled or {})}

    @classmethod
    def from_config(cls, config) -> "FileMemory":
        limits = {}
        for target, key in (("memory", "memory.memory_char_limit"), ("user", "memory.user_char_limit")):
            value = settings.get(config, key)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                from hermes.host.config import ConfigError

                raise ConfigError(f"{key}: expected a positive integer, got {value!r}")
            limits[target] = value
        return cls(
            Path(config.data_dir) / "memories",
            memory_limit=limits["memory"],
            user_limit=limits["user"],
            enabled={
                "memory": bool(settings.get(config, "memory.memory_enabled")),
                "user": bool(settings.get(config, "memory.user_profile_enabled")),
            },
        )

    # -- reading
    def path(self, target: str) -> Path:
        return self.folder / TARGETS[target]

    def read(self, target: str) -> list[str]:
        path = self.path(target)
        try:
            return parse_entries(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            # an unreadable file must not be overwritten by a later write
            raise ToolError(f"cannot read {path.name}: {exc}; fix or move the file, then retry") from None

    def snapshot_block(self) -> str:
        """The memory section of the system prompt, read from disk now."""
        parts = []
        for target in ("memory", "user"):
            if not self.enabled[target]:
                continue
            try:
                entries = self.read(target)
            except ToolError as exc:
                log.warning("memory: %s", exc)
                continue
            if not entries:
                continue
            text = render_entries(entries)
            parts.append(f"## {TITLES[target]} [{len(text)}/{self.limits[target]} chars]\n{text}")
        if not parts:
            return ""
        head = (
            "# Persistent memory\n"
            "Entries are separated by a line holding only §. Edit them with the `memory` tool; "
            "changes are saved at once and appear here from the next session on."
        )
        return "\n\n".join([head, *parts])

    # -- writing
    def _check_target(self, target: str) -> None:
        if target not in TARGETS:
            raise ToolError(f"unknown target {target!r}: use 'memory' (your notes) or 'user' (the user profile)")
        if not self.enabled[target]:
            key = "memory.memory_enabled" if target == "memory" else "memory.user_profile_enabled"
            raise ToolError(f"the {target!r} memory is disabled in config ({key}: false)")

    @staticmethod
    def _clean(content, what: str = "content") -> str:
        if not isinstance(content, str) or not content.strip():
            raise ToolError(f"'{what}' must be a non-empty string")
        text = content.replace("\r\n", "\n").strip()
        if any(line.strip() == "§" for line in text.split("\n")):
            raise ToolError(f"'{what}' must not contain a line holding only '§' (it separates entries)")
        return text

    def _find(self, entries: list[str], old_text, target: str) -> int:
        if not isinstance(old_text, str) or not old_text.strip():
            raise ToolError("'old_text' must be a non-empty part of the entry to change")
        needle = old_text.strip()
        hits = [i for i, entry in enumerate(entries) if needle in entry]
        if not hits:
            raise ToolError(
                f"no entry in {TARGETS[target]} contains {needle!r}; "
                f"current entries: {self._preview(entries)}"
            )
        if len({entries[i] for i in hits}) > 1:
            raise ToolError(
                f"{len(hits)} entries in {TARGETS[target]} contain {needle!r}; give a longer "
                f"'old_text' that matches only one: {self._preview([entries[i] for i in hits])}"
            )
        return hits[0]

    @staticmethod
    def _preview(entries: list[str], width: int = 80) -> str:
        if not entries:
            return "(none)"
        return "; ".join(repr(e if len(e) <= width else e[: width - 3] + "...") for e in entries)

    def _commit(self, target: str, entries: list[str], message: str, before: list[str]) -> WriteResult:
        text = render_entries(entries)
        limit = self.limits[target]
        used = len(render_entries(before))
        # A file already over its limit (edited by hand, limit lowered) must
        # still shrink: only a write that grows it past the limit is refused.
        if len(text) > limit and len(text) > used:
            raise ToolError(
                f"{TARGETS[target]} would hold {len(text)} chars, over its limit of {limit} "
                f"(now {used}/{limit} used, {max(limit - used, 0)} free). Nothing was saved. "
                "Make room first: remove entries that no longer matter (action 'remove') or merge "
                "and shorten entries (action 'replace'), then retry with shorter content. "
                f"Current entries: {self._preview(before)}"
            )
        atomic_write(self.path(target), text + ("\n" if text else ""))
        return WriteResult(target, entries, len(text), limit, message)

    def add(self, target: str, content) -> WriteResult:
        self._check_target(target)
        text = self._clean(content)
        with _locked(self.path(target)):
            entries = self.read(target)
            if text in entries:
                used = len(render_entries(entries))
                return WriteResult(target, entries, used, self.limits[target], "entry already present; nothing changed")
            return self._commit(target, entries + [text], "entry added", entries)

    def replace(self, target: str, old_text, content) -> WriteResult:
        self._check_target(target)
        text = self._clean(content)
        with _locked(self.path(target)):
            entries = self.read(target)
            i = self._find(entries, old_text, target)
            new = entries[:i] + [text] + entries[i + 1 :]
            # replacing with an entry that already exists elsewhere merges them
            new = [e for j, e in enumerate(new) if e != text or j == i]
            return self._commit(target, new, "entry replaced", entries)

    def remove(self, target: str, old_text) -> WriteResult:
        self._check_target(target)
        with _locked(self.path(target)):
            entries = self.read(target)
            i = self._find(entries, old_text, target)
            gone = entries[i]
            new = [e for e in entries if e != gone]
            return self._commit(target, new, "entry removed", entries)

    def clear(self, target: str) -> WriteResult:
        """Every entry of ``target`` gone (``hermes memory clear``), under the lock the tool's writes take."""
        with _locked(self.path(target)):
            entries = self.read(target)
            said = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'} removed"
            return self._commit(target, [], said, entries)


MEMORY_TOOL_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": ["add", "replace", "remove"],
            "description": "add a new entry, replace an entry, or remove an entry",
        },
        "target": {
            "type": "string",
            "enum": ["memory", "user"],
            "description": "'memory' for your own notes (MEMORY.md), 'user' for facts about the user (USER.md)",
        },
        "content": {
            "type": "string",
            "description": "the entry text (for add and replace); keep it short and self-contained",
        },
        "old_text": {
            "type": "string",
            "description": "for replace and remove: a distinctive part of the existing entry",
        },
    },
    "required": ["action", "target"],
}

MEMORY_TOOL_DESCRIPTION = (
    "Save durable facts across sessions: your notes (target 'memory': environment facts, "
    "conventions, lessons learned) or the user profile (target 'user': preferences, name, role). "
    "Both are shown in the system prompt of future sessions and have a small budget "
    "(memory: {memory} chars, user: {user} chars). Save only what will matter later; "
    "replace or remove stale entries."
)


def memory_tool_description(store: "FileMemory") -> str:
    return MEMORY_TOOL_DESCRIPTION.format(**store.limits)


def run_memory_tool(store: FileMemory, args: dict) -> dict:
    """Execute one call of the ``memory`` tool; errors raise ``ToolError``."""
    if not isinstance(args, dict):
        raise ToolError("arguments must be an object with 'action' and 'target'")
    action = args.get("action")
    target = args.get("target")
    if action == "add":
        result = store.add(target, args.get("content"))
    elif action == "replace":
        result = store.replace(target, args.get("old_text"), args.get("content"))
    elif action == "remove":
        result = store.remove(target, args.get("old_text"))
    else:
        raise ToolError(f"unknown action {action!r}: use 'add', 'replace' or 'remove'")
    return result.to_dict()
