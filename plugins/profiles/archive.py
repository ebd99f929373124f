"""``hermes profile export|import``: a profile as a ``.tar.gz`` of one folder named after it (hermes-agent's format,
so its ``profile import`` takes ours and ours takes its), to move an agent to another machine.

Its keys stay here: ``.env``, ``auth.json`` and MCP servers' sign-ins are left out, as hermes-agent's export leaves
them; so are what is rebuilt or means nothing elsewhere (caches, locks, SQLite's side files, checkpoints, backups),
the other profiles, and which one is active. A SQLite database goes in as SQLite copies it, consistent while a chat
runs. An archive is read member by member: only files and folders, none outside its one top folder."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path, PurePosixPath

KEYS = {".env", "auth.json", "mcp-tokens"}
SKIPPED = {"profiles", "active_profile", "__pycache__", ".git", "locks", "backups", "checkpoints", "node_modules",
           ".venv", "venv", ".cache", "tokens"}  # (gateway/tokens: the gateways' locks)
SKIPPED_SUFFIXES = (".lock", ".pid", ".sock", ".tmp", ".partial", ".db-wal", ".db-shm", ".db-journal", ".pyc")
CACHES = ("output-", "plugin-state", "plugin-sources", "plugin-commands")  # this install's remembered outputs


class ArchiveError(Exception):
    """Why an archive cannot be made or taken, in one line."""


def files(folders: list) -> list:
    """``(path, name in the archive)`` of each file to export; ``folders`` are (folder, its name in the archive),
    the config folder after the data folder where they differ (a file in both: the first's)."""
    found, seen = [], set()
    for root, prefix in folders:
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(f for f in subfolders if f not in SKIPPED and f not in KEYS)
            for name in sorted(names):
                path = Path(folder) / name
                inside = f"{prefix}/{path.relative_to(root).as_posix()}"
                if name in KEYS or name in SKIPPED or name.endswith(SKIPPED_SUFFIXES) or name.startswith(CACHES) \
                        or inside in seen or path.is_symlink() or not path.is_file():
                    continue
                seen.add(inside)
                found.append((path, inside))
    return found


def export(name: str, folders: list, target: Path) -> int:
    """Write the archive (whole or not at all); how many files it holds."""
    import tempfile

    chosen = files([(folder, name) for folder in folders])
    partial = target.with_name(f".{target.name}.partial")
    try:
        with tarfile.open(partial, "w:gz") as archive, tempfile.TemporaryDirectory() as scratch:
            archive.add(str(folders[0]), arcname=name, recursive=False)  # the one top folder, even when empty
            for path, inside in chosen:
                archive.add(str(_consistent(path, Path(scratch))), arcname=inside, recursive=False)
        os.replace(partial, target)
    except (OSError, tarfile.TarError) as exc:
        partial.unlink(missing_ok=True)
        raise ArchiveError(f"{target}: not written: {getattr(exc, 'strerror', None) or exc}") from None
    return len(chosen)


def _consistent(path: Path, scratch: Path) -> Path:
    """The file, or for a SQLite database a copy SQLite made (a chat may be writing to it)."""
    if path.suffix != ".db":
        return path
    import sqlite3

    copy = scratch / f"{len(list(scratch.iterdir()))}.db"
    try:
        source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            with sqlite3.connect(copy) as destination:
                source.backup(destination)
            destination.close()
        finally:
            source.close()
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc):
            return path  # a .db of a plugin's own format: as it is
        raise ArchiveError(f"{path}: SQLite could not copy it: {exc}") from None
    return copy


def top_folder(archive: Path) -> str:
    """The one folder an archive holds everything in; ArchiveError if it is no such archive."""
    try:
        with tarfile.open(archive, "r:gz") as opened:
            tops = {_parts(member)[0] for member in opened.getmembers()}
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise ArchiveError(f"{archive}: no .tar.gz archive ({getattr(exc, 'strerror', None) or exc})") from None
    if len(tops) != 1:
        raise ArchiveError(f"{archive}: a profile's archive holds one folder; this holds {len(tops)}")
    return tops.pop()


def unpack(archive: Path, into: Path) -> None:
    """Extract into the new folder ``into`` (made here): the top folder's content, each member checked first."""
    with tarfile.open(archive, "r:gz") as opened:
        members = opened.getmembers()
        for member in members:
            _parts(member)
        into.mkdir(parents=True)
        for member in members:
            target = into.joinpath(*_parts(member)[1:])
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with opened.extractfile(member) as source, open(target, "wb") as written:
                while chunk := source.read(1 << 20):
                    written.write(chunk)
            os.chmod(target, member.mode & 0o700 | 0o600)


def _parts(member: tarfile.TarInfo) -> list:
    """A member's path, checked: a file or folder, relative, never above the archive's top."""
    path = PurePosixPath(member.name.replace("\\", "/"))
    parts = [part for part in path.parts if part not in ("", ".")]
    if path.is_absolute() or not parts or ".." in parts:
        raise ArchiveError(f"the archive's member {member.name!r} points outside it: not taken")
    if not (member.isfile() or member.isdir()):
        raise ArchiveError(f"the archive's member {member.name!r} is a link or device: not taken")
    return parts
