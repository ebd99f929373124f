"""Copy what is still readable from a damaged session database into a fresh one.

Used by ``hermes sessions repair`` after the damaged file was moved aside: a
bad page usually spoils a few sessions, not all of them. The damaged file is
opened read-only and never changed.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from plugins.sessions.base import StoreError

MESSAGE_COLUMNS = ("seq", "role", "content", "content_json", "tool_calls", "tool_call_id", "reasoning", "extra",
                   "created_at")


@dataclass
class SalvageReport:
    sessions: int = 0  # sessions copied (whole or in part)
    messages: int = 0
    partial: list = field(default_factory=list)  # ids of sessions whose messages were read only in part
    lost: list = field(default_factory=list)  # ids known but unreadable
    error: str = ""  # why nothing could be read at all

    def summary(self) -> str:
        if self.error and not self.sessions:
            return f"nothing could be recovered ({self.error})"
        text = f"recovered {self.sessions} session(s), {self.messages} message(s)"
        if self.partial:
            text += f"; {len(self.partial)} only in part ({', '.join(self.partial[:5])}{', ...' if len(self.partial) > 5 else ''})"
        if self.lost:
            text += f"; {len(self.lost)} unreadable ({', '.join(self.lost[:5])}{', ...' if len(self.lost) > 5 else ''})"
        return text


def _read(conn: sqlite3.Connection, sql: str, params=()) -> tuple[list, bool]:
    """Rows of a query, one at a time until the first error: (rows, complete)."""
    rows = []
    try:
        cur = conn.execute(sql, params)
        while True:
            row = cur.fetchone()
            if row is None:
                return rows, True
            rows.append(row)
    except sqlite3.DatabaseError:
        return rows, False


def _messages(conn: sqlite3.Connection, session_id: str) -> tuple[list, bool]:
    cols = ", ".join(MESSAGE_COLUMNS)
    rows, complete = _read(conn, f"SELECT {cols} FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))
    if complete:
        return rows, True
    # The index may be what is damaged: scan the table itself.
    scanned, scan_complete = _read(conn, f"SELECT {cols} FROM messages NOT INDEXED WHERE session_id = ?",
                                   (session_id,))
    if scan_complete:
        return sorted(scanned, key=lambda r: r["seq"]), True
    # A scan stops at the first bad page: fetch the positions one by one
    # through the index, so rows on good pages after it are kept too.
    by_seq = {r["seq"]: r for r in [*rows, *scanned] if isinstance(r["seq"], int)}
    top, _ = _read(conn, "SELECT MAX(seq) FROM messages WHERE session_id = ?", (session_id,))
    last = top[0][0] if top and isinstance(top[0][0], int) else max(by_seq, default=-1)
    for seq in range(0, min(last, 1_000_000) + 1):
        if seq not in by_seq:
            one, _ = _read(conn, f"SELECT {cols} FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq))
            if one:
                by_seq[seq] = one[0]
    complete = last >= 0 and len(by_seq) == last + 1
    return [by_seq[k] for k in sorted(by_seq)], complete


MAX_PADDING = 1 << 30  # a header claiming far more than that is itself damaged


def _truncated_pages(path: Path) -> int:
    """The size the header says the file has, when the file is shorter (a
    copy or a disk that ran out midway); else 0. SQLite refuses every read of
    such a file, even of pages that are all there."""
    try:
        with open(path, "rb") as f:
            header = f.read(100)
        size = path.stat().st_size
    except OSError:
        return 0
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        return 0
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    want = int.from_bytes(header[28:32], "big") * page_size
    return want if size < want <= size + MAX_PADDING else 0


def _padded_copy(damaged: Path, want: int) -> Path:
    """A scratch copy grown with zero pages to the size in its header: the
    pages that are there become readable, the missing ones read as damaged."""
    copy = damaged.with_name(damaged.name + ".salvage")
    shutil.copyfile(damaged, copy)
    with open(copy, "r+b") as f:
        f.truncate(want)  # zeros (sparse where the filesystem can)
    wal = damaged.with_name(damaged.name + "-wal")
    if wal.exists():
        shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
    return copy


def salvage(damaged: Path | str, store) -> SalvageReport:
    """Copy every readable session of ``damaged`` into ``store`` (a SessionStore)."""
    report = SalvageReport()
    damaged = Path(damaged)
    want = _truncated_pages(damaged)
    if want:
        copy = _padded_copy(damaged, want)
        try:
            return _copy(copy, store, report)
        finally:
            for p in (copy, copy.with_name(copy.name + "-wal"), copy.with_name(copy.name + "-shm")):
                p.unlink(missing_ok=True)
    companions = [damaged.with_name(damaged.name + sfx) for sfx in ("-wal", "-shm")]
    existed = {p for p in companions if p.exists()}
    try:
        return _copy(damaged, store, report)
    finally:
        # A read-only open of a WAL file makes an -shm index (and maybe an
        # empty -wal); remove what we created, leave the rest as it was.
        for p in companions:
            if p not in existed and p.exists() and (p.name.endswith("-shm") or p.stat().st_size == 0):
                p.unlink()


def _copy(damaged: Path, store, report: SalvageReport) -> SalvageReport:
    try:
        conn = sqlite3.connect(f"file:{quote(str(damaged))}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        report.error = str(exc)
        return report
    conn.row_factory = sqlite3.Row
    try:
        sessions, _ = _read(conn, "SELECT * FROM sessions NOT INDEXED")
        known = {row["id"]: dict(row) for row in sessions if isinstance(row["id"], str) and row["id"]}
        # Sessions whose row is lost but whose messages may remain.
        ids, ok = _read(conn, "SELECT DISTINCT session_id FROM messages NOT INDEXED")
        for row in ids:
            if isinstance(row[0], str) and row[0]:
                known.setdefault(row[0], {"id": row[0]})
        if not known and not ok:
            probe, _ = _read(conn, "SELECT name FROM sqlite_master")
            report.error = "no table could be read" if not probe else "no session could be read"
            return report
        for session_id, meta in known.items():
            rows, complete = _messages(conn, session_id)
            if not rows and not complete:
                report.lost.append(session_id)
                continue
            seen, clean = set(), []
            for r in rows:  # damaged pages can return junk: keep well-formed rows, one per position
                if isinstance(r["role"], str) and r["role"] and isinstance(r["seq"], int) and r["seq"] not in seen:
                    seen.add(r["seq"])
                    clean.append(dict(r))
            complete = complete and len(clean) == len(rows)
            try:
                store.import_session(meta, clean)
            except (StoreError, ValueError):
                report.lost.append(session_id)
                continue
            rows = clean
            report.sessions += 1
            report.messages += len(rows)
            if not complete:
                report.partial.append(session_id)
    finally:
        conn.close()
    return report


def move_aside(path: Path | str) -> Path:
    """Rename a database file (and its -wal/-shm companions) to
    ``<name>.corrupt-<UTC time>`` so a fresh one can be started. Returns the
    new path. Nothing is deleted."""
    path = Path(path)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            # Keep the WAL next to its database under the matching name, so
            # opening the moved file with sqlite3 still sees its last commits.
            os.replace(side, target.with_name(target.name + suffix))
    return target
