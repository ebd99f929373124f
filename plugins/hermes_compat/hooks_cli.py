"""``hermes hooks``: the shell hooks of config.yaml (:mod:`plugins.hermes_compat.shell_hooks`): list them with their
approval and whether their command can run, approve or revoke them, and fire one on a made-up event to see what it
answers."""

from __future__ import annotations

import json
import sys

import click

from hermes.cli.app import Fail, echo_json


def _specs(app, quiet: bool = False) -> list:
    from plugins.hermes_compat.shell_hooks import parse

    specs, problems = parse(app.config.get("hooks"))
    if not quiet:
        for problem in problems:
            click.echo(f"{app.prog}: warning: {problem}", err=True)
    return specs


def _row(spec, entries: list) -> dict:
    from plugins.hermes_compat.shell_hooks import approval_of, script_mtime, script_problem

    approved = approval_of(spec, entries)
    now = script_mtime(spec.command)
    changed = bool(approved and approved.get("script_mtime_at_approval") and now
                   and now != approved["script_mtime_at_approval"])
    return {"event": spec.event, "command": spec.command, "matcher": spec.matcher, "timeout": spec.timeout,
            "approved_at": approved.get("approved_at") if approved else None, "changed_since_approval": changed,
            "problem": script_problem(spec.command)}


@click.group("hooks", invoke_without_command=True)
@click.pass_context
def hooks(ctx):
    """hermes-agent's shell hooks (config.yaml's hooks:): list, approve, revoke, test."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_hooks)


@hooks.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def list_hooks(app, as_json):
    """Every configured shell hook: its event, tool matcher, timeout, approval, and whether its command runs."""
    from plugins.hermes_compat.shell_hooks import accepts_all, approvals

    entries = approvals()
    rows = [_row(spec, entries) for spec in _specs(app, quiet=as_json)]
    if as_json:
        echo_json({"hooks": rows, "accept_all": accepts_all(app.config)})
        return
    if not rows:
        click.echo("No shell hooks in config.yaml. Add one under `hooks:`, e.g.\n"
                   "  hooks:\n    pre_tool_call:\n      - command: ~/hooks/guard.sh\n        matcher: terminal")
        return
    every = accepts_all(app.config)
    for row in rows:
        match = f" [{row['matcher']}]" if row["matcher"] else ""
        state = (f"approved {row['approved_at'][:19]}" if row["approved_at"]
                 else "runs (accepted by HERMES_ACCEPT_HOOKS/hooks_auto_accept)" if every
                 else f"NOT APPROVED: does not run (`{app.prog} hooks approve`)")
        click.echo(f"{row['event']}{match}: {row['command']}  (timeout {row['timeout']}s)\n  {state}")
        if row["changed_since_approval"]:
            click.echo("  its script changed since it was approved")
        if row["problem"]:
            click.echo(f"  cannot run: {row['problem']}")


@hooks.command("approve")
@click.argument("command", required=False)
@click.option("--yes", "-y", is_flag=True, help="Approve without asking.")
@click.pass_obj
def approve_hooks(app, command, yes):
    """Approve the configured hooks that are not yet (or those running COMMAND), asking about each."""
    from plugins.hermes_compat.shell_hooks import approval_of, approvals, approve

    specs = [s for s in _specs(app) if command is None or s.command == command]
    if command is not None and not specs:
        raise Fail(f"no shell hook in config.yaml runs '{command}' (`{app.prog} hooks list` shows them)", 2)
    entries = approvals()
    waiting = [s for s in specs if approval_of(s, entries) is None]
    if not waiting:
        click.echo("Every configured shell hook is approved." if specs else "No shell hooks in config.yaml.")
        return
    if not yes and not sys.stdin.isatty():
        raise Fail("nobody to ask here (input is not a terminal): pass --yes to approve "
                   f"{len(waiting)} hook(s) unseen", 2)
    for spec in waiting:
        if not yes:
            click.echo(f"{spec.label()}\n  runs with your own rights, on every {spec.event}.")
            if not click.confirm("Approve it?", default=False):
                continue
        approve(spec)
        click.echo(f"approved: {spec.label()}")


@hooks.command("revoke")
@click.argument("command")
@click.pass_obj
def revoke_hook(app, command):
    """Forget the approvals of COMMAND (it stops running from the next start)."""
    from plugins.hermes_compat.shell_hooks import revoke

    removed = revoke(command)
    if not removed:
        raise Fail(f"no approval recorded for '{command}'")
    click.echo(f"revoked {removed} approval(s) of {command}")


@hooks.command("test")
@click.argument("event")
@click.option("--for-tool", "tool", help="The tool name of a pre/post_tool_call (hooks whose matcher fits it).")
@click.option("--payload", "payload_file", type=click.File("r"), help="A JSON object of the event's keywords.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def test_hooks(app, event, tool, payload_file, as_json):
    """Run the hooks of EVENT once on a made-up event (approved or not) and show what each answered."""
    from plugins.hermes_compat.shell_hooks import TOOL_EVENTS, answer, payload, run

    kwargs = {"tool_name": tool, "args": {}, "session_id": "test"} if event in TOOL_EVENTS else {"session_id": "test"}
    if payload_file is not None:
        try:
            given = json.load(payload_file)
        except ValueError as exc:
            raise Fail(f"{payload_file.name}: not JSON: {exc}", 2) from None
        if not isinstance(given, dict):
            raise Fail(f"{payload_file.name}: must hold a JSON object of keywords", 2)
        kwargs.update(given)
    specs = [s for s in _specs(app, quiet=as_json) if s.event == event
             and (event not in TOOL_EVENTS or s.matches(kwargs.get("tool_name")))]
    if not specs:
        raise Fail(f"no shell hook in config.yaml for {event}{f' matching {tool}' if tool else ''}", 2)
    results = []
    for spec in specs:
        ran = run(spec, payload(event, kwargs))
        results.append({"command": spec.command, "exit": ran.returncode, "seconds": ran.seconds,
                        "error": ran.error or None, "stdout": ran.stdout, "stderr": ran.stderr,
                        "answer": answer(event, ran) if not ran.error else
                        {"action": "block", "message": ran.error} if event == "pre_tool_call" else None})
    if as_json:
        echo_json({"event": event, "results": results})
        return
    for r in results:
        click.echo(f"{r['command']}: " + (r["error"] or f"exit {r['exit']} in {r['seconds']}s"))
        for name in ("stdout", "stderr"):
            if r[name].strip():
                click.echo(f"  {name}: {r[name].strip()[:400]}")
        click.echo(f"  answer: {json.dumps(r['answer']) if r['answer'] else 'nothing (the event goes on as it was)'}")
