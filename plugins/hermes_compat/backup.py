"""``hermes backup`` and ``hermes import`` (hermes-agent's): hermes' files in one zip, to keep or to move to another
machine, and back.

A backup holds the config folder (config.yaml, .env, SOUL.md) and the data folder (the sessions' database, memory,
skills, cron jobs, chat history ...), each under its own name in the zip (one, ``home``, when ``HERMES_HOME`` holds
both), with ``hermes-backup.json`` saying what it is. SQLite databases are copied through SQLite's backup API, so a
chat running meanwhile leaves a consistent copy. Left out: what is rebuilt or means nothing elsewhere (caches,
virtual environments, lock files, SQLite's side files, checkpoints of folders on this machine, earlier backups).

``hermes import ZIP`` restores one, each file written whole (a temporary file renamed over the old), and a database's
old side files removed; a file already here (a config.yaml, .env, database, memory) is overwritten only when the
user says so. A hermes-agent backup (its ``~/.hermes`` zipped) brings its config.yaml, .env, SOUL.md, memories and
skills, its conversations through ``hermes sessions import`` and its cron jobs through ``hermes cron import``; the
rest of it is hermes-agent's own.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from contextlib import contextmanager
from typing import Iterator, Optional

import click

MANIFEST = "hermes-backup.json"
SKIPPED_FOLDERS = {"__pycache__", ".git", "node_modules", ".venv", "venv", "site-packages", ".cache", ".pytest_cache",
                   ".mypy_cache", ".ruff_cache", "backups", "checkpoints", "locks"}
SKIPPED_SUFFIXES = (".pyc", ".db-wal", ".db-shm", ".db-journal")
PRIVATE = {".env", "state.db", "hermes-state.db", "auth.json"}  # written 0600 on import
AGENTS_KEPT = ("config.yaml", ".env", "SOUL.md")  # of a hermes-agent backup, into the config folder
AGENTS_FOLDERS = ("memories", "skills", "skill-bundles")  # ... and into the data folder
AGENTS_READ = {"state.db": "sessions", "cron/jobs.json": "cron"}  # ... and brought in by the plugins' importers
PROGRESS = 500  # files between two progress lines


def _roots() -> dict:
    from hermes.host.paths import config_dir, data_dir

    config, data = config_dir(), data_dir()
    return {"home": data} if config.resolve() == data.resolve() else {"config": config, "data": data}


@click.command("backup")
@click.option("-o", "--output", type=click.Path(dir_okay=True, path_type=Path),
              help="The zip to write, or a folder for it (default: ~/hermes-backup-DATE.zip).")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
def backup(output: Optional[Path], as_json: bool):
    """hermes' files in one zip: config.yaml, .env, the sessions, memory, skills (hermes-agent's). `hermes import ZIP`
    restores it, here or on another machine. It holds your API keys: keep it private."""
    import zipfile
    from datetime import datetime

    from hermes.cli.app import Fail, echo_json
    from kernel import __version__

    name = f"hermes-backup-{datetime.now().strftime('%Y-%m-%d-%H%M%S')}.zip"
    target = (output.expanduser() if output else Path.home()).resolve()
    target = target / name if target.is_dir() else target if target.suffix == ".zip" else target.with_name(
        target.name + ".zip")
    if target.exists():
        raise Fail(f"{target}: exists already; name another (-o)")
    roots = {label: root for label, root in _roots().items() if root.is_dir()}
    files = [(path, f"{label}/{path.relative_to(root).as_posix()}") for label, root in roots.items()
             for path in _walk(root, target)]
    if not files:
        raise Fail(f"nothing to back up: {', '.join(str(r) for r in _roots().values())} holds no file of hermes'")
    target.parent.mkdir(parents=True, exist_ok=True)
    written, failed, started = 0, [], time.monotonic()
    partial = target.with_name(f".{target.name}.partial")
    with zipfile.ZipFile(os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb"), "w",
                         zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST, json.dumps({"format": 1, "hermes": __version__, "created": datetime.now().isoformat(
            timespec="seconds"), "roots": {label: str(root) for label, root in roots.items()}}, indent=2))
        for number, (path, arcname) in enumerate(files, 1):
            try:
                written += _add(archive, path, arcname)
            except (OSError, ValueError) as exc:  # unreadable, or a database SQLite cannot copy: said, not fatal
                failed.append(f"{arcname}: {getattr(exc, 'strerror', None) or exc}")
            if number % PROGRESS == 0 and not as_json:
                click.echo(f"  {number} of {len(files)} files ...", err=True)
    os.replace(partial, target)  # a backup is there whole or not at all
    report = {"path": str(target), "files": len(files) - len(failed), "bytes": written,
              "zip_bytes": target.stat().st_size, "seconds": round(time.monotonic() - started, 1),
              "roots": {label: str(root) for label, root in roots.items()}, "failed": failed}
    if as_json:
        echo_json(report)
    else:
        click.echo(f"Backed up {report['files']} files ({_size(written)}, {_size(report['zip_bytes'])} zipped) to "
                   f"{target}. It holds your API keys (.env): keep it private.")
        for line in failed:
            click.echo(f"  not backed up: {line}", err=True)
    if failed:
        sys.exit(1)


def _walk(root: Path, leave_out: Path):
    from hermes.cli.remembered import COMMANDS_CACHE
    from hermes.host.loadstate import LOAD_STATE, SOURCES

    caches = tuple(Path(name).stem for name in (LOAD_STATE, SOURCES, COMMANDS_CACHE))  # this install's (a distro's too)
    for folder, folders, names in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS)
        for name in sorted(names):
            path = Path(folder) / name
            if not name.endswith((*SKIPPED_SUFFIXES, ".partial")) and not name.startswith(caches) \
                    and path != leave_out and path.is_file() and not path.is_symlink():
                yield path


def _add(archive, path: Path, arcname: str) -> int:
    """One file into the zip (a SQLite database as SQLite copies it); its size."""
    if path.suffix != ".db":
        archive.write(path, arcname)
        return path.stat().st_size
    import sqlite3
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / path.name
        source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            with sqlite3.connect(copy) as destination:
                source.backup(destination)
            destination.close()
        except sqlite3.DatabaseError as exc:
            if "not a database" not in str(exc):  # busy, locked, damaged: said
                raise ValueError(f"SQLite could not copy it: {exc}") from None
            copy = path  # a .db that is no SQLite database (a plugin's own format): as it is
        finally:
            source.close()
        archive.write(copy, arcname)
        return copy.stat().st_size


def _size(count: float) -> str:
    for unit in ("B", "KB", "MB"):
        if count < 1024:
            return f"{count:.0f} {unit}"
        count /= 1024
    return f"{count:.1f} GB"


@click.command("import")
@click.argument("zip_path", metavar="ZIP", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-y", "--yes", "--force", "yes", is_flag=True, help="Overwrite the files already here (config, keys, "
              "sessions, memory) without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print what was restored as JSON.")
@click.pass_context
def import_(ctx, zip_path: Path, yes: bool, as_json: bool):
    """Restore a `hermes backup` zip here, or bring in a hermes-agent backup: its config.yaml, .env, SOUL.md,
    memories and skills, its sessions and its cron jobs (hermes-agent's `hermes import`)."""
    import zipfile

    from hermes.cli.app import Fail, echo_json

    if not zipfile.is_zipfile(zip_path):
        raise Fail(f"{zip_path}: not a zip file")
    roots = _roots()
    with zipfile.ZipFile(zip_path) as archive:
        plan, agents, refused = _plan(archive, roots)
        if not plan and not agents:
            raise Fail(f"{zip_path}: not a backup of hermes' or hermes-agent's (no {MANIFEST}, config.yaml, .env or "
                       "state.db in it)")
        there = [target for _, target in plan if target.exists()]  # config, keys, sessions, memory: asked first
        if there and not yes:
            named = ", ".join(str(t) for t in there[:3]) + (f" and {len(there) - 3} more" if len(there) > 3 else "")
            if not sys.stdin.isatty():
                raise Fail(f"{named} would be overwritten: --yes does it")
            click.confirm(f"Overwrite {named} with the backup's?", abort=True, err=True)
        for number, (member, target) in enumerate(plan, 1):
            _restore(archive, member, target)
            if number % PROGRESS == 0 and not as_json:
                click.echo(f"  {number} of {len(plan)} files ...", err=True)
        sessions = _agents_sessions(ctx.obj, archive, agents["sessions"]) if "sessions" in agents else None
        cron = _agents_cron(archive, agents["cron"]) if "cron" in agents else None
    report = {"source": str(zip_path), "restored": len(plan), "into": {k: str(v) for k, v in roots.items()},
              "refused": refused, "agents_sessions": sessions, "agents_cron": cron}
    if as_json:
        return echo_json(report)
    click.echo(f"Restored {len(plan)} files into {' and '.join(str(v) for v in dict.fromkeys(roots.values()))}."
               + (f" hermes-agent's sessions: {sessions['imported']} imported ({sessions['messages']} messages)."
                  if sessions else "") + (f" Its cron jobs: {cron['imported']} imported." if cron else ""))
    for line in refused:
        click.echo(f"  not restored: {line}", err=True)
    for line in (cron or {}).get("left_out", []) + [f"note: {n}" for n in (cron or {}).get("notes", [])]:
        click.echo(f"  cron job {line}", err=True)


def _plan(archive, roots: dict) -> tuple:
    """``([(member, target path)], {"sessions" or "cron": hermes-agent's state.db or cron/jobs.json member},
    [refused members with why])``."""
    names = [info for info in archive.infolist() if not info.is_dir()]
    manifest = next((info for info in names if info.filename == MANIFEST), None)
    plan, refused, agents = [], [], {}
    if manifest is not None:
        for info in names:
            label, _, rest = info.filename.partition("/")
            if label == "home":  # restored where config and data are apart: config.yaml, .env, SOUL.md to config's
                root = roots.get("home") or roots["config" if rest in AGENTS_KEPT else "data"]
            else:
                root = (roots.get(label) or roots.get("home")) if label in ("config", "data") else None
            if info.filename != MANIFEST:
                _place(info, root, rest, plan, refused)
        return plan, {}, refused
    prefix = _agents_prefix(names)
    config, data = roots.get("config") or roots["home"], roots.get("data") or roots["home"]
    for info in names:
        rest = info.filename[len(prefix):]
        top = rest.split("/", 1)[0]
        if rest in AGENTS_READ:
            agents[AGENTS_READ[rest]] = info
        elif rest in AGENTS_KEPT:
            _place(info, config, rest, plan, refused)
        elif top in AGENTS_FOLDERS:
            _place(info, data, rest, plan, refused)
    return (plan, agents, refused) if plan or agents else ([], {}, [])


def _agents_prefix(names: list) -> str:
    """A hermes-agent backup zipped with its folder (``.hermes/config.yaml``): that folder's name and a slash."""
    firsts = {info.filename.split("/", 1)[0] for info in names if "/" in info.filename}
    roots_files = [info for info in names if "/" not in info.filename]
    return f"{firsts.pop()}/" if not roots_files and len(firsts) == 1 else ""


def _place(info, root: Optional[Path], rest: str, plan: list, refused: list) -> None:
    """``rest`` under ``root``, unless it would land outside it or is a link."""
    mode = (info.external_attr >> 16) & 0o170000
    target = (root / rest).resolve() if root is not None and rest else None
    if target is None:
        refused.append(f"{info.filename}: not in a folder of the backup's")
    elif mode == 0o120000:
        refused.append(f"{info.filename}: a symbolic link")
    elif not target.is_relative_to(root.resolve()) or Path(rest).is_absolute():
        refused.append(f"{info.filename}: outside {root}")
    else:
        plan.append((info, target))


def _restore(archive, info, target: Path) -> None:
    """One file, written whole: a temporary file beside it renamed over it; a database's old side files go."""
    import shutil

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    mode = 0o600 if target.name in PRIVATE or target.suffix == ".db" else 0o644
    with archive.open(info) as source, os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode),
                                                 "wb") as out:
        shutil.copyfileobj(source, out)
    if target.suffix == ".db":  # the old database's write-ahead log would be replayed into the new one
        for side in ("-wal", "-shm", "-journal"):
            target.with_name(target.name + side).unlink(missing_ok=True)
    os.replace(partial, target)


def _agents_sessions(app, archive, info) -> Optional[dict]:
    """hermes-agent's conversations of its state.db, into the session store, as ``hermes sessions import`` does."""
    from hermes.cli.app import Fail

    try:
        from plugins.sessions import get_store
        from plugins.sessions.base import StoreError
        from plugins.sessions.hermes_agent import import_into
    except ImportError:  # a distro without the sessions plugin
        click.echo("hermes-agent's sessions were not imported: no sessions plugin here", err=True)
        return None
    with _extracted(archive, info, "state.db") as copy:
        try:
            return import_into(get_store(app.config, app.host), copy)
        except StoreError as exc:
            raise Fail(f"hermes-agent's sessions: {exc}") from None


def _agents_cron(archive, info) -> Optional[dict]:
    """hermes-agent's cron jobs, as ``hermes cron import`` brings them."""
    try:
        from plugins.cron.agents_jobs import import_jobs
    except ImportError:  # a distro without the cron plugin
        click.echo("hermes-agent's cron jobs were not imported: no cron plugin here", err=True)
        return None
    with _extracted(archive, info, "jobs.json") as copy:
        try:
            return import_jobs(copy)
        except ValueError as exc:
            click.echo(f"hermes-agent's cron jobs were not imported: {exc}", err=True)
            return None


@contextmanager
def _extracted(archive, info, name: str) -> Iterator[Path]:
    """A member of the zip as a file of its own while the block runs (an importer reads a path)."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / name
        with archive.open(info) as source, copy.open("wb") as out:
            shutil.copyfileobj(source, out)
        yield copy
