"""``hermes run``: one turn, its answer on stdout (or the result as JSON)."""

from __future__ import annotations

import sys
from itertools import groupby

import click

from hermes.cli.app import EXIT_USAGE, App, Fail, echo_json, program
from plugins.front import (CtrlC, build_agent, finish, preload_skills, prepare_store, provider_options,
                           session_to_resume, shown, skills_option)
from plugins.images import image_option, mode, with_images
from plugins.text import printable


@click.command()
@provider_options
@click.option("-c", "--continue", "cont", is_flag=True, help="Continue the latest `hermes run` conversation.")
@click.option("--json", "as_json", is_flag=True, help="Print the turn's result as JSON.")
@click.option("--usage-file", type=click.Path(dir_okay=False), metavar="PATH", help="Then write what the turn used "
              "there as JSON (tokens, model calls, model, session, whether it failed), also when it fails "
              "(hermes-agent's).")
@skills_option
@image_option
@click.argument("prompt", nargs=-1)
@click.pass_obj
def run(app: App, as_json: bool, prompt: tuple, images: list, preload: tuple, usage_file: str, **opts):
    """Run one turn and print the answer. Stdin is the PROMPT when none is given, or goes where a - stands in it."""
    try:
        result, stopped_by = _turn(app, as_json, prompt, images, preload, opts)
    except BaseException as exc:  # (a Fail before any call: no model, no key) the report says it too
        if usage_file and not isinstance(exc, SystemExit):
            write_usage(usage_file, None, getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}")
        raise
    if usage_file:
        write_usage(usage_file, result, result.error)
    finish(result, quiet=as_json, stopped_by=stopped_by)


def write_usage(path: str, result, failure: "str | None") -> None:
    """hermes-agent's usage report of a one-shot turn, for pipelines that account for what they spend (its cost
    fields stay null: no price list here); a report that cannot be written is a warning, never the turn's failure."""
    import json
    from pathlib import Path

    from kernel.types import USAGE_KEYS, ExitReason

    done = result.to_dict() if result is not None else {}
    usage = done.get("usage") or {}
    report = {**{key: int(usage.get(key) or 0) for key in (*USAGE_KEYS, "total_tokens")},
              "api_calls": done.get("api_calls", 0), "model": done.get("model"), "provider": done.get("provider"),
              "session_id": done.get("session_id"), "completed": done.get("exit_reason") == ExitReason.COMPLETED,
              "failed": failure is not None, "estimated_cost_usd": None, "cost_status": "unknown",
              **({"failure": failure} if failure is not None else {})}
    try:
        target = Path(path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        click.echo(f"{program()}: warning: no usage report written to {path}: {exc.strerror or exc}", err=True)


def _turn(app: App, as_json: bool, prompt: tuple, images: list, preload: tuple, opts: dict) -> tuple:
    """The turn ``hermes run`` runs, its answer printed: ``(its result, the signal that stopped it or None)``."""
    words = prompt or (() if sys.stdin.isatty() else ("-",))  # a terminal's stdin is not read unasked
    piped = sys.stdin.read() if "-" in words else None  # `git diff | hermes run "review this:" -`: never unasked
    if piped and "\x00" in piped[:8192]:  # a binary file piped in would reach a paid model as thousands of tokens
        raise Fail("stdin is not text (a NUL byte in it: a binary file?); the prompt is text", EXIT_USAGE)
    parts = (piped if dash else " ".join(group) for dash, group in groupby(words, "-".__eq__))
    text = "\n\n".join(part.rstrip() for part in parts if part.strip())
    if not text:  # a provider may refuse an empty message (Anthropic does): say so before any call
        raise Fail("no prompt: hermes run PROMPT, or pipe it in (echo hi | hermes run)" if not words
                   else "the prompt is empty" + (" (nothing on stdin)" if piped is not None else ""), EXIT_USAGE)
    from hermes.host.plugins import paused_collector  # here: the remembered `plugins list` imports no host
    with paused_collector():
        preload_skills(app, preload)
        prepare_store(app, opts)
        session_id = session_to_resume(app, opts, "run")
        from plugins.commands.hookspecs import Display  # here: the remembered `plugins list` imports no spec
        quiet = click.get_current_context().meta.get("hermes.quiet", False)  # chat -q -Q: the answer alone
        console = None if as_json else app.host.pm.hook.terminal_front_end(quiet=quiet, config=app.config)  # a plugin's
        console = console if isinstance(console, Display) else None  # none, or not what the spec asks for
        # platform "run": `hermes chat --continue` picks up the latest chat, not a one-shot turn
        agent = build_agent(app, opts, console, session_id=session_id, platform="run")
    try:
        with CtrlC(agent) as stop:
            result = agent.run_conversation(with_images(text, images, mode(app.config, agent.provider_config.model)))
    finally:
        agent.close()
    if as_json:
        from plugins.tool_args import masked_result  # the calls as the store keeps them: a key typed in masked
        echo_json(masked_result(result, agent))
    elif not shown(app, console, result.final_response) and result.final_response:
        click.echo(printable(result.final_response, sys.stdout))
    return result, stop.stopped_by
