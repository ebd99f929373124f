"""A hermes plugin's tools, skills, slash commands and CLI commands as kernel registrations."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from plugins.hermes_compat import state
from plugins.hermes_compat.bridge import call_plugin_callable
from plugins.hermes_compat.state import log


def tool_text(result: Any) -> str:
    """A hermes tool result as the text the model reads."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict) and result.get("_multimodal"):
        parts = result.get("content") or []
        texts = [p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
        others = sum(1 for p in parts if not (isinstance(p, dict) and p.get("type") == "text"))
        note = f"\n[{others} non-text part(s) omitted]" if others else ""
        return "\n".join(texts) + note
    return json.dumps(result, ensure_ascii=False, default=str)


def _user_task(ctx: Any) -> Any:
    turn = getattr(getattr(ctx, "agent", None), "turn", None)
    return getattr(turn, "user_message", None)


def kernel_tool(record: state.PluginRecord, spec: state.ToolSpec):
    from kernel.types import Tool

    def handler(args: dict, ctx: Any) -> str:
        kwargs = {"task_id": getattr(ctx, "task_id", None), "session_id": getattr(ctx, "session_id", None),
                  "user_task": _user_task(ctx)}
        return tool_text(state.for_agent(getattr(ctx, "agent", None), call_plugin_callable, spec.handler, args, **kwargs))

    def check() -> bool:
        return bool(call_plugin_callable(spec.check_fn))

    schema = spec.schema
    return Tool(name=spec.name, description=spec.description or str(schema.get("description") or ""),
                parameters=schema.get("parameters") or {"type": "object", "properties": {}}, handler=handler,
                toolset=spec.toolset or record.name, check=check if spec.check_fn is not None else None,
                plugin=record.name)


def register_tools(record: state.PluginRecord, register: Callable) -> None:
    for spec in list(record.tools.values()):
        register(kernel_tool(record, spec))
    from plugins.hermes_compat.memory import memory_proxy_tools

    for provider in record.memory_providers:
        for tool in memory_proxy_tools(record, provider):
            register(tool)


# --------------------------------------------------------------------------
# Skills (``ctx.register_skill``): into the skills plugin's ``register_skills``


def register_skills(record: state.PluginRecord, register: Callable) -> None:
    """Each as ``plugin:skill`` (hermes-agent 0.22 namespaces plugin skills so)."""
    for name, (path, description) in list(record.skills.items()):
        register(f"{record.name}:{name}", path, description)


# --------------------------------------------------------------------------
# Slash commands and CLI commands


def register_slash(record: state.PluginRecord, register: Callable) -> None:
    for name, (handler, description, args_hint) in list(record.commands.items()):
        def run(raw_args: str, agent: Any, handler=handler) -> Any:
            reply = state.for_agent(agent, call_plugin_callable, handler, raw_args)
            return reply if reply is None or isinstance(reply, str) else str(reply)

        register(name, run, description + (f" {args_hint}" if args_hint else ""))


def register_cli(record: state.PluginRecord, cli: Any) -> None:
    for name, entry in list(record.cli_commands.items()):
        if name in cli.commands:
            log.warning("hermes plugin %s: CLI command %r already exists; not replaced", record.name, name)
            continue
        cli.add_command(cli_command(record, entry), name)


def _plugin_step(record: state.PluginRecord, name: str, doing: str, fn: Callable, *args: Any) -> Any:
    """Run the plugin's code; a crash is one clear line (the traceback goes to the debug log)."""
    from hermes.cli.app import Fail

    try:
        return call_plugin_callable(fn, *args)
    except Exception as exc:
        log.debug("hermes %s (plugin %s) failed", name, record.name, exc_info=exc)
        raise Fail(f"hermes {name}: plugin {record.name} failed while {doing}: {type(exc).__name__}: {exc}") from None


def cli_command(record: state.PluginRecord, entry: dict):
    """A click command that hands its raw arguments to the plugin's argparse parser."""
    import argparse

    import click

    name = entry["name"]

    @click.command(name=name, help=entry["description"] or entry["help"], short_help=entry["help"][:60] or None,
                   add_help_option=False,
                   context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    @click.argument("argv", nargs=-1, type=click.UNPROCESSED)
    def command(argv):
        parser = argparse.ArgumentParser(prog=f"hermes {name}", description=entry["description"] or entry["help"])
        _plugin_step(record, name, "setting up its arguments", entry["setup_fn"], parser)
        if entry["handler_fn"] is not None and parser.get_default("func") is None:
            parser.set_defaults(func=entry["handler_fn"])
        args = parser.parse_args(list(argv))  # argparse prints usage and exits 2 on bad input
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            return
        result = _plugin_step(record, name, "running", func, args)
        if isinstance(result, bool):
            sys.exit(0 if result else 1)
        if isinstance(result, int):
            sys.exit(result)
        if isinstance(result, str) and result:
            click.echo(result)

    return command
