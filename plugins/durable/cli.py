"""``hermes runs``: the durable turns (``durable.engine: dbos``) that did not finish, and what to do with them."""

from __future__ import annotations

import sys
import time

import click

from hermes.cli.app import EXIT_USAGE, App, Fail, echo_json
from kernel.messages import text_of

UNFINISHED = ["PENDING", "ERROR"]


RESUMING = "hermes-resume"  # the DBOS queue stopped turns go on to be resumed: only `hermes runs resume` takes them


def _engine(app: App, queues: tuple = ()):
    """The engine module, launched on the configured database (taking work from ``queues``); one line when
    it cannot be."""
    if app.config.get("durable.engine") != "dbos":
        raise Fail("durable turns are off: set durable.engine: dbos in config.yaml (see `hermes config`)", EXIT_USAGE)
    try:
        from plugins.durable import engine
    except ImportError as exc:
        raise Fail(f"{exc.name or 'dbos'} is not installed: pip install 'hermes-kernel[durable]'") from None
    try:
        engine.launch(app.config, queues=list(queues))
    except Exception as exc:  # EngineError, or a store error from the URL's ${VAR}
        raise Fail(str(exc)) from None
    return engine


def _row(status) -> dict:
    spec = (status.input or {}).get("args", [{}])[0] if status.input else {}
    state = status.status.lower()
    if status.status == "PENDING":
        state = "running" if _alive(spec) else "stopped"
    return {"id": status.workflow_id.removeprefix("turn-"), "state": state, "session_id": spec.get("session_id"),
            "prompt": text_of(spec.get("user_message")), "started": (status.created_at or 0) / 1000,
            "pid": spec.get("pid"), "host": spec.get("host")}


def _alive(spec: dict) -> bool:
    """Is the process that started the turn still running it? Another host's is taken for gone: its turn is
    resumable, and the store's claim on the session decides."""
    from plugins.durable.engine import running_here

    return running_here(spec.get("host"), spec.get("pid")) is True


def _find(engine, run_id: str):
    """The turn's workflow status by its id or a unique prefix of it."""
    found = engine.DBOS.list_workflows(name=engine.WORKFLOW, workflow_id_prefix=f"turn-{run_id}", limit=2)
    if not found:
        raise Fail(f"no durable turn '{run_id}' (see `hermes runs list --all`)")
    if len(found) > 1:
        raise Fail(f"turn id '{run_id}' is ambiguous (matches {found[0].workflow_id[5:]}, {found[1].workflow_id[5:]})")
    return found[0]


@click.group(invoke_without_command=True)
@click.pass_context
def runs(ctx):
    """Durable turns (durable.engine: dbos): list, resume or cancel the unfinished ones (alone: list)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_runs)


@runs.command("list")
@click.option("--all", "show_all", is_flag=True, help="Finished and cancelled turns too.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many.")
@click.option("--json", "as_json", is_flag=True, help="Print the turns as JSON.")
@click.pass_obj
def list_runs(app: App, show_all: bool, limit: int, as_json: bool):
    """The turns that did not finish (stopped: kill -9, a crash; running: still in their process)."""
    engine = _engine(app)
    rows = [_row(s) for s in engine.DBOS.list_workflows(name=engine.WORKFLOW, status=None if show_all else UNFINISHED,
                                                 sort_desc=True, limit=limit, load_output=False)]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("No unfinished turns." if not show_all else "No durable turns yet.")
        return
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["started"]))
        prompt = " ".join(str(row["prompt"] or "").split())
        click.echo(f"{row['id']}  {row['state']:<9} {when}  session {row['session_id']}  "
                   f"{prompt[:50] + ('...' if len(prompt) > 50 else '')}")
    if any(row["state"] == "stopped" for row in rows):
        click.echo("Resume one with `hermes runs resume ID`, or drop it with `hermes runs cancel ID`.")


@runs.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the turn's result as JSON.")
@click.pass_obj
def resume(app: App, run_id: str, as_json: bool):
    """Finish a turn that stopped: its finished steps are not run again. Ctrl+C leaves it resumable."""
    from types import SimpleNamespace

    from plugins.front import finish, shown
    from plugins.commands.hookspecs import Display

    engine = _engine(app, queues=(RESUMING,))
    row = _row(_find(engine, run_id))
    if row["state"] != "stopped":
        raise Fail(f"turn {row['id']} " + {
            "success": f"finished already (its answer is in session {row['session_id']})",
            "cancelled": "was cancelled", "error": "failed; it cannot be resumed (see `hermes runs list --all`)",
            "running": f"is still running (pid {row['pid']} on {row['host']})"}.get(row["state"], f"is {row['state']}"))
    console = None if as_json else app.host.pm.hook.terminal_front_end(quiet=False, config=app.config)
    console = console if isinstance(console, Display) else None
    engine._resuming.update(app=app, callbacks=[console] if console else [])
    try:
        engine.DBOS.register_queue(RESUMING, polling_interval_sec=0.05, on_conflict="never_update")
        # on a queue only resume commands take from: the turn runs here, with its output on this terminal
        result = SimpleNamespace(**engine.DBOS.resume_workflow(f"turn-{row['id']}", queue_name=RESUMING).get_result())
    finally:
        engine._resuming.clear()
    if as_json:
        echo_json(vars(result))
    elif not shown(app, console, result.final_response) and result.final_response:
        from plugins.text import printable

        click.echo(printable(result.final_response, sys.stdout))
    finish(result, quiet=as_json)


@runs.command()
@click.argument("run_id")
@click.pass_obj
def cancel(app: App, run_id: str):
    """Drop a turn that stopped: it is not resumed (what it stored stays in its session)."""
    engine = _engine(app)
    row = _row(_find(engine, run_id))
    if row["state"] == "running":
        raise Fail(f"turn {row['id']} is still running (pid {row['pid']} on {row['host']}): stop it first")
    if row["state"] not in ("stopped", "error"):
        raise Fail(f"turn {row['id']} is {row['state']} already")
    engine.DBOS.cancel_workflow(f"turn-{row['id']}")
    click.echo(f"Cancelled turn {row['id']}.")
