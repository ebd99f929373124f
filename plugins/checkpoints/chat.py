"""The chat's ``/rollback``, and the listing it shares with ``hermes checkpoints`` (no click here: a host that
collects slash commands, such as ``hermes serve``'s, imports this without the command line)."""

from __future__ import annotations


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
    from kernel.types import ToolError
    from plugins.checkpoints.store import CheckpointError, Store
    from plugins.tool_args import start_folder

    args = raw_args.split()
    try:
        store = Store(start_folder(agent.config), agent.config)  # the folder the snapshots are of (terminal.cwd)
    except ToolError as exc:
        return str(exc)
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
    said = (f"restored {args[1] if len(args) > 1 else store.folder} to {snap.commit[:8]} ({snap.reason})"
            + (f"; what was there is checkpoint {before[:8]}" if before else ""))
    if len(args) > 1:
        return said + ". The conversation still holds what was done to it."
    return said + ". " + _conversation_back(agent, snap.commit)


def _conversation_back(agent, commit: str) -> str:
    """After a whole folder went back to a snapshot this chat took, the conversation goes back to before that turn
    (as hermes-agent's /rollback undoes the last turn), so the model no longer believes its changes are there; it
    goes on in a session linked to this one, which keeps what was said. A snapshot of another chat leaves it."""
    from plugins.checkpoints import TURNS

    session, asked = agent.state.get(TURNS, {}).get(commit, (None, None))
    if session != agent.session_id or asked is None or asked >= len(agent.messages):
        return "The conversation still holds what was done: /undo takes the last exchange back."
    taken = len(agent.messages) - asked
    agent.messages = agent.messages[:asked]
    old = agent.session_id
    agent.rotate_session("rollback")
    return (f"The conversation is back to before that turn too ({taken} messages taken back; session {old} keeps "
            f"them); it goes on in session {agent.session_id}.")
