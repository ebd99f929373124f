"""``hermes memory``: what the agent keeps about its work (MEMORY.md) and about you (USER.md): show, edit,
clear. The files are the memory plugin's, in the data folder; a running chat reads them again each session."""

from __future__ import annotations

import click

TARGETS = ("memory", "user")


def _files(app):
    from hermes.cli.app import Fail
    from hermes.host.config import ConfigError
    from plugins_memory.file_memory import FileMemory

    try:
        return FileMemory.from_config(app.config)
    except ConfigError as exc:
        raise Fail(str(exc)) from None


@click.group("memory", invoke_without_command=True)
@click.pass_context
def memory(ctx):
    """What the agent remembers: MEMORY.md (its notes) and USER.md (about you): show, edit, clear."""
    if ctx.invoked_subcommand is None:  # `hermes memory` alone shows it
        ctx.invoke(show)


@memory.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def show(app, as_json: bool = False):
    """Each file: where it is, its entries, how much of its limit they use."""
    from hermes.cli.app import Fail, echo_json
    from kernel.types import ToolError
    from plugins_memory.file_memory import render_entries

    files, rows = _files(app), []
    for target in TARGETS:
        try:
            entries = files.read(target)
        except ToolError as exc:
            raise Fail(str(exc)) from None
        rows.append({"target": target, "path": str(files.path(target)), "enabled": files.enabled[target],
                     "entries": entries, "chars": len(render_entries(entries)), "limit": files.limits[target]})
    if as_json:
        echo_json(rows)
        return
    click.echo(f"external backend (memory.provider): {app.config.get('memory.provider') or 'none'}")
    for row in rows:
        state = "" if row["enabled"] else "; off in config, not in the prompt"
        count = f"{len(row['entries'])} entr{'y' if len(row['entries']) == 1 else 'ies'}"
        click.echo(f"{row['path']} ({count}, {row['chars']}/{row['limit']} chars{state})")
        for entry in row["entries"]:
            click.echo("  - " + entry.replace("\n", "\n    "))


@memory.command("edit")
@click.argument("target", type=click.Choice(TARGETS), default="memory")
@click.pass_obj
def edit(app, target: str):
    """Open MEMORY.md (or USER.md: `edit user`) in your editor; entries are separated by a line holding only §."""
    from plugins.asking import edit_file

    path = _files(app).path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    edit_file(path)
    click.get_current_context().invoke(show)


@memory.command("clear")
@click.argument("target", type=click.Choice((*TARGETS, "all")), default="all")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_obj
def clear(app, target: str, yes: bool):
    """Forget: every entry of MEMORY.md, of USER.md (`clear user`), or both (the default)."""
    from hermes.cli.app import Fail
    from kernel.types import ToolError

    files = _files(app)
    targets = TARGETS if target == "all" else (target,)
    if not yes:
        from plugins.asking import confirm

        confirm(f"Clear {' and '.join(files.path(t).name for t in targets)}?", "nothing was cleared")
    try:
        for name in targets:
            click.echo(f"{files.path(name)}: {files.clear(name).message}")
    except ToolError as exc:
        raise Fail(str(exc)) from None
