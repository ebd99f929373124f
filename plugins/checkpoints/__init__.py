"""Built-in plugin checkpoints: snapshots of a folder before the agent changes it, to see and undo what it did.

With ``checkpoints.enabled: true`` (hermes-agent's key) the folder a turn is about to change is snapshotted once per
turn, before its first ``write_file``, ``patch``, ``terminal`` or ``execute_code`` call: ``hermes checkpoints``
(list, diff, restore) and ``/rollback`` in a chat. Snapshots live in a git store in the data folder
(:mod:`plugins.checkpoints.store`), never in the folder; a snapshot that cannot be taken is a warning and never stops
the tool."""

from __future__ import annotations

import logging
import os

from kernel import hookimpl

log = logging.getLogger("hermes.checkpoints")

CHANGING = ("write_file", "patch", "terminal", "execute_code")  # the tools that may change files
_TAKEN = "checkpoints.taken"  # agent.state: (turn id, the folders snapshotted in it)
TURNS = "checkpoints.turns"  # agent.state: snapshot commit -> (session, where its turn's user message is in history)
_said: set = set()  # folders a warning was given for (once each)


@hookimpl
def register_config(declare):
    declare("checkpoints.enabled", bool, False, "snapshot a folder before a turn first changes it "
            "(`hermes checkpoints`, `/rollback`)")
    declare("checkpoints.max_snapshots", int, 20, "snapshots kept per folder (the oldest are dropped)", minimum=1)
    declare("checkpoints.max_file_size_mb", float, 10, "files bigger than this are left out of a snapshot (0: no "
            "limit)", minimum=0)
    declare("checkpoints.auto_prune", bool, True, "prune as a session ends, at most once per min_interval_hours "
            "(as `hermes checkpoints prune` does)")
    declare("checkpoints.min_interval_hours", float, 24, "how often auto_prune runs at most", minimum=0)
    declare("checkpoints.retention_days", int, 7, "the snapshots of a folder untouched this long go (0: kept)",
            minimum=0)
    declare("checkpoints.delete_orphans", bool, True, "the snapshots of a folder that is gone go")
    declare("checkpoints.max_total_size_mb", float, 500, "over this, the oldest snapshots go, each folder's newest "
            "kept (0: no limit)", minimum=0)


def folder_of(call, agent=None) -> "str | None":
    """The folder a call would change: the folder the tools started in (``terminal.cwd``), for a path inside it; else
    the project a path lies in (the nearest folder up with ``.git`` or a project file; none: None, a stray file is not
    worth a snapshot of its folder, which may be /tmp or /etc). Relative paths are the shell's (a ``cd`` moved it)."""
    from kernel.types import ToolError
    from plugins.tool_args import start_folder, working_folder

    try:
        here = os.path.realpath(start_folder(getattr(agent, "config", None)))
        shell = working_folder(agent)
    except ToolError:  # a wrong terminal.cwd: the tool refuses the call, nothing to keep
        return None
    target = call.args.get("path") if call.name in ("write_file", "patch") else call.args.get("workdir")
    target = target if isinstance(target, str) and target.strip() else "."
    path = os.path.realpath(os.path.join(shell, os.path.expanduser(target)))
    if path == here or path.startswith(here + os.sep):
        return here
    probe = path if os.path.isdir(path) else os.path.dirname(path)
    while os.path.dirname(probe) != probe:
        if any(os.path.exists(os.path.join(probe, m)) for m in (".git", "pyproject.toml", "package.json")):
            return probe
        probe = os.path.dirname(probe)
    return None


@hookimpl(tryfirst=True)
def pre_tool_call(call, agent):
    if call.name not in CHANGING or not agent.config.get("checkpoints.enabled"):
        return None
    turn = getattr(agent.turn, "turn_id", None)
    taken = agent.state.get(_TAKEN)
    if taken is None or taken[0] != turn:
        taken = agent.state[_TAKEN] = (turn, set())
    folder = folder_of(call, agent)
    if folder is None or folder in taken[1] or not os.path.isdir(folder):
        return None
    taken[1].add(folder)
    from plugins.checkpoints.store import CheckpointError, Store
    from plugins.tool_args import headline

    store = Store(folder, agent.config)
    try:
        with agent.host.waiting():  # git's own timeout bounds it, not plugins.hook_timeout
            commit = store.take(f"before {headline(call.name, call.args, 100)}",
                                int(agent.config.get("checkpoints.max_snapshots") or 20))
        if commit:  # /rollback to it can take the conversation back to before this turn too
            asked = max((i for i, m in enumerate(agent.messages) if m.get("role") == "user"), default=None)
            agent.state.setdefault(TURNS, {})[commit] = (agent.session_id, asked)
    except (CheckpointError, OSError) as exc:
        if folder not in _said:
            _said.add(folder)
            log.warning("checkpoints: no snapshot of %s: %s", folder, exc)
    return None


@hookimpl
def on_session_finalize(agent):
    config = agent.config
    if not (config.get("checkpoints.enabled") and config.get("checkpoints.auto_prune")):
        return
    from plugins.checkpoints.store import CheckpointError, prune_when_due

    try:
        with agent.host.waiting():  # git gc's time is git's timeout's, not plugins.hook_timeout's
            done = prune_when_due(config)
    except (CheckpointError, OSError) as exc:
        log.warning("checkpoints.auto_prune: %s", exc)
        return
    if done and any(done.values()):
        log.info("checkpoints.auto_prune: %s", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in done.items()))


@hookimpl
def register_commands(cli):
    from plugins.checkpoints.cli import checkpoints

    cli.add_command(checkpoints)


@hookimpl
def register_slash_commands(register):
    register("rollback", _rollback, description="the folder's checkpoints: list, diff N, or N [FILE] to restore")


def _rollback(raw_args: str, agent) -> str:
    from plugins.checkpoints.chat import rollback  # when typed: every session collects the slash commands

    return rollback(raw_args, agent)


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """Whether snapshots can be taken: on, and git there."""
    import shutil

    from plugins.doctor.hookspecs import OK, WARN, Check

    if not agent.config.get("checkpoints.enabled"):
        return None
    if shutil.which("git") is None:
        return [Check("checkpoints", WARN, "checkpoints.enabled is true, but git is not installed: no snapshot is "
                                           "taken (install git)")]
    from plugins.checkpoints.store import projects, size

    return [Check("checkpoints", OK, f"on; snapshots of {len(projects())} folder(s), {size() / 1e6:.1f} MB "
                                     "(`hermes checkpoints status`)")]
