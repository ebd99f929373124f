"""Snapshots of a working folder in one git store in the data folder, nothing of it in the folder itself.

``checkpoints/store`` is a bare git repository shared by every project (git keeps a file's content once, whichever
project and snapshot holds it). A project is the hash of its path: each snapshot is a commit of its own under
``refs/checkpoints/<hash>/<time>``, staged through the project's index ``indexes/<hash>``; its path and last use are
in ``projects/<hash>.json``. Git runs with ``GIT_DIR``, ``GIT_WORK_TREE`` and ``GIT_INDEX_FILE``: the folder's own
``.git`` is never touched (and never snapshotted). Dropping old snapshots is deleting their refs; ``git gc`` then
reclaims what nothing else holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

EXCLUDES = ("node_modules/", "dist/", "build/", "target/", ".next/", "__pycache__/", "*.pyc", ".cache/",
            ".pytest_cache/", ".mypy_cache/", ".ruff_cache/", ".venv/", "venv/", ".tox/", ".git/", ".hg/", ".svn/",
            "*.so", "*.o", "*.a", "*.class", "*.jar", "*.zip", "*.tar", "*.gz", "*.mp4", "*.mov", "*.iso")
MAX_FILES = 50_000  # a folder with more (a home folder, a monorepo's root) is not snapshotted
GIT_TIMEOUT = 60.0


class CheckpointError(Exception):
    """What went wrong, in one line."""


@dataclass
class Snapshot:
    commit: str
    when: str  # ISO time
    reason: str
    ref: str = ""
    files: Optional[int] = None  # files changed since the snapshot before it (None: the first)

    def as_dict(self) -> dict:
        return {"commit": self.commit, "when": self.when, "reason": self.reason, "files_changed": self.files}


def base() -> Path:
    from hermes.host.paths import data_dir

    return data_dir() / "checkpoints"


class Store:
    """The snapshots of one working folder."""

    def __init__(self, folder: str, config: Any = None):
        """``config``: where ``checkpoints.max_file_size_mb`` is read (none: its default, 10)."""
        self.folder = os.path.realpath(folder)
        self.root = base() / "store"
        self.key = hashlib.sha256(self.folder.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        self.refs = f"refs/checkpoints/{self.key}/"
        self.index = self.root / "indexes" / self.key
        self.max_file_mb = float((config.get("checkpoints.max_file_size_mb") if config is not None else 10) or 0)

    def git(self, *args: str, ok: tuple = (0,), index: bool = True, stdin: str = "") -> str:
        if shutil.which("git") is None:
            raise CheckpointError("git is not installed here (checkpoints need it)")
        env = {**os.environ, "GIT_DIR": str(self.root), "GIT_WORK_TREE": self.folder, "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_AUTHOR_NAME": "hermes", "GIT_AUTHOR_EMAIL": "hermes@localhost", "GIT_COMMITTER_NAME": "hermes",
               "GIT_COMMITTER_EMAIL": "hermes@localhost", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        if index:
            env["GIT_INDEX_FILE"] = str(self.index)
        if args[0] == "init":  # it takes the folder as its argument
            del env["GIT_DIR"], env["GIT_WORK_TREE"]
        try:
            done = subprocess.run(["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false",
                                   "-c", "core.quotepath=false", *args], cwd=self.folder, env=env,
                                  capture_output=True, timeout=GIT_TIMEOUT, input=stdin.encode())
        except subprocess.TimeoutExpired:
            raise CheckpointError(f"git {args[0]} took over {GIT_TIMEOUT:g} s in {self.folder}") from None
        if done.returncode not in ok:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {said[-1] if said else done.returncode}")
        return done.stdout.decode("utf-8", "replace").rstrip()

    def _init(self) -> None:
        if not (self.root / "HEAD").is_file():
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.git("init", "--bare", "--quiet", str(self.root), index=False)
        exclude = self.root / "info" / "exclude"
        if not exclude.is_file():
            exclude.parent.mkdir(parents=True, exist_ok=True)
            exclude.write_text("\n".join(EXCLUDES) + "\n", encoding="utf-8")
        self.index.parent.mkdir(parents=True, exist_ok=True)
        meta = self.root / "projects" / f"{self.key}.json"
        meta.parent.mkdir(parents=True, exist_ok=True)
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {"created_at": time.time()}
        meta.write_text(json.dumps({**data, "workdir": self.folder, "last_touch": time.time()}), encoding="utf-8")

    def _stage(self, newest: Optional[Snapshot]) -> None:
        """The index as the folder is now (from the newest snapshot's, so git only looks at what changed)."""
        if newest is not None:
            self.git("read-tree", newest.commit)
        elif self.index.exists():
            self.index.unlink()
        self.git("add", "-A", "--ignore-errors", "--", *self._pathspec(), ok=(0, 1))  # an unreadable file: left out
        if self.max_file_mb > 0:
            limit, big = self.max_file_mb * 1024 * 1024, []
            for name in self.git("ls-files", "--cached", "-z").split("\0"):
                try:
                    if name and os.path.getsize(os.path.join(self.folder, name)) > limit:
                        big.append(name)
                except OSError:
                    continue
            if big:
                self.git("rm", "--cached", "--quiet", "--ignore-unmatch", "--", *big)

    def _pathspec(self) -> list:
        """The folder, but hermes' own folders when they lie inside it (the store would snapshot itself)."""
        from hermes.host.paths import config_dir, data_dir

        inside = {os.path.relpath(os.path.realpath(d), self.folder) for d in (data_dir(), config_dir())}
        return ["."] + [f":(exclude){d}" for d in sorted(inside) if d != "." and not d.startswith("..")]

    def take(self, reason: str, keep: int = 20) -> Optional[str]:
        """Snapshot the folder (but the excluded files and those over the size limit): the new commit, or None
        when nothing changed since the newest snapshot. Beyond ``keep`` the oldest are dropped."""
        home, data = os.path.realpath(os.path.expanduser("~")), os.path.realpath(base().parent)
        if self.folder == data or self.folder.startswith(data + os.sep):
            raise CheckpointError(f"{self.folder} is hermes' data folder: checkpoints cover a project's folder")
        if self.folder in ("/", home) or _more_files_than(self.folder, MAX_FILES):
            raise CheckpointError(f"{self.folder} is too big to snapshot (a home folder, the root, or over "
                                  f"{MAX_FILES} files): checkpoints cover a project's folder")
        self._init()
        found = self.snapshots(counts=False)
        self._stage(found[0] if found else None)
        if found and not self.git("diff-index", "--cached", "--name-only", found[0].commit):
            return None
        commit = self.git("commit-tree", self.git("write-tree"), "-m", reason)
        self.git("update-ref", f"{self.refs}{time.time_ns():020d}", commit, index=False)
        drop = [s.ref for s in found[max(keep - 1, 0):]]
        if drop:
            self.git("update-ref", "--stdin", index=False, stdin="".join(f"delete {r}\n" for r in drop))
        return commit

    def snapshots(self, counts: bool = True) -> list:
        """Newest first; with ``counts``, how many files each changed since the one before."""
        if not (self.root / "HEAD").is_file():
            return []
        rows = self.git("for-each-ref", "--sort=-refname", "--format=%(objectname)%1f%(creatordate:iso-strict)%1f"
                        "%(refname)%1f%(contents:subject)", self.refs, index=False)
        found = [Snapshot(c, w, s, r) for c, w, r, s in (line.split("\x1f", 3) for line in rows.splitlines() if line)]
        if counts:
            for newer, older in zip(found, found[1:]):
                newer.files = len(self.git("diff-tree", "-r", "--name-only", "--no-commit-id", older.commit,
                                           newer.commit, index=False).splitlines())
        return found

    def find(self, which: str) -> Snapshot:
        """A snapshot by its number in :meth:`snapshots` (1: the newest) or a commit's first letters."""
        found = self.snapshots(counts=False)
        if not found:
            raise CheckpointError(f"no checkpoints of {self.folder}")
        if which.isdigit() and len(which) < 5 and 1 <= int(which) <= len(found):
            return found[int(which) - 1]
        matches = [s for s in found if len(which) >= 4 and s.commit.startswith(which.lower())]
        if len(matches) != 1:
            raise CheckpointError(f"no checkpoint '{which}' of {self.folder}: 1 to {len(found)}, or a commit")
        return matches[0]

    def diff(self, snapshot: Snapshot) -> str:
        """What changed in the folder since ``snapshot``: a stat, then the patch."""
        self._init()
        self._stage(snapshot)
        return self.git("diff", "--cached", "--stat", "--patch", "--no-color", snapshot.commit, "--")

    def restore(self, snapshot: Snapshot, path: Optional[str] = None) -> Optional[str]:
        """The folder (or one file of it) as ``snapshot`` held it: changed files back, files made since removed
        (excluded and big files are left alone). What was here is snapshotted first (its commit is returned),
        so a restore can be undone by restoring that one."""
        before = self.take(f"before restoring {snapshot.commit[:8]}", keep=1_000)
        if path is not None:
            relative = os.path.relpath(os.path.realpath(os.path.join(self.folder, path)), self.folder)
            if relative.startswith(".."):
                raise CheckpointError(f"{path} is not inside {self.folder}")
            if not self.git("ls-tree", "--name-only", snapshot.commit, "--", relative, index=False):
                raise CheckpointError(f"checkpoint {snapshot.commit[:8]} holds no {relative}")
            self.git("checkout", snapshot.commit, "--", relative)
        else:
            self._stage(snapshot)  # the index holds what is here: read-tree -u removes what the snapshot lacks
            self.git("read-tree", "-u", "--reset", snapshot.commit)
        return before


def _more_files_than(folder: str, most: int) -> bool:
    count = 0
    skip = {e.rstrip("/") for e in EXCLUDES if e.endswith("/")}
    for _root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in skip]
        count += len(files)
        if count > most:
            return True
    return False


def projects() -> list:
    """Every project with snapshots: ``{"key", "workdir", "last_touch", "exists"}``."""
    out = []
    for meta in sorted((base() / "store" / "projects").glob("*.json")):
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        workdir = str(data.get("workdir") or "")
        out.append({"key": meta.stem, "workdir": workdir, "last_touch": data.get("last_touch"),
                    "exists": bool(workdir) and os.path.isdir(workdir)})
    return out


def size() -> int:
    total = 0
    for root, _dirs, files in os.walk(base()):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                continue
    return total


def forget(key: str) -> None:
    """Drop one project's snapshots (its refs, index and record); :func:`gc` reclaims the space."""
    store = _bare()
    refs = store.git("for-each-ref", "--format=%(refname)", f"refs/checkpoints/{key}/", index=False).split()
    if refs:
        store.git("update-ref", "--stdin", index=False, stdin="".join(f"delete {r}\n" for r in refs))
    for path in (store.root / "indexes" / key, store.root / "projects" / f"{key}.json"):
        path.unlink(missing_ok=True)


def prune(retention_days: int = 0, delete_orphans: bool = True, max_total_mb: float = 0) -> dict:
    """Drop the snapshots of the folders that are gone (``delete_orphans``) or untouched for ``retention_days``
    (0: kept), then, while the store is over ``max_total_mb`` (0: no limit), the oldest snapshots of every folder
    but its newest; and reclaim the space. What went: ``folders_gone``, ``folders_stale``, ``snapshots_dropped``,
    ``bytes_freed``."""
    before, now = size(), time.time()
    done = {"folders_gone": 0, "folders_stale": 0, "snapshots_dropped": 0}
    for row in projects():
        try:
            touched = float(row["last_touch"])
        except (TypeError, ValueError):  # a record without it (written by hand): not taken for stale
            touched = now
        gone = delete_orphans and not row["exists"]
        if gone or retention_days > 0 and now - touched > retention_days * 86400:
            done["folders_gone" if gone else "folders_stale"] += 1
            forget(row["key"])
    gc()
    while max_total_mb > 0 and size() > max_total_mb * 1024 * 1024:
        refs: dict = {}  # folder key -> its snapshot refs, oldest first (a ref's name ends in its time)
        for ref in sorted(_bare().git("for-each-ref", "--format=%(refname)", "refs/checkpoints/", index=False).split()):
            refs.setdefault(ref.split("/")[2], []).append(ref)
        older = sorted((r for kept in refs.values() for r in kept[:-1]), key=lambda r: r.rsplit("/", 1)[1])
        if not older:  # the newest of each folder are over the limit alone: kept
            break
        batch = older[: max(1, len(older) // 2)]  # halves: a gc per round, not per snapshot
        _bare().git("update-ref", "--stdin", index=False, stdin="".join(f"delete {r}\n" for r in batch))
        done["snapshots_dropped"] += len(batch)
        gc()
    return {**done, "bytes_freed": max(0, before - size())}


def prune_when_due(config: Any) -> Optional[dict]:
    """``checkpoints.auto_prune``: :func:`prune` with config's limits, at most once per ``min_interval_hours``
    (the time of ``checkpoints/last-prune``); None when not due."""
    stamp = base() / "last-prune"
    recent = stamp.exists() and time.time() - stamp.stat().st_mtime < float(
        config.get("checkpoints.min_interval_hours") or 0) * 3600
    if recent or not (base() / "store" / "HEAD").is_file():
        return None
    stamp.touch()
    return prune(int(config.get("checkpoints.retention_days") or 0), bool(config.get("checkpoints.delete_orphans")),
                 float(config.get("checkpoints.max_total_size_mb") or 0))


def gc() -> None:
    if (base() / "store" / "HEAD").is_file():
        _bare().git("gc", "--prune=now", "--quiet", index=False)


def _bare() -> Store:
    """The store without a project (its folder is the store itself)."""
    store = Store(str(base()))
    store.folder = str(store.root)
    return store
