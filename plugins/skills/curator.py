"""The curator (hermes-agent's): skills the agent wrote that go unused are marked stale, then archived.

Only skills the agent made with ``skill_manage`` are the curator's to move: they are marked in the skills folder's
``.usage.json``, the file hermes-agent keeps there too, so a skills folder brought over keeps its marks and counts.
Pinned ones are never moved. An archived skill goes to ``skills/.archive/NAME``, out of the index and the commands,
until ``hermes curator restore NAME``. Before a run that moves any, the skills folder is saved as a snapshot in
``skills/.curator_backups/`` (``hermes curator rollback`` brings one back). Nothing of that calls a model;
``hermes curator run --consolidate`` (hermes-agent's consolidation pass) asks the model to merge the agent's skills
that overlap into broader ones (:func:`consolidate`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

log = logging.getLogger(__name__)
ACTIVE, STALE, ARCHIVED = "active", "stale", "archived"
LEFT_OUT = (".curator_backups", ".usage.json.lock", ".curator_run.lock")  # never in a snapshot nor rolled back


class CuratorError(Exception):
    """A one-line reason the command could not do it."""


class Busy(CuratorError):
    """Another process makes a pass now."""


def root() -> Path:
    from plugins.skills.catalog import user_dir

    return user_dir()


def now() -> datetime:
    return datetime.now(timezone.utc)


def moment(value) -> Optional[datetime]:
    try:
        moment = datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None
    return moment.replace(tzinfo=timezone.utc) if moment and moment.tzinfo is None else moment


def _read(path: Path) -> dict:
    """A JSON mapping, or ``{}``; one that cannot be read is moved aside (kept), not written over."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            return data
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        pass
    aside = path.with_name(f"{path.name}.unreadable-{int(time.time())}")
    with contextlib.suppress(OSError):
        os.replace(path, aside)
        log.warning("curator: %s could not be read; kept as %s, started afresh", path, aside.name)
    return {}


def _write(path: Path, data: dict) -> None:
    from hermes.host.files import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


@contextlib.contextmanager
def locked(name: str = ".usage.json.lock", wait: bool = True):
    """One process at a time reads, changes and writes the usage file (a chat and a cron job may both use skills);
    with ``.curator_run.lock``, makes a pass (``wait=False``: another pass running now is :class:`Busy`)."""
    import fcntl

    root().mkdir(parents=True, exist_ok=True)
    with open(root() / name, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise Busy("another curator pass runs now") from None
        yield


def usage() -> dict:
    return _read(root() / ".usage.json")


def state() -> dict:
    return _read(root() / ".curator_state")


def _record(data: dict, name: str) -> dict:
    record = data.get(name)
    if not isinstance(record, dict):
        record = data[name] = {"created_by": None, "use_count": 0, "view_count": 0, "patch_count": 0,
                               "created_at": now().isoformat(), "state": ACTIVE, "pinned": False}
    return record


def note(action: str, name: str) -> None:
    """A skill was loaded, created, edited or deleted (``on_skill_event``). Never fails the tool that did it."""
    try:
        with locked():
            data, stamp = usage(), now().isoformat()
            if action == "deleted":
                data.pop(name, None)
            else:
                record = _record(data, name)
                if action == "created":
                    record.update(created_by="agent", created_at=stamp, state=ACTIVE)
                elif action == "edited":
                    record.update(patch_count=int(record.get("patch_count") or 0) + 1, last_patched_at=stamp)
                else:
                    record.update(use_count=int(record.get("use_count") or 0) + 1, last_used_at=stamp)
                    if record.get("state") == STALE:
                        record["state"] = ACTIVE
            _write(root() / ".usage.json", data)
    except (OSError, ValueError, TypeError) as exc:
        log.debug("curator: usage of %s not noted: %s", name, exc)


def uses(record: dict) -> int:
    """Its uses and views, however the file holds them (hermes-agent's counts; a hand-edited file's)."""
    total = 0
    for key in ("use_count", "view_count"):
        try:
            total += int(record.get(key) or 0)
        except (TypeError, ValueError):
            pass
    return total


def agent_made(record) -> bool:
    return isinstance(record, dict) and (record.get("created_by") == "agent" or record.get("agent_created") is True)


def last_activity(record: dict) -> Optional[datetime]:
    moments = [moment(record.get(k)) for k in ("last_used_at", "last_viewed_at", "last_patched_at")]
    return max((m for m in moments if m), default=None)


def plan(config, at: Optional[datetime] = None) -> list:
    """``(name, from, to)`` for each skill the agent made whose state the days unused change."""
    at = at or now()
    stale_at = at - timedelta(days=config.get("curator.stale_after_days"))
    archive_at = at - timedelta(days=config.get("curator.archive_after_days"))
    changes, preloaded = [], set(config.get("skills.preload") or [])
    for name, record in sorted(usage().items()):
        current = record.get("state", ACTIVE) if isinstance(record, dict) else ACTIVE
        if not agent_made(record) or record.get("pinned") or current == ARCHIVED or name in preloaded:
            continue
        if not (root() / name / "SKILL.md").is_file():
            continue
        used = last_activity(record)
        anchor = used or moment(record.get("created_at")) or at
        if used is None and anchor > stale_at:  # never used yet: it has had less than the stale days to be
            target = ACTIVE
        else:
            target = ARCHIVED if anchor <= archive_at else STALE if anchor <= stale_at else ACTIVE
        if target != current:
            changes.append((name, current, target))
    return changes


def archive(name: str) -> Path:
    """Move a skill of the skills folder to ``.archive/`` (a name there already: a timestamped one beside it)."""
    source = root() / name
    if not name or "/" in name or name.startswith(".") or not (source / "SKILL.md").is_file():
        raise CuratorError(f"no skill {name!r} in {root()} (project and plugin skills are not archived)")
    target = root() / ".archive" / name
    if target.exists():
        target = target.with_name(f"{name}-{now():%Y%m%d%H%M%S}")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(source, target)
    _set(name, state=ARCHIVED, archived_at=now().isoformat())
    return target


def archived() -> list:
    try:
        return sorted(p.name for p in (root() / ".archive").iterdir() if p.is_dir())
    except OSError:
        return []


def restore(name: str) -> Path:
    """Bring an archived skill back (the newest copy when it was archived more than once)."""
    names = archived()
    found = [n for n in names if n == name] or sorted(
        (n for n in names if n.startswith(f"{name}-") and n[len(name) + 1:].isdigit()), reverse=True)
    if not found:
        raise CuratorError(f"no archived skill {name!r}; archived: {', '.join(names) or 'none'}")
    target = root() / name
    if target.exists():
        raise CuratorError(f"a skill {name!r} is in {root()} already; remove or rename it first")
    os.rename(root() / ".archive" / found[0], target)
    _set(name, state=ACTIVE, archived_at=None, last_used_at=now().isoformat())  # a fresh start: not archived again
    return target


def pin(name: str, pinned: bool) -> None:
    if not (root() / name / "SKILL.md").is_file() and name not in usage():
        raise CuratorError(f"no skill {name!r} in {root()}")
    _set(name, pinned=pinned)


def _set(name: str, **fields) -> None:
    with locked():
        data = usage()
        _record(data, name).update(fields)
        _write(root() / ".usage.json", data)


def snapshot(reason: str, keep: int) -> dict:
    """The skills folder (but its snapshots) as ``.curator_backups/ID/skills.tar.gz`` and a manifest; the oldest
    beyond ``keep`` are removed."""
    import shutil
    import tarfile

    backups = root() / ".curator_backups"
    ident = f"{now():%Y%m%dT%H%M%S%fZ}"
    folder = backups / ident
    folder.mkdir(parents=True)
    files = 0
    with tarfile.open(folder / "skills.tar.gz", "w:gz") as tar:
        for entry in sorted(os.listdir(root())):
            if entry not in LEFT_OUT:
                tar.add(root() / entry, arcname=entry)
                files += sum(len(f) for _, _, f in os.walk(root() / entry)) or 1
    manifest = {"id": ident, "reason": reason, "created_at": now().isoformat(), "files": files,
                "bytes": (folder / "skills.tar.gz").stat().st_size}
    _write(folder / "manifest.json", manifest)
    for old in snapshots()[keep:]:
        if old["id"] != ident:
            shutil.rmtree(backups / old["id"], ignore_errors=True)
    return manifest


def snapshots() -> list:
    """Manifests of the snapshots, newest first."""
    try:
        folders = [p for p in (root() / ".curator_backups").iterdir() if (p / "skills.tar.gz").is_file()]
    except OSError:
        return []
    return sorted(({"id": p.name, **_read(p / "manifest.json")} for p in folders), key=lambda m: m["id"],
                  reverse=True)


def rollback(ident: Optional[str]) -> dict:
    """The skills folder as the snapshot ``ident`` (the newest when None) holds it; what is there now is saved as a
    snapshot first, so a rollback can be rolled back (and is kept in ``.rollback-*`` until the snapshot is out)."""
    import shutil
    import tarfile
    import tempfile

    found = snapshots()
    chosen = next((m for m in found if ident in (None, m["id"])), None)
    if chosen is None:
        raise CuratorError(f"no snapshot {ident!r}; there are: {', '.join(m['id'] for m in found) or 'none'}")
    before = snapshot(f"before rolling back to {chosen['id']}", len(found) + 1)  # none removed by it
    aside = Path(tempfile.mkdtemp(prefix=".rollback-", dir=root()))
    moved = [e for e in os.listdir(root()) if e not in LEFT_OUT and root() / e != aside]
    for entry in moved:
        os.rename(root() / entry, aside / entry)
    try:
        with tarfile.open(root() / ".curator_backups" / chosen["id"] / "skills.tar.gz") as tar:
            tar.extractall(root(), filter="data")  # no member leaves the folder, no links out, no devices
    except (OSError, tarfile.TarError) as exc:
        for entry in os.listdir(root()):  # what came out of it before it broke
            path = root() / entry
            if entry not in LEFT_OUT and path != aside:
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        for entry in moved:
            os.rename(aside / entry, root() / entry)
        aside.rmdir()
        raise CuratorError(f"snapshot {chosen['id']} could not be read ({exc}); the skills folder is as it was")
    shutil.rmtree(aside, ignore_errors=True)
    return {"restored": chosen, "saved_before": before}


def run(config, dry_run: bool = False, at: Optional[datetime] = None) -> dict:
    """One pass: the states the days unused call for; archived skills moved (after a snapshot)."""
    with locked(".curator_run.lock", wait=False):
        return _run(config, dry_run, at or now())


def _run(config, dry_run: bool, at: datetime) -> dict:
    with locked():
        changes = plan(config, at)
    result = {"at": at.isoformat(), "dry_run": dry_run, "changes": [
        {"name": n, "from": a, "to": b} for n, a, b in changes], "snapshot": None}
    if dry_run:
        return result
    if any(b == ARCHIVED for _, _, b in changes) and config.get("curator.backup.enabled"):
        result["snapshot"] = snapshot("before a curator run", config.get("curator.backup.keep"))["id"]
    for name, _, target in changes:
        archive(name) if target == ARCHIVED else _set(name, state=target)
    with locked():
        current = state()
        current.update(last_run_at=at.isoformat(), run_count=int(current.get("run_count") or 0) + 1,
                       last_run_summary=summary(result))
        _write(root() / ".curator_state", current)
    return result


def summary(result: dict) -> str:
    by = {}
    for change in result["changes"]:
        by.setdefault(change["to"], []).append(change["name"])
    words = {STALE: "marked stale", ARCHIVED: "archived", ACTIVE: "active again"}
    said = [f"{words[to]}: {', '.join(names)}" for to, names in sorted(by.items())]
    return "; ".join(said) or "no changes"


def due(config, at: Optional[datetime] = None) -> bool:
    """Whether a pass is due: on, not paused, and the last one ``curator.interval_hours`` ago. The first time it is
    asked, the clock starts (as hermes-agent's: no skill is moved on the first start after an upgrade)."""
    if not config.get("curator.enabled"):
        return False
    at, current = at or now(), state()
    if current.get("paused"):
        return False
    last = moment(current.get("last_run_at"))
    if last is None:
        with locked():
            current = state()
            if not current.get("last_run_at"):
                current.update(last_run_at=at.isoformat(), last_run_summary="clock started; the first pass comes "
                               "after one interval (`hermes curator run --dry-run` shows it now)")
                _write(root() / ".curator_state", current)
        return False
    return at - last >= timedelta(hours=config.get("curator.interval_hours"))


def maybe_run(agent) -> None:
    """At a session's start: a pass when one is due; what it changed is said as a status line."""
    try:
        if not due(agent.config):
            return
        with locked(".curator_run.lock", wait=False):
            if not due(agent.config):  # another process's pass ended just now
                return
            result = _run(agent.config, False, now())
    except Busy:  # another process's pass runs now
        return
    except (OSError, CuratorError, ValueError) as exc:
        log.warning("curator: %s", exc)
        return
    if result["changes"]:
        agent.emit("on_status", status="curator", detail=f"skills {summary(result)} (`hermes curator status`)")


CONSOLIDATE = """You are curating the skills an agent wrote for itself over time: merge those that overlap.

These are the skills (name: description, and how often each was used):
{listing}

Read them with skill_view. Where several cover one kind of task, keep one broader skill: edit the best of them with
skill_manage (action "edit") so it holds everything the others teach, or create one (action "create") with a name
for the whole kind of task; then remove the narrower ones with skill_manage (action "delete"). Keep every command,
step and warning they hold; change nothing else. Skills that overlap with none stay as they are. Touch no skill
but these. When done, say in a few lines what you merged into what, or that nothing overlaps."""


def consolidate(app, dry_run: bool = False) -> dict:
    """hermes-agent's consolidation pass: one agent (on ``auxiliary.curator``'s model when it names one), given the
    skills tools only, merges the agent's own skills that overlap (after a snapshot). It may edit or remove only those
    skills; a removed one is archived, not deleted."""
    from plugins.front import build_agent
    from plugins.skills.tools import CURATING

    with locked(".curator_run.lock", wait=False):
        records = usage()
        names = sorted(n for n, r in records.items() if agent_made(r) and r.get("state", ACTIVE) != ARCHIVED
                       and (root() / n / "SKILL.md").is_file())
        if len(names) < 2:
            return {"consolidated": False, "why": "fewer than two skills the agent made", "skills": names}
        from plugins.skills import skills_of

        found = skills_of(app.config, app.host)
        listing = "\n".join(f"- {n}: {found[n].description if n in found else ''} (used {uses(records[n])} times)"
                            for n in names)
        if dry_run:
            return {"consolidated": False, "why": "a dry run", "skills": names}
        kept = snapshot("before consolidating", app.config.get("curator.backup.keep"))["id"]
        from plugins.auxiliary import FIELDS, provider_config

        aux = provider_config(app.config, "curator")  # hermes-agent's auxiliary.curator: its model, not the chat's
        agent = build_agent(app, {"toolsets": "skills", **{f: getattr(aux, f) for f in FIELDS if aux and getattr(
            aux, f)}}, None, platform="curator")
        agent.state[CURATING] = set(names)
        try:
            result = agent.run_conversation(CONSOLIDATE.format(listing=listing))
        finally:
            agent.close()
        gone = [n for n in names if not (root() / n / "SKILL.md").is_file()]
        return {"consolidated": True, "skills": names, "archived": gone, "snapshot": kept,
                "summary": result.final_response or result.error or ""}

