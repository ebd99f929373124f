"""Pairing (hermes-agent's): a stranger who writes to the bot gets a one-time code, and the owner lets them in with
``hermes pairing approve PLATFORM CODE``; the people paired so are allowed beside the platform's allow-list.

hermes-agent's files, in the data folder's ``platforms/pairing/`` (``pairing/`` where an older install has it), so a
data folder shared with it pairs the same: ``PLATFORM-pending.json`` (each code kept only as a salted SHA-256, an
hour), ``PLATFORM-approved.json`` and ``_rate_limits.json``. A user gets a code at most every 10 minutes, a platform
has at most 3 waiting, and 5 wrong codes lock its approvals for an hour (a code is 8 characters of 32: guessing is
the only attack). ``unauthorized_dm_behavior: ignore`` sends strangers nothing at all."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Optional

import click

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_TTL, RATE, LOCKOUT, MOST_PENDING, MOST_FAILURES = 3600, 600, 3600, 3, 5
_lock = threading.Lock()  # this process's threads wait here, the other processes at the file's


class Pairing:
    def __init__(self, data_dir: Path):
        legacy = data_dir / "pairing"
        self.dir = legacy if legacy.is_dir() and any(legacy.glob("*.json")) else data_dir / "platforms" / "pairing"

    @contextlib.contextmanager
    def _locked(self):
        """One at a time, this process's threads and the other processes (the gateway and `hermes pairing`): each
        reads a file, changes it and writes it back, and a failed code counted meanwhile would be lost."""
        import fcntl

        with _lock:
            self.dir.mkdir(parents=True, exist_ok=True)
            with open(self.dir / "_pairing.lock", "a") as held:  # closed: the lock is let go
                fcntl.flock(held, fcntl.LOCK_EX)
                yield

    def _read(self, name: str) -> dict:
        try:
            found = json.loads((self.dir / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def _write(self, name: str, data: dict) -> None:
        from hermes.host.files import atomic_write

        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.dir / name, json.dumps(data, indent=2, ensure_ascii=False))
        os.chmod(self.dir / name, 0o600)

    def _pending(self, platform: str) -> dict:
        """The platform's waiting codes, the expired ones gone."""
        pending = self._read(f"{platform}-pending.json")
        live = {k: v for k, v in pending.items() if isinstance(v, dict) and isinstance(
            v.get("created_at"), (int, float)) and time.time() - v["created_at"] <= CODE_TTL}
        if live != pending:
            self._write(f"{platform}-pending.json", live)
        return live

    def approved(self, platform: str, user: str) -> bool:
        return user.lower() in {str(u).lower() for u in self._read(f"{platform}-approved.json")}

    def code_for(self, platform: str, user: str, name: str = "") -> Optional[str]:
        """A new code for ``user`` (None: asked less than 10 minutes ago, 3 waiting, or the platform locked)."""
        with self._locked():
            limits, now = self._read("_rate_limits.json"), time.time()
            pending = self._pending(platform)
            if now < limits.get(f"_lockout:{platform}", 0) or now - limits.get(f"{platform}:{user}", 0) < RATE or \
                    len(pending) >= MOST_PENDING:
                return None
            code, salt = "".join(secrets.choice(ALPHABET) for _ in range(8)), os.urandom(16)
            pending[secrets.token_hex(8)] = {"hash": hashlib.sha256(salt + code.encode()).hexdigest(),
                                             "salt": salt.hex(), "user_id": user, "user_name": name, "created_at": now}
            self._write(f"{platform}-pending.json", pending)
            self._write("_rate_limits.json", {**limits, f"{platform}:{user}": now})
            return code

    def approve(self, platform: str, code: str) -> "dict | str":
        """The user the code was given to, now approved; else why not (a string)."""
        with self._locked():
            limits, now, code = self._read("_rate_limits.json"), time.time(), code.strip().upper()
            if now < limits.get(f"_lockout:{platform}", 0):
                return f"{platform}'s approvals are locked for an hour after {MOST_FAILURES} wrong codes"
            pending = self._pending(platform)
            for key, entry in pending.items():
                try:
                    wanted = hashlib.sha256(bytes.fromhex(str(entry.get("salt"))) + code.encode()).hexdigest()
                except ValueError:
                    continue
                if secrets.compare_digest(wanted, str(entry.get("hash"))):
                    del pending[key]
                    self._write(f"{platform}-pending.json", pending)
                    approved = self._read(f"{platform}-approved.json")
                    approved[entry["user_id"]] = {"user_name": entry.get("user_name", ""), "approved_at": now}
                    self._write(f"{platform}-approved.json", approved)
                    return {"user_id": entry["user_id"], "user_name": entry.get("user_name", "")}
            failures = limits.get(f"_failures:{platform}", 0) + 1
            locked = failures >= MOST_FAILURES
            self._write("_rate_limits.json", {**limits, f"_failures:{platform}": 0 if locked else failures,
                                              **({f"_lockout:{platform}": now + LOCKOUT} if locked else {})})
            return f"no waiting code {code} on {platform} (codes last an hour)" + (
                f"; {platform}'s approvals are now locked for an hour" if locked else "")

    def revoke(self, platform: str, user: str) -> bool:
        with self._locked():
            approved = self._read(f"{platform}-approved.json")
            kept = {k: v for k, v in approved.items() if k.lower() != user.lower()}
            if kept != approved:
                self._write(f"{platform}-approved.json", kept)
            return kept != approved

    def listed(self) -> dict:
        """``{"pending": [...], "approved": [...]}`` of every platform (no code: only their hashes are kept)."""
        found: dict = {"pending": [], "approved": []}
        if not self.dir.is_dir():
            return found
        with self._locked():  # expired codes are dropped from their file
            for path in sorted(self.dir.glob("*-*.json")):
                platform, _, kind = path.stem.rpartition("-")
                if kind == "pending":
                    found["pending"] += [{"platform": platform, "user_id": e.get("user_id"), "user_name": e.get(
                        "user_name", ""), "age_minutes": int((time.time() - e["created_at"]) // 60)}
                        for e in self._pending(platform).values()]
                elif kind == "approved":
                    found["approved"] += [{"platform": platform, "user_id": user, "user_name": (e or {}).get(
                        "user_name", "")} for user, e in self._read(path.name).items()]
        return found


@click.group()
def pairing():
    """Strangers' pairing codes: approve one to let its user talk to the gateway (hermes-agent's)."""


@pairing.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def list_pairing(app, as_json):
    """The codes waiting for approval (whose, not the codes) and the users approved."""
    from hermes.cli.app import echo_json

    found = Pairing(app.config.data_dir).listed()
    if as_json:
        echo_json(found)
        return
    for each in found["pending"]:
        click.echo(f"waiting  {each['platform']}  {each['user_id']}  {each['user_name']}  ({each['age_minutes']} min)")
    for each in found["approved"]:
        click.echo(f"approved {each['platform']}  {each['user_id']}  {each['user_name']}")
    if not found["pending"] and not found["approved"]:
        click.echo("nobody asked to pair yet (a stranger who writes to the bot gets a code)")


@pairing.command()
@click.argument("platform")
@click.argument("code")
@click.pass_obj
def approve(app, platform, code):
    """Let the user who was given CODE on PLATFORM talk to the gateway (at once, a running one too)."""
    from hermes.cli.app import Fail

    found = Pairing(app.config.data_dir).approve(platform.lower(), code)
    if isinstance(found, str):
        raise Fail(found)
    click.echo(f"approved {platform} user {found['user_id']} ({found['user_name'] or 'no name'})")


@pairing.command()
@click.argument("platform")
@click.argument("user")
@click.pass_obj
def revoke(app, platform, user):
    """Take a paired user's approval back (an allow-list of the .env is not changed)."""
    from hermes.cli.app import Fail

    if not Pairing(app.config.data_dir).revoke(platform.lower(), user):
        raise Fail(f"{user} is not paired on {platform} (`hermes pairing list`)")
    click.echo(f"revoked {platform} user {user}")
