"""``hermes memory``: what the agent keeps about its work (MEMORY.md) and about you (USER.md): show, edit,
clear; and the external backend beside them (``memory.provider``): status, setup, off (hermes-agent's). The files are
the memory plugin's, in the data folder; a running chat reads them again each session."""

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


@memory.command("reset", hidden=True)
@click.option("--target", type=click.Choice((*TARGETS, "all")), default="all", show_default=True)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def reset(ctx, target: str, yes: bool):
    """hermes-agent's name of `clear`."""
    ctx.invoke(clear, target=target, yes=yes)


def _backends(app) -> dict:
    """name -> (factory, description) of the memory backends the enabled plugins register."""
    from plugins_memory.hookspecs import MEMORY_BACKENDS

    return {name: (entry.value, entry.description) for name, entry in app.host.registry[MEMORY_BACKENDS].items()}


def _state(app, backends: dict, name: str) -> tuple:
    """(whether the backend ``name`` of ``backends`` can work here, what it needs when not)."""
    from plugins_memory.base import availability

    factory, _ = backends.get(name, (None, ""))
    return availability(factory, app.config)[1:] if factory is not None else (False, "no enabled plugin registers it")


@memory.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def status(app, as_json: bool):
    """The external backend (memory.provider): whether it can work here and what it needs; the backends there are."""
    from hermes.cli.app import echo_json

    name, registered = str(app.config.get("memory.provider") or ""), _backends(app)
    ready, needs = _state(app, registered, name) if name else (False, "")
    backends = {n: d for n, (_, d) in sorted(registered.items())}
    if as_json:
        echo_json({"provider": name or None, "available": ready, "needs": None if ready or not name else needs,
                   "backends": backends})
        return
    click.echo(f"memory.provider: {name or 'none (MEMORY.md and USER.md only)'}" + (
        "" if not name else ": ready" if ready else f": not available here ({needs})"))
    for backend, description in backends.items():
        click.echo(f"  {backend}: {description}")


@memory.command("setup")
@click.argument("provider", required=False)
@click.pass_obj
def setup(app, provider: "str | None"):
    """Choose the external backend (memory.provider in config.yaml, its comments kept), at a terminal from a numbered
    list; then say whether it can work here and what it still needs."""
    import sys

    from hermes.cli.app import EXIT_USAGE, Fail, program

    backends = _backends(app)
    names = sorted(backends)
    if provider is None:
        if not sys.stdin.isatty():
            raise Fail(f"which backend? `{program()} memory setup {'|'.join(names)}`", EXIT_USAGE)
        for number, name in enumerate(names, 1):
            click.echo(f"  {number}. {name}: {backends[name][1]}")
        chosen = click.prompt("Backend", type=click.IntRange(1, len(names)))
        provider = names[chosen - 1]
    if provider not in names:
        raise Fail(f"no memory backend '{provider}'; there are: {', '.join(names)}", EXIT_USAGE)
    _write(app, provider)
    ready, needs = _state(app, backends, provider)
    click.echo(f"memory.provider: {provider}" + (": ready" if ready else f"; it still needs {needs}"))


@memory.command("off")
@click.pass_obj
def off(app):
    """No external backend: MEMORY.md and USER.md only (memory.provider emptied)."""
    _write(app, "")
    click.echo("memory.provider: none (MEMORY.md and USER.md only)")


def _write(app, provider: str) -> None:
    from hermes.cli.app import Fail
    from plugins.config_command.edit import EditError, edit, path_of, set_key

    try:
        edit(path_of(app.config), lambda document: set_key(document, "memory.provider", provider))
    except (EditError, OSError) as exc:
        raise Fail(f"config.yaml was not changed: {exc}") from None
    app.config.set_value("memory.provider", provider)
