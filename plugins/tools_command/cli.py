"""``hermes tools [list]``, ``hermes tools disable NAME...``, ``hermes tools enable NAME...``."""

from __future__ import annotations

import click

from hermes.cli.app import Fail, echo_json
from plugins.tools_command.offered import rows


def _agent(app, toolsets):
    """An agent as a session here would start (its tools chosen, MCP servers' too), never run."""
    from kernel.agent import Agent, AgentError

    chosen = None if toolsets is None else [t.strip() for t in toolsets.split(",") if t.strip()]
    try:
        return Agent(app.host, toolsets=chosen, platform="cli")
    except AgentError as exc:
        raise Fail(str(exc), 2) from None


@click.group("tools", invoke_without_command=True)
@click.pass_context
def tools(ctx):
    """The tools the model may call: list them; disable or enable a tool or a toolset."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_tools)


@tools.command("list")
@click.option("-t", "--toolsets", help="Comma-separated toolsets, as for run and chat (default: config's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def list_tools(app, toolsets, as_json):
    """Every tool, grouped by toolset: offered to the model, or why not."""
    agent = _agent(app, toolsets)
    try:
        found = rows(agent)
    finally:
        agent.close()
    if as_json:
        echo_json({"toolsets": agent.toolsets, "tools": found})
        return
    if not found:
        click.echo("No tools are registered (`hermes plugins list` shows which plugins are enabled).")
        return
    width, toolset = max(len(r["name"]) for r in found), None
    for row in found:
        if row["toolset"] != toolset:
            toolset = row["toolset"]
            click.echo(f"{toolset or '(unknown toolset)'}" + (f"  ({row['plugin']})" if row["plugin"] else ""))
        text = row["description"] if row["offered"] else f"off: {row['why']}"
        click.echo(f"  {'+' if row['offered'] else '-'} {row['name']:<{width}}  {text[:max(20, 74 - width)]}")
    offered = sum(r["offered"] for r in found)
    click.echo(f"{offered} of {len(found)} tools offered"
               + ("" if agent.toolsets is None else f" (toolsets: {', '.join(agent.toolsets) or 'none'})"))


def _tools_of(agent, names: tuple) -> dict:
    """name -> the tools it stands for (a tool, a toolset, or ``all``); an unknown name stops with a did-you-mean."""
    from kernel.hints import did_you_mean

    known = {r["name"]: r for r in rows(agent)}
    by_toolset: dict = {}
    for row in known.values():
        by_toolset.setdefault(row["toolset"], []).append(row["name"])
    out = {}
    for name in names:
        if name in by_toolset or name in agent.host.registry.toolsets:  # `terminal`: the toolset, process too
            try:
                out[name] = sorted(set(by_toolset.get(name, [])) | agent.host.registry.expand_toolsets([name]))
            except KeyError:
                out[name] = sorted(by_toolset.get(name, []))
        elif name in known:
            out[name] = [name]
        else:
            raise Fail(f"no tool or toolset '{name}'{did_you_mean(name, [*known, *by_toolset])} "
                       "(`hermes tools` lists them)", 2)
    return out


def _change(app, names: tuple, enable: bool) -> None:
    from plugins.config_command.edit import EditError, edit, get, path_of, set_key, unset_key

    agent = _agent(app, None)
    try:
        wanted = _tools_of(agent, names)
        toolsets = agent.toolsets
        reached = None if toolsets is None else agent.host.registry.expand_toolsets(toolsets)
    finally:
        agent.close()
    tools = sorted({t for group in wanted.values() for t in group})

    def change(document):
        disabled = get(document, "agent.disabled_tools")
        disabled = [d for d in (disabled if isinstance(disabled, list) else []) if not (enable and d in tools)]
        disabled += [] if enable else [t for t in tools if t not in disabled]
        set_key(document, "agent.disabled_tools", disabled) if disabled else unset_key(document, "agent.disabled_tools")
        if enable and reached is not None:  # config's toolsets leave some out: name them there too
            listed = get(document, "toolsets")
            listed = list(listed) if isinstance(listed, list) else list(toolsets)
            set_key(document, "toolsets", listed + [n for n, group in wanted.items()
                                                    if not set(group) <= reached and n not in listed])

    try:
        edit(path_of(app.config), change)
    except (EditError, OSError) as exc:
        raise Fail(f"config.yaml was not changed: {exc}") from None
    for name, group in wanted.items():
        what = name if group == [name] else f"{name} ({', '.join(group) or 'no tools now'})"
        click.echo(f"{'enabled' if enable else 'disabled'}: {what}")


@tools.command("disable")
@click.argument("names", nargs=-1, required=True)
@click.pass_obj
def disable(app, names):
    """Never offer these tools, or a toolset's tools (saved in config.yaml's agent.disabled_tools)."""
    _change(app, names, enable=False)


@tools.command("enable")
@click.argument("names", nargs=-1, required=True)
@click.pass_obj
def enable(app, names):
    """Offer these tools or toolsets again (out of agent.disabled_tools; into toolsets when that is set)."""
    _change(app, names, enable=True)
