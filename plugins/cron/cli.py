"""``hermes cron``: add, list, pause, resume, remove and run scheduled jobs; ``tick`` runs the due ones once (for
the system's cron or a systemd timer), ``daemon`` every minute until stopped."""

from __future__ import annotations

import time
from pathlib import Path

import click

from hermes.cli.app import Fail, echo_json
from plugins.numbers import FiniteRange


def _state():
    from plugins.cron.jobs import load

    try:
        return load()
    except ValueError as exc:
        raise Fail(str(exc)) from None


def _job(job_id: str):
    try:
        return _state().find(job_id)
    except LookupError as exc:
        raise Fail(str(exc), 2) from None


def _when(iso) -> str:
    from plugins.cron.jobs import when

    return when(iso)


NOTHING_TICKS = ("nothing has run the jobs lately: start `hermes cron daemon`, or have the system's cron run "
                 "`hermes cron tick` every minute (crontab -e: * * * * * hermes cron tick)")


@click.group("cron", invoke_without_command=True)
@click.pass_context
def cron(ctx):
    """Prompts that run on a schedule, each as its own run: add, list, show, pause, resume, remove, run, tick, daemon,
    import (hermes-agent's jobs)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_jobs)


@cron.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_jobs(as_json):
    """Each job: its id, status, schedule, next and last run."""
    from plugins.cron.schedule import local_now

    state = _state()
    idle = state.nothing_ticks(local_now())
    if as_json:
        echo_json({"jobs": [job.row() for job in state.jobs], "last_tick": state.last_tick or None,
                   "nothing_ticks": idle})
        return
    if not state.jobs:
        from hermes.host.paths import data_dir
        from plugins.cron.agents_jobs import find

        agents = find(data_dir())
        click.echo("No cron jobs (add one: hermes cron add 'every 1h' 'check the build and say what broke')." +
                   (f" hermes-agent's are in {agents}: `hermes cron import` brings them here." if agents else ""))
    for job in state.jobs:
        last = f"  last {_when(job.last_run)} {job.last_status}" if job.last_run else ""
        click.echo(f"{job.id}  {job.status():<9} {job.schedule:<16} next {_when(job.next_run):<16}{last}  {job.name}")
        if job.last_error:
            click.echo(f"{'':10}last error: {job.last_error}")
        if job.last_delivery not in ("", "sent"):
            click.echo(f"{'':10}not delivered to {job.deliver}: {job.last_delivery}")
    if idle:
        click.echo(f"hermes: warning: {NOTHING_TICKS}", err=True)


@cron.command("show")
@click.argument("job_id")
@click.option("--json", "as_json", is_flag=True, help="Print the job and its last answer as JSON.")
def show_job(job_id, as_json):
    """A job, and what its last run answered."""
    job = _job(job_id)
    try:
        output = open(job.last_output, encoding="utf-8").read() if job.last_output else ""
    except OSError:
        output = ""  # removed: the record says where it was
    if as_json:
        echo_json({**job.row(), "output": output or None})
        return
    click.echo(f"{job.id}  {job.name}\n  schedule  {job.schedule} ({job.status()}), next {_when(job.next_run)}\n"
               f"  runs      {job.runs}" + (f" of {job.repeat}" if job.repeat else "") +
               f", last {_when(job.last_run)} {job.last_status}\n  prompt    {job.prompt}"
               + (f"\n  skills    {', '.join(job.skills)}" if job.skills else "")
               + (f"\n  workdir   {job.workdir}" if job.workdir else "")
               + (f"\n  script    {job.script}" + (" (the whole job: no model)" if job.no_agent else "")
                  if job.script else "")
               + (f"\n  after     {', '.join(job.context_from)} (their last answers before its prompt)"
                  if job.context_from else "")
               + (f"\n  deliver   {job.deliver}" + (f" (last: {job.last_delivery})" if job.last_delivery else "")
                  if job.deliver else "")
               + (f"\n  model     {' '.join(x for x in (job.model, job.provider, job.base_url) if x)}"
                  if job.model or job.provider or job.base_url else ""))
    click.echo(f"\n{output}" if output else "\n(no run yet)" if not job.runs else
               f"\n(its output is gone: {job.last_output})")


@cron.command("add")
@click.argument("schedule")
@click.argument("prompt", nargs=-1)
@click.option("--name", default="", help="A name to know it by (default: the prompt's start).")
@click.option("-t", "--toolsets", default=None, help="Comma-separated toolsets its runs may use (default: the "
                                                      "configured ones; '' for none).")
@click.option("-m", "--model", default="", help="The model its runs ask (default: the configured one).")
@click.option("--provider", default="", help="The provider its runs reach the model through.")
@click.option("--base-url", default="", help="Another endpoint's URL for its runs.")
@click.option("-s", "--skill", "skills", multiple=True, help="A skill loaded with its prompt (again for more).")
@click.option("--deliver", default="", metavar="TARGET",
              help="Send each answer there too: telegram:CHAT_ID, discord:CHANNEL_ID, slack:CHANNEL_ID, "
                   "matrix:ROOM_ID, signal:NUMBER, email:ADDRESS, mattermost:CHANNEL_ID, ntfy:TOPIC, "
                   "whatsapp_cloud:NUMBER, sms:NUMBER, irc:#CHANNEL, feishu:CHAT_ID, dingtalk, line:ID, "
                   "bluebubbles:NUMBER_OR_CHAT, teams:CONVERSATION_ID, google_chat:SPACE, or telegram (its "
                   "home chat).")
@click.option("--workdir", default="", metavar="FOLDER", help="The folder its runs work in: its AGENTS.md in the "
              "prompt, the tools starting there (an absolute path; default: where the runs start).")
@click.option("--script", default="", metavar="NAME", help="A script of the data folder's scripts/ run first: what "
              "it prints goes before the prompt (nothing printed: no run of the model).")
@click.option("--no-agent", is_flag=True, help="The script is the job: what it prints is the answer, no model.")
@click.option("--context-from", "context_from", multiple=True, metavar="JOB", help="A job whose last answer goes "
              "before the prompt (again for more).")
@click.option("--repeat", type=int, default=None, metavar="N", help="Run N times, then stop (default: for as long "
              "as its schedule goes).")
@click.option("--json", "as_json", is_flag=True, help="Print the job as JSON.")
def add_job(schedule, prompt, name, toolsets, model, provider, base_url, skills, deliver, workdir, script, no_agent,
            context_from, repeat, as_json):
    """Add a job. SCHEDULE: 30m (once, in 30 minutes), 'every 2h', '0 9 * * 1-5' (cron, the user's time: timezone) or
    2026-12-24T09:00 (once)."""
    from plugins.cron.jobs import add, load
    from plugins.cron.schedule import local_now

    sets = None if toolsets is None else [t.strip() for t in toolsets.split(",") if t.strip()]
    try:
        job = add(" ".join(prompt), schedule, name, sets, model, provider, base_url, list(skills), deliver, workdir,
                  script, no_agent, list(context_from), repeat)
    except ValueError as exc:
        raise Fail(str(exc), 2) from None
    if as_json:
        echo_json(job.row())
    else:
        click.echo(f"added {job.id} ({job.name}): next run {_when(job.next_run)}")
    if load().nothing_ticks(local_now()):
        click.echo(f"hermes: warning: {NOTHING_TICKS}", err=True)


def _change(job_id: str, action: str) -> None:
    from plugins.cron.jobs import change

    try:
        change(job_id, action)
    except (LookupError, ValueError) as exc:
        raise Fail(str(exc), 2) from None
    click.echo(f"{action}d {job_id}")


@cron.command("edit")
@click.argument("job_id")
@click.option("--schedule", default=None, help="A new schedule (it runs first at its next time from now).")
@click.option("--prompt", default=None, help="A new prompt.")
@click.option("--name", default=None, help="A new name.")
@click.option("--deliver", default=None, metavar="TARGET", help="Where its answers go now ('' for nowhere).")
@click.option("--workdir", default=None, metavar="FOLDER", help="The folder its runs work in ('' for none).")
@click.option("-s", "--skill", "skills", multiple=True, help="Its skills, instead of those it has (again for more).")
@click.option("--add-skill", "added", multiple=True, help="A skill more.")
@click.option("--remove-skill", "removed", multiple=True, help="A skill less.")
@click.option("--clear-skills", is_flag=True, help="No skills.")
@click.option("--script", default=None, metavar="NAME", help="Its script ('' for none).")
@click.option("--no-agent/--agent", "no_agent", default=None, help="The script alone is the job, or the model runs.")
@click.option("--context-from", "context_from", multiple=True, metavar="JOB", help="The jobs whose last answers go "
              "before its prompt, instead of those it has ('' for none).")
@click.option("--repeat", type=int, default=None, metavar="N", help="Its runs in all (0: for ever).")
@click.option("--json", "as_json", is_flag=True, help="Print the job as JSON.")
def edit_job(job_id, schedule, prompt, name, deliver, workdir, skills, added, removed, clear_skills, script, no_agent,
             context_from, repeat, as_json):
    """Change a job (hermes-agent's `cron edit`): only what is given changes."""
    from plugins.cron.jobs import edit

    have = _job(job_id).skills
    wanted = [] if clear_skills else list(skills) or have
    wanted = [s for s in dict.fromkeys([*wanted, *added]) if s not in removed]
    try:
        job = edit(job_id, schedule=schedule, prompt=prompt, name=name, deliver=deliver, workdir=workdir,
                   skills=wanted if wanted != have else None, script=script, no_agent=no_agent,
                   context_from=[c for c in context_from if c] if context_from else None, repeat=repeat)
    except (LookupError, ValueError) as exc:
        raise Fail(str(exc), 2) from None
    if as_json:
        echo_json(job.row())
    else:
        click.echo(f"changed {job.id} ({job.name}): next run {_when(job.next_run)}")


@cron.command("remove")
@click.argument("job_id")
def remove_job(job_id):
    """Remove a job (its outputs stay)."""
    _change(job_id, "remove")


@cron.command("pause")
@click.argument("job_id")
def pause_job(job_id):
    """Stop a job running until it is resumed."""
    _change(job_id, "pause")


@cron.command("resume")
@click.argument("job_id")
def resume_job(job_id):
    """Let a paused job run again (a repeating one from its next time after now)."""
    _change(job_id, "resume")


@cron.command("run")
@click.argument("job_id")
@click.option("--json", "as_json", is_flag=True, help="Print the job as recorded after the run, as JSON.")
@click.pass_obj
def run_job(app, job_id, as_json):
    """Run a job now, whatever its schedule (which stays as it is)."""
    from plugins.cron.jobs import run

    _say(run(app, _job(job_id)), as_json)


def _say(job, as_json: bool) -> None:
    if as_json:
        echo_json(job.row())
        return
    click.echo(f"{job.id} {job.last_status}: {job.last_output or '(no output kept)'}")
    if job.last_error:
        click.echo(f"{'':9}{job.last_error}")


@cron.command("tick")
@click.option("--json", "as_json", is_flag=True, help="Print the jobs that ran, as JSON.")
@click.pass_obj
def tick(app, as_json):
    """Run the jobs that are due, once each, then exit (for the system's cron: * * * * * hermes cron tick)."""
    ran = _tick(app, as_json)
    if as_json:
        echo_json({"ran": [job.row() for job in ran]})


def _tick(app, quiet: bool) -> list:
    from plugins.cron.jobs import tick as run_due

    try:
        return run_due(app, (lambda job: None) if quiet else (lambda job: _say(job, False)))
    except ValueError as exc:
        raise Fail(str(exc)) from None


@cron.command("daemon")
@click.option("--every", type=FiniteRange(min=1), default=None, metavar="SECONDS",
              help="How often it looks for due jobs (default: cron.tick_seconds, 60).")
@click.pass_obj
def daemon(app, every):
    """Run due jobs as they come due, until stopped (Ctrl+C or SIGTERM)."""
    every = every or float(app.config.get("cron.tick_seconds", 60) or 60)
    click.echo(f"hermes cron: running due jobs every {every:g} s (Ctrl+C stops)", err=True)
    while True:
        started = time.monotonic()
        _tick(app, False)
        time.sleep(max(0.0, every - (time.monotonic() - started)))


@cron.command("import")
@click.argument("jobs_json", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_obj
def import_jobs(app, jobs_json, as_json):
    """hermes-agent's cron jobs, from its JOBS_JSON (default: the data folder's cron/jobs.json when shared with it,
    else ~/.hermes/cron/jobs.json): each with its prompt, name, schedule, model and toolsets, paused if it was."""
    from plugins.cron.agents_jobs import find, import_jobs as bring

    source = jobs_json or find(app.config.data_dir)
    if source is None:
        raise Fail(f"no cron/jobs.json of hermes-agent in {app.config.data_dir} or ~/.hermes; give its path")
    try:
        done = bring(source)
    except ValueError as exc:
        raise Fail(str(exc)) from None
    if as_json:
        return echo_json(done)
    click.echo(f"Imported {done['imported']} jobs from {source}" + (f"; {done['already_here']} were here already"
                                                                     if done["already_here"] else "") + ".")
    for line in done["left_out"]:
        click.echo(f"  left out: {line}", err=True)
    for line in done["notes"]:
        click.echo(f"  note: {line}", err=True)
