"""The chat's ``/rollback``, and the listing it shares with ``hermes checkpoints`` (no click here: a host that
collects slash commands, such as ``hermes serve``'s, imports this without the command line)."""

from __future__ import annotations

import os


def listing(snapshots: list, folder: str) -> str:
    if not snapshots:
        return f"No checkpoints of {folder}."
    lines = [f"Checkpoints of {folder} (newest first):"]
    for number, snap in enumerate(snapshots, 1):
        changed = "" if snap.files is None else f"  ({snap.files} file(s) changed since the one before)"
        lines.append(f"  {number:>2}  {snap.commit[:8]}  {snap.when[:19].replace('T', ' ')}  {snap.reason}{changed}")
    return "\n".join(lines)


def clip(text: str, most: int = 200) -> str:
    lines = text.splitlines()
    return "\n".join(lines[:most] + ([f"... ({len(lines) - most} more lines)"] if len(lines) > most else []))


def rollback(raw_args: str, agent) -> str:
    """``/rollback`` (list), ``/rollback diff N``, ``/rollback N [FILE]`` (restore)."""
    from plugins.checkpoints.store import CheckpointError, Store

    args = raw_args.split()
    store = Store(os.getcwd(), agent.config)
    try:
        if not args:
            said = listing(store.snapshots(), store.folder)
            return said if agent.config.get("checkpoints.enabled") else \
                said + "\nCheckpoints are off: `hermes config set checkpoints.enabled true` turns them on."
        if args[0] == "diff":
            if len(args) != 2:
                return "usage: /rollback diff N"
            return clip(store.diff(store.find(args[1]))) or "Nothing changed since."
        snap = store.find(args[0])
        before = store.restore(snap, args[1] if len(args) > 1 else None)
    except CheckpointError as exc:
        return str(exc)
    return (f"restored {args[1] if len(args) > 1 else store.folder} to {snap.commit[:8]} ({snap.reason})"
            + (f"; what was there is checkpoint {before[:8]}" if before else "")
            + ". The conversation still holds what was done: /undo takes the last exchange back.")
