"""``hermes chat``: an interactive conversation on the terminal."""

from __future__ import annotations

import click

from kernel import __version__
from kernel.messages import text_of
from kernel.types import add_usage
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
    click.echo(f"{program()} {__version__} · session {agent.session_id} · /help for commands, /exit to leave", err=True)
    if session_id:
        for line in recap(ask_store(app, "load_session", session_id=session_id) or []):
            click.echo(line, err=True)
    usage: dict = {}
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
                slash(agent, text, usage)
                continue
            with CtrlC(agent):
                result = agent.run_conversation(text)
            usage = add_usage(usage, result.usage)
            console.end_answer(result.final_response)
            if result.exit_reason == "error":
                click.echo(f"{program()}: error: {result.error}", err=True)
            elif result.interrupted:
                click.echo("(interrupted)", err=True)
            elif result.exit_reason == "budget_exhausted" and not result.final_response:
                click.echo("(the iteration budget ran out before a final answer; raise it with --max-turns)", err=True)
    finally:
        stored = agent.messages and agent.hook.append_messages.get_hookimpls()
        agent.close()
        if stored:
            click.echo(f"resume it with: {program()} chat --resume {agent.session_id}", err=True)


def _text(content) -> str:
    return " ".join(text_of(content).split())


def recap(history: list, exchanges: int = 2) -> list:
    """What a resumed chat shows first: its first prompt, its size, and the
    last exchanges (clipped), so the user knows where they are."""
    said = [(m["role"], _text(m.get("content"))) for m in history
            if m.get("role") in ("user", "assistant") and _text(m.get("content"))]
    if not said:
        return ["(resuming an empty session)"]
    first = next((text for role, text in said if role == "user"), said[0][1])
    lines = [f"resuming: {first[:70]}{'...' if len(first) > 70 else ''} ({len(history)} messages)"]
    tail, users = [], 0
    for role, text in reversed(said):
        tail.append(f"  {'you' if role == 'user' else 'hermes'}: {text[:200]}{'...' if len(text) > 200 else ''}")
        users += role == "user"
        if users == exchanges:
            break
    return lines + list(reversed(tail))


# the chat's own commands: name -> (help, handler(agent, args, usage) -> text or None)
def _help(agent, args, usage):
    rows = [(f"/{name}", text) for name, (text, _) in BUILTIN.items()]
    rows += [(f"/{name}", entry.description) for name, entry in sorted(agent.host.registry.slash_commands.items())
             if name not in BUILTIN]
    rows.append(("/exit, /quit", "leave (Ctrl+D too)"))
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name.ljust(width)}  {text}" for name, text in rows)


def _new(agent, args, usage):
    return f"new session {agent.new_session()}"


def _tools(agent, args, usage):
    if not agent.tools:
        return "no tools are offered (see -t)"
    return "\n".join(f"{name}  {(tool.description or '').splitlines()[0][:70]}" for name, tool in sorted(agent.tools.items()))


def _model(agent, args, usage):
    name = args.strip()
    if name:  # the next turn starts on it; the provider is built (and checked) now
        from kernel.types import ProviderError

        wanted = agent.primary.with_(model=name)
        try:
            agent.provider_for(wanted)
        except ProviderError as exc:
            return f"cannot use {name}: {exc.message}"
        agent.primary = agent.provider_config = wanted
    return f"model: {agent.provider_config.label()}"


def _usage(agent, args, usage):
    if not usage:
        return "no model calls yet"
    return "tokens in this chat: " + ", ".join(f"{k.replace('_tokens', '')} {v}" for k, v in usage.items() if v)


BUILTIN = {
    "help": ("this list", _help),
    "new": ("start a new session (the current one stays stored)", _new),
    "model": ("show the model, or /model NAME to switch", _model),
    "tools": ("the tools the model may call", _tools),
    "usage": ("tokens used in this chat", _usage),
}


def slash(agent, text: str, usage: dict = None) -> None:
    """Run an in-chat command: the chat's own, or one a plugin registered (``/name args``)."""
    name, _, args = text[1:].partition(" ")
    if name in BUILTIN:
        reply = BUILTIN[name][1](agent, args, usage or {})
        if reply:
            click.echo(reply)
        return
    commands = agent.host.registry.slash_commands
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
