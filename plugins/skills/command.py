"""``hermes skills list|show|install|remove`` and ``hermes curator``."""

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
@click.argument("path")
@click.option("--name", help="Install it under another name.")
@click.option("--force", is_flag=True, help="A SKILL.md from a URL that reads like an instruction to the agent: "
                                            "install it all the same.")
def install_cmd(path, name, force):
    """Copy a skill folder (or a SKILL.md, here or at an http(s) URL) into $HERMES_HOME/skills."""
    from pathlib import Path

    from plugins.skills import catalog

    try:
        if path.startswith(("http://", "https://")):
            skill = catalog.install_url(path, name, force)
        elif not Path(path).exists():
            raise catalog.SkillError(f"{path}: no such file or folder (a skill folder, a SKILL.md, or its URL)")
        else:
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
    from plugins.skills.curator import note

    note("deleted", name)


@click.group(invoke_without_command=True)
@click.pass_context
def curator(ctx):
    """The skills the agent made: stale when unused, archived later (hermes-agent's curator; alone: status)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(status_cmd)


def _curated(action):
    """Run a curator action; its one-line errors are the command's."""
    from plugins.skills.curator import CuratorError

    try:
        return action()
    except CuratorError as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"{getattr(exc, 'filename', '') or 'skills folder'}: {exc.strerror or exc}") from None


@curator.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def status_cmd(app, as_json):
    """On or paused, the last and next pass, and each skill the agent made: state, uses, last use."""
    from datetime import timedelta

    from hermes.cli.app import echo_json
    from plugins.skills import curator as c

    config, current, usage = app.config, c.state(), c.usage()
    last = c.moment(current.get("last_run_at"))
    following = last + timedelta(hours=config.get("curator.interval_hours")) if last else None
    skills = [{"name": name, "state": r.get("state", c.ACTIVE), "pinned": bool(r.get("pinned")),
               "uses": c.uses(r),
               "last_used": (c.last_activity(r) or c.moment(r.get("created_at")) or c.now()).isoformat()}
              for name, r in sorted(usage.items()) if c.agent_made(r)]
    out = {"enabled": bool(config.get("curator.enabled")), "paused": bool(current.get("paused")),
           "last_run_at": last and last.isoformat(), "last_run_summary": current.get("last_run_summary"),
           "next_run_after": following and following.isoformat(), "skills": skills, "archived": c.archived(),
           "snapshots": len(c.snapshots())}
    if as_json:
        return echo_json(out)
    on = "paused (`hermes curator resume`)" if out["paused"] else "on" if out["enabled"] else "off (curator.enabled)"
    said = f" ({out['last_run_summary']})" if out["last_run_summary"] else ""
    click.echo(f"curator: {on}; last pass {f'{last:%Y-%m-%d %H:%M} UTC' if last else 'never'}{said}")
    if following and out["enabled"] and not out["paused"]:
        click.echo(f"next pass: at a session's start after {following:%Y-%m-%d %H:%M} UTC")
    if not skills:
        click.echo("no skills made by the agent yet (only those are the curator's to move)")
    width = max([len(s["name"]) for s in skills] + [4])
    for s in skills:
        click.echo(f"  {s['name']:<{width}}  {s['state'] + (', pinned' if s['pinned'] else ''):<15}  "
                   f"{s['uses']:>4} uses  last {s['last_used'][:10]}")
    if out["archived"]:
        click.echo(f"archived: {', '.join(out['archived'])} (`hermes curator restore NAME`)")
    if out["snapshots"]:
        click.echo(f"snapshots: {out['snapshots']} (`hermes curator rollback --list`)")


@curator.command("usage")
@click.option("--sort", type=click.Choice(["activity", "recent", "name"]), default="activity",
              help="Most used first (default), most recently used first, or by name.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def usage_cmd(app, sort, as_json):
    """Every skill with its uses and last use, and whether the agent made it (hermes-agent's)."""
    from hermes.cli.app import echo_json
    from plugins.skills import curator as c
    from plugins.skills import skills_of

    usage = c.usage()
    rows = []
    for name, skill in skills_of(app.config, app.host).items():
        record = usage.get(name) if isinstance(usage.get(name), dict) else {}
        last = c.last_activity(record)
        rows.append({"name": name, "source": skill.source, "made_by_agent": c.agent_made(record),
                     "uses": c.uses(record),
                     "last_used": last.isoformat() if last else None, "state": record.get("state", c.ACTIVE)})
    rows.sort(key=lambda r: r["name"])
    if sort != "name":  # stable: ties stay by name; never used, last
        rows.sort(key=(lambda r: r["uses"]) if sort == "activity" else (lambda r: r["last_used"] or ""), reverse=True)
    if as_json:
        return echo_json(rows)
    if not rows:
        return click.echo("no skills yet")
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        made = "agent" if r["made_by_agent"] else r["source"]
        click.echo(f"{r['name']:<{width}}  {r['uses']:>4} uses  last {(r['last_used'] or 'never')[:10]:<10}  {made}")


@curator.command("run")
@click.option("--dry-run", is_flag=True, help="Say what it would change; change nothing.")
@click.option("--consolidate", is_flag=True, help="Then ask the model to merge the agent's skills that overlap "
                                                  "(hermes-agent's consolidation; a model call or more).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def run_cmd(app, dry_run, consolidate, as_json):
    """A pass now: the agent's skills unused for curator.stale_after_days marked stale, for archive_after_days
    archived (after a snapshot of the skills folder)."""
    from hermes.cli.app import echo_json
    from plugins.skills import curator as c

    result = _curated(lambda: c.run(app.config, dry_run=dry_run))
    if consolidate:
        result["consolidation"] = _curated(lambda: c.consolidate(app, dry_run))
    if as_json:
        return echo_json(result)
    click.echo(f"{'would change' if dry_run else 'curator'}: {c.summary(result)}"
               + (f" (snapshot {result['snapshot']} first)" if result["snapshot"] else ""))
    merged = result.get("consolidation")
    if merged:
        click.echo(f"consolidation: {merged.get('summary') or merged.get('why')}" + (
            f" (archived: {', '.join(merged['archived'])}; snapshot {merged['snapshot']} first)"
            if merged.get("archived") else ""))


@curator.command("pause")
def pause_cmd():
    """No passes until `hermes curator resume`."""
    _paused(True)


@curator.command("resume")
def resume_cmd():
    """Passes again, at a session's start when one is due."""
    _paused(False)


def _paused(paused: bool) -> None:
    from plugins.skills import curator as c

    def change():
        with c.locked():
            current = c.state()
            current["paused"] = paused
            c._write(c.root() / ".curator_state", current)
    _curated(change)
    click.echo("curator paused" if paused else "curator resumed")


@curator.command("pin")
@click.argument("name")
def pin_cmd(name):
    """Never mark this skill stale nor archive it."""
    from plugins.skills import curator as c

    _curated(lambda: c.pin(name, True))
    click.echo(f"pinned {name}")


@curator.command("unpin")
@click.argument("name")
def unpin_cmd(name):
    """The curator may move this skill again."""
    from plugins.skills import curator as c

    _curated(lambda: c.pin(name, False))
    click.echo(f"unpinned {name}")


@curator.command("archive")
@click.argument("name")
def archive_cmd(name):
    """Move a skill of the skills folder to skills/.archive now (out of the index and the commands)."""
    from plugins.skills import curator as c

    click.echo(f"archived {name} ({_curated(lambda: c.archive(name))}); `hermes curator restore {name}` brings it back")


@curator.command("restore")
@click.argument("name")
def restore_cmd(name):
    """Bring an archived skill back to the skills folder."""
    from plugins.skills import curator as c

    click.echo(f"restored {name} ({_curated(lambda: c.restore(name))})")


@curator.command("list-archived")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_archived_cmd(as_json):
    """The archived skills' names."""
    from hermes.cli.app import echo_json
    from plugins.skills import curator as c

    names = c.archived()
    if as_json:
        return echo_json(names)
    click.echo("\n".join(names) if names else "no archived skills")


@curator.command("backup")
@click.option("--reason", default="by hand", help="Said in the snapshot's manifest.")
@click.pass_obj
def backup_cmd(app, reason):
    """Snapshot the skills folder now (a pass that archives does it first)."""
    from plugins.skills import curator as c

    made = _curated(lambda: c.snapshot(reason, app.config.get("curator.backup.keep")))
    click.echo(f"snapshot {made['id']}: {made['files']} files, {made['bytes']} bytes")


@curator.command("rollback")
@click.option("--list", "listing", is_flag=True, help="List the snapshots, newest first; restore none.")
@click.option("--id", "ident", help="The snapshot to restore (default: the newest).")
@click.option("-y", "--yes", is_flag=True, help="Do not ask.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def rollback_cmd(listing, ident, yes, as_json):
    """The skills folder as a snapshot holds it; what is there now is snapshotted first."""
    from hermes.cli.app import echo_json
    from plugins.skills import curator as c

    if listing:
        found = c.snapshots()
        if as_json:
            return echo_json(found)
        for m in found:
            click.echo(f"{m['id']}  {m.get('files', '?'):>5} files  {m.get('reason', '')}")
        return None if found else click.echo("no snapshots yet")
    if not yes:
        from plugins.asking import confirm

        confirm(f"Replace {c.root()} with snapshot {ident or 'the newest'}? (what is there now is snapshotted "
                "first)", "the skills folder was not replaced")
    done = _curated(lambda: c.rollback(ident))
    if as_json:
        return echo_json(done)
    click.echo(f"skills folder restored from {done['restored']['id']}; what was there is snapshot "
               f"{done['saved_before']['id']}")


@click.group(invoke_without_command=True)
@click.pass_context
def bundles(ctx):
    """Skill bundles: skills one chat command loads together, /NAME (hermes-agent's; alone: list)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(bundles_list_cmd)


@bundles.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def bundles_list_cmd(app, as_json):
    """Each bundle, its skills (a missing one marked !) and its description."""
    from hermes.cli.app import echo_json
    from plugins.skills import skills_of
    from plugins.skills.bundles import bundles as found

    have, rows = set(skills_of(app.config, app.host)), list(found().values())
    for row in rows:
        row["missing"] = [name for name in row["skills"] if name not in have]
    if as_json:
        return echo_json(rows)
    if not rows:
        return click.echo("no skill bundles yet: `hermes bundles create NAME --skill A --skill B`")
    for row in rows:
        names = ", ".join(n + ("!" if n in row["missing"] else "") for n in row["skills"])
        click.echo(f"/{row['name']}  {names}  {row['description']}")
    if any(row["missing"] for row in rows):
        click.echo("!: no such skill here (`hermes skills list`); the bundle loads the others")


@bundles.command("create")
@click.argument("name")
@click.option("--skill", "-s", "names", multiple=True, required=True, help="A skill it loads (again for more).")
@click.option("--description", default="", help="One line for /help.")
@click.option("--instruction", default="", help="Said to the model above the skills.")
@click.pass_obj
def bundles_create_cmd(app, name, names, description, instruction):
    """A bundle NAME of the skills given (a file in the data folder's skill-bundles/)."""
    from hermes.cli.app import program
    from plugins.skills import skills_of
    from plugins.skills.bundles import BundleError, save, slug

    try:
        path = save(name, list(names), description, instruction)
    except BundleError as exc:
        raise _fail(str(exc)) from None
    click.echo(f"bundle /{slug(name)}: {', '.join(names)} ({path})")
    missing = [n for n in names if n not in skills_of(app.config, app.host)]
    if missing:
        click.echo(f"{program()}: note: no skill {', '.join(missing)} here yet; the bundle loads the others",
                   err=True)


@bundles.command("delete")
@click.argument("name")
def bundles_delete_cmd(name):
    """Remove a bundle (its skills stay)."""
    from plugins.skills.bundles import BundleError, delete

    try:
        click.echo(f"deleted bundle {name} ({delete(name)})")
    except BundleError as exc:
        raise _fail(str(exc)) from None
