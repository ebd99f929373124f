"""``hermes skills list|show|install|remove``."""

from __future__ import annotations

import click


def _fail(message: str):
    from hermes.cli.app import Fail

    return Fail(message)


@click.group(invoke_without_command=True)
@click.pass_context
def skills(ctx):
    """List, show, install and remove skills (`hermes skills` alone: list)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd)


@skills.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def list_cmd(app, as_json):
    """Every skill, with where it comes from."""
    from hermes.cli.app import echo_json
    from plugins.skills import skills_of

    found = sorted(skills_of(app.config, app.host).values(), key=lambda s: s.name)
    if as_json:
        echo_json([s.to_dict() for s in found])
        return
    if not found:
        click.echo("No skills yet. Add one with `hermes skills install PATH`, or let the agent write one.")
        return
    width = max(len(s.name) for s in found)
    for s in found:
        click.echo(f"{s.name:<{width}}  {s.source:<8}  {s.description}")


@skills.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (with its files and instructions).")
@click.pass_obj
def show_cmd(app, name, as_json):
    """A skill's description, files and instructions."""
    from hermes.cli.app import echo_json
    from plugins.skills import catalog, skills_of

    try:
        skill = catalog.lookup(skills_of(app.config, app.host), name)
        files, body = skill.files(), skill.body()
    except catalog.SkillError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        echo_json({**skill.to_dict(), "files": files, "instructions": body})
        return
    click.echo(f"{skill.name} ({skill.source}, {skill.path})\n{skill.description}\n")
    for f in files:
        click.echo(f"  file: {f}")
    click.echo(body)


@skills.command("install")
@click.argument("path", type=click.Path(exists=True))
@click.option("--name", help="Install it under another name.")
def install_cmd(path, name):
    """Copy a skill folder (or a SKILL.md) into $HERMES_HOME/skills."""
    from pathlib import Path

    from plugins.skills import catalog

    try:
        skill = catalog.install(Path(path), name)
    except catalog.SkillError as exc:
        raise _fail(str(exc)) from None
    click.echo(f"installed {skill.name} ({skill.folder})")
    if not skill.description:  # the index the model chooses skills by shows only the name
        from hermes.cli.app import program

        why = catalog.front_matter_problem(skill.path)
        fix = "fix it" if why else "begin it with front matter: `---` / `description: when to use it` / `---`"
        click.echo(f"{program()}: note: {skill.path}: {why or 'no description'}, so the model sees only the name "
                   f"{skill.name!r}; {fix}", err=True)


@skills.command("remove")
@click.argument("name")
def remove_cmd(name):
    """Delete a skill from $HERMES_HOME/skills."""
    from plugins.skills import catalog

    try:
        click.echo(f"removed {name} ({catalog.remove(name)})")
    except catalog.SkillError as exc:
        raise _fail(str(exc)) from None
