"""``hermes checkpoints``: the snapshots of a folder (list, diff, restore), all folders' (status, prune)."""

from __future__ import annotations

import sys

import click

from hermes.cli.app import Fail, echo_json
from plugins.numbers import FiniteRange
from plugins.checkpoints.chat import clip, listing


def _store(app, folder):
    from kernel.types import ToolError
    from plugins.checkpoints.store import Store
    from plugins.tool_args import start_folder

    try:
        return Store(folder or start_folder(app.config), app.config)
    except ToolError as exc:
        raise Fail(str(exc)) from None


DIR = click.option("--dir", "folder", type=click.Path(exists=True, file_okay=False),
                   help="The folder (default: where the tools start: terminal.cwd, else here).")


@click.group("checkpoints", invoke_without_command=True)
@click.pass_context
def checkpoints(ctx):
    """Snapshots of a folder taken before the agent changed it (checkpoints.enabled): list, diff, restore."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_snapshots)


@checkpoints.command("list")
@DIR
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def list_snapshots(app, folder, as_json):
    """This folder's snapshots, newest first (numbered for diff and restore)."""
    from plugins.checkpoints.store import CheckpointError

    store = _store(app, folder)
    try:
        found = store.snapshots()
    except CheckpointError as exc:
        raise Fail(str(exc)) from None
    if as_json:
        echo_json({"folder": store.folder, "enabled": bool(app.config.get("checkpoints.enabled")),
                   "checkpoints": [s.as_dict() for s in found]})
        return
    click.echo(listing(found, store.folder))
    if not app.config.get("checkpoints.enabled"):
        click.echo("Checkpoints are off: `hermes config set checkpoints.enabled true` turns them on.")


@checkpoints.command("diff")
@click.argument("which")
@DIR
@click.pass_obj
def diff_snapshot(app, which, folder):
    """What changed in the folder since checkpoint WHICH (its number or commit)."""
    from plugins.checkpoints.store import CheckpointError

    store = _store(app, folder)
    try:
        text = store.diff(store.find(which))
    except CheckpointError as exc:
        raise Fail(str(exc)) from None
    click.echo(text or "Nothing changed since.")


@checkpoints.command("restore")
@click.argument("which")
@click.argument("path", required=False)
@DIR
@click.option("--yes", "-y", is_flag=True, help="Restore without asking.")
@click.pass_obj
def restore_snapshot(app, which, path, folder, yes):
    """Put the folder (or the one file PATH) back as checkpoint WHICH held it; files made since are removed. What
    is there now is snapshotted first, so this can be undone."""
    from plugins.checkpoints.store import CheckpointError

    store = _store(app, folder)
    try:
        snap = store.find(which)
        if not yes:
            if not sys.stdin.isatty():
                raise Fail("nobody to ask here (input is not a terminal): pass --yes to restore", 2)
            click.echo(clip(store.diff(snap), 40) or "Nothing changed since.")
            if not click.confirm(f"Restore {path or store.folder} to {snap.commit[:8]} ({snap.reason})?"):
                raise Fail("nothing restored", 1)
        before = store.restore(snap, path)
    except CheckpointError as exc:
        raise Fail(str(exc)) from None
    click.echo(f"restored {path or store.folder} to {snap.commit[:8]} ({snap.reason})"
               + (f"; what was there is checkpoint {before[:8]}" if before else ""))


@checkpoints.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def status(app, as_json):
    """Every folder with checkpoints, and the store's size."""
    from plugins.checkpoints.store import base, projects, size

    rows, total = projects(), size()
    if as_json:
        echo_json({"store": str(base()), "bytes": total, "folders": rows,
                   "enabled": bool(app.config.get("checkpoints.enabled"))})
        return
    for row in rows:
        click.echo(f"{row['workdir']}{'' if row['exists'] else '  (gone)'}")
    click.echo(f"{len(rows)} folder(s), {total / 1e6:.1f} MB in {base()}")


@checkpoints.command("prune")
@click.option("--retention-days", type=click.IntRange(min=0), metavar="DAYS",
              help="Drop the folders untouched this long (default: checkpoints.retention_days; 0: none).")
@click.option("--max-size-mb", type=FiniteRange(min=0), metavar="MB",
              help="Then the oldest snapshots while the store is bigger (default: checkpoints.max_total_size_mb).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def prune(app, retention_days, max_size_mb, as_json):
    """Drop the checkpoints of folders that are gone or untouched, the oldest while over the size limit."""
    from plugins.checkpoints import store

    config = app.config
    days = config.get("checkpoints.retention_days") if retention_days is None else retention_days
    limit = config.get("checkpoints.max_total_size_mb") if max_size_mb is None else max_size_mb
    try:
        done = store.prune(int(days or 0), bool(config.get("checkpoints.delete_orphans")), float(limit or 0))
    except (store.CheckpointError, OSError) as exc:
        raise Fail(str(exc)) from None
    if as_json:
        echo_json(done)
        return
    stale = f", {done['folders_stale']} untouched for over {days} days" if days else ""
    click.echo(f"dropped the checkpoints of {done['folders_gone']} folder(s) that are gone{stale}, and "
               f"{done['snapshots_dropped']} older snapshot(s); {done['bytes_freed'] / 1e6:.1f} MB freed")
