"""``hermes chat``: an interactive conversation on the terminal."""

from __future__ import annotations

import click

from kernel import __version__
from kernel.cli import EXIT_USAGE, CtrlC, Fail, ask_store, build_agent, check_session, claim, prepare_store, \
    program, provider_options


@click.command()
@provider_options
@click.option("--continue", "cont", is_flag=True, help="Continue the most recent session.")
@click.pass_obj
def chat(app, cont: bool, **opts):
    """An interactive conversation (Ctrl+C stops a turn, Ctrl+D quits)."""
    from plugins.terminal.console import Console

    session_id = opts.get("resume")
    if cont and session_id:
        raise Fail("use either --resume or --continue", EXIT_USAGE)
    if cont and opts.get("no_save"):
        raise Fail("--no-save starts a conversation that is not stored; it cannot --continue one", EXIT_USAGE)
    prepare_store(app, opts)
    if cont:
        session_id = ask_store(app, "latest_session", platform="cli")
        if not session_id:
            raise Fail("no earlier session to continue")
        claim(app, session_id)
    elif session_id:
        session_id = check_session(app, session_id)
    console = Console()
    agent = build_agent(app, opts, console, session_id=session_id)
    click.echo(f"{program()} {__version__} · session {agent.session_id} · /quit to leave", err=True)
    try:
        while True:
            try:
                text = click.prompt("you", prompt_suffix="> ", default="", show_default=False)
            except (EOFError, click.Abort):
                click.echo("", err=True)
                break
            if not text.strip():
                continue
            if text.strip() in ("/quit", "/exit"):
                break
            if text.startswith("/"):
                slash(agent, text)
                continue
            with CtrlC(agent):
                result = agent.run_conversation(text)
            console.end_answer(result.final_response)
            if result.exit_reason == "error":
                click.echo(f"{program()}: error: {result.error}", err=True)
            elif result.interrupted:
                click.echo("(interrupted)", err=True)
            elif result.exit_reason == "budget_exhausted" and not result.final_response:
                click.echo("(the iteration budget ran out before a final answer; raise it with --max-turns)", err=True)
    finally:
        agent.close()


def slash(agent, text: str) -> None:
    """Run an in-chat command registered by a plugin (``/name args``)."""
    name, _, args = text[1:].partition(" ")
    commands = agent.host.registry.slash_commands
    if name == "help":
        for cmd in sorted(commands):
            click.echo(f"/{cmd}  {commands[cmd].description}")
        click.echo("/quit  leave")
        return
    entry = commands.get(name)
    if entry is None:
        click.echo(f"unknown command /{name} (try /help)", err=True)
        return
    try:
        reply = entry.factory(args.strip(), agent)
    except Exception as exc:  # a plugin's command must not end the chat
        click.echo(f"/{name} failed: {type(exc).__name__}: {exc}", err=True)
        return
    if reply:
        click.echo(str(reply))
