"""``hermes prompt show``: the system prompt a session started here would
send, layer by layer, with where each came from and its size; ``hermes prompt
size`` (hermes-agent's ``prompt-size``): what a request carries before the
first message, the layers and each tool's schema, in bytes."""

from __future__ import annotations

import click


@click.group(invoke_without_command=True)
@click.pass_context
def prompt(ctx):
    """Show the system prompt, layer by layer (`hermes prompt` alone: show)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(show)


def _agent(app, toolsets, platform):
    """The agent a session started here would have (its prompt is made when asked; nothing is sent)."""
    from hermes.cli.app import Fail
    from kernel.agent import Agent, AgentError

    chosen = None if toolsets is None else [t.strip() for t in toolsets.split(",") if t.strip()]  # "": none, as run
    try:
        return Agent(app.host, toolsets=chosen, platform=platform)
    except AgentError as exc:
        raise Fail(str(exc)) from None


@prompt.command("show")
@click.option("-t", "--toolsets", help="Comma-separated toolsets, as for run and chat.")
@click.option("--platform", default="cli", show_default=True, help="cli (hermes chat) or run (hermes run).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the layers and the whole prompt.")
@click.pass_obj
def show(app, toolsets, platform, as_json):
    """Print the assembled system prompt for this folder and config."""
    from hermes.cli.app import echo_json
    from plugins.prompt import LAYERS_KEY

    agent = _agent(app, toolsets, platform)
    try:
        text = agent.system_prompt_text()
        layers = agent.state.get(LAYERS_KEY) or []
    finally:
        agent.close()
    if as_json:
        echo_json({"chars": len(text), "layers": [layer.to_dict() for layer in layers], "prompt": text})
        return
    own = str(agent.config.get("agent.system_prompt") or "").strip()
    if own:  # the kernel puts it before the layers
        click.echo(click.style(f"── agent.system_prompt ({len(own)} chars)", dim=True))
        click.echo(own + "\n")
    for layer in layers:
        cut = ", truncated" if layer.truncated else ""
        click.echo(click.style(f"── {layer.name} ({layer.source}; {layer.chars} chars{cut})", dim=True))
        click.echo(layer.text)
        click.echo("")
    click.echo(click.style(f"{len(text)} characters in all", dim=True))
    from pathlib import Path

    from plugins.prompt.project import missing_extras

    extra = [n for n in agent.config.get("prompt.context_files") or [] if isinstance(n, str)]
    for name in missing_extras(Path.cwd(), extra):
        click.echo(f"note: prompt.context_files names {name}, which is not a file here: it was left out", err=True)


@prompt.command("size")
@click.option("-t", "--toolsets", help="Comma-separated toolsets, as for run and chat.")
@click.option("--platform", default="cli", show_default=True, help="cli (hermes chat), run, or a gateway's platform.")
@click.option("--json", "as_json", is_flag=True, help="Print the sizes as JSON.")
@click.pass_obj
def size(app, toolsets, platform, as_json):
    """What every request of a new session carries before its first message: the system prompt's layers and the
    tools' schemas, in bytes (about 4 a token), without asking any model (hermes-agent's prompt-size)."""
    import json

    from hermes.cli.app import echo_json
    from plugins.prompt import LAYERS_KEY

    agent = _agent(app, toolsets, platform)
    try:
        text = agent.system_prompt_text()
        layers = [(layer.name, len(layer.text.encode())) for layer in agent.state.get(LAYERS_KEY) or []]
        tools = sorted(((name, len(json.dumps(tool.schema()).encode())) for name, tool in agent.tools.items()),
                       key=lambda row: -row[1])
    finally:
        agent.close()
    own = len(str(agent.config.get("agent.system_prompt") or "").strip().encode())
    rows = {"system_prompt": len(text.encode()), "layers": dict(([("agent.system_prompt", own)] if own else []) +
                                                                layers),
            "tools": dict(tools), "tool_schemas": sum(b for _, b in tools)}
    rows["total"] = rows["system_prompt"] + rows["tool_schemas"]
    if as_json:
        echo_json(rows)
        return
    width = max([len(name) for name in [*rows["layers"], *rows["tools"]]] + [14])
    click.echo(f"{'system prompt':<{width}}  {rows['system_prompt']:>8,} bytes")
    for name, count in rows["layers"].items():
        click.echo(f"  {name:<{width - 2}}  {count:>8,}")
    click.echo(f"{'tool schemas':<{width}}  {rows['tool_schemas']:>8,} bytes ({len(tools)} tools)")
    for name, count in tools[:10]:
        click.echo(f"  {name:<{width - 2}}  {count:>8,}")
    if len(tools) > 10:
        click.echo(f"  ... {len(tools) - 10} more ({sum(b for _, b in tools[10:]):,} bytes)")
    click.echo(f"{'in all':<{width}}  {rows['total']:>8,} bytes, about {rows['total'] // 4:,} tokens each request")
