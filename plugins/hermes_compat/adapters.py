"""Registration bridges: a hermes plugin's tools, slash commands, CLI
commands, memory providers, context engines and model provider profiles as
kernel registrations. See :mod:`plugins.hermes_compat.bridge` for hooks."""

from __future__ import annotations

import copy
import json
import sys
from typing import Any, Callable

from plugins.hermes_compat import state
from plugins.hermes_compat.bridge import call_plugin_callable
from plugins.hermes_compat.state import log


def registration_impls(record: state.PluginRecord):
    """``(hook, params, body(kwargs), hookimpl options)`` for what ``record`` registered."""
    if record.tools or record.memory_providers or record.skills:
        opts = {"trylast": True} if any(s.override for s in record.tools.values()) else {}
        yield "register_tools", ("register",), lambda kw: _register_tools(record, kw["register"]), opts
    if record.commands:
        yield "register_slash_commands", ("register",), lambda kw: _register_slash(record, kw["register"]), {}
    if record.cli_commands:
        yield "register_commands", ("cli",), lambda kw: _register_cli(record, kw["cli"]), {}
    if record.memory_providers:
        yield "register_memory_backends", ("register",), lambda kw: _register_memory(record, kw["register"]), {}
    if record.context_engines:
        yield "register_context_engines", ("register",), lambda kw: _register_engine(record, kw["register"]), {}
    if record.profiles:
        yield "register_model_providers", ("register",), lambda kw: _register_profiles(record, kw["register"]), {}
        yield "resolve_api_mode", ("config",), lambda kw: _resolve_mode(record, kw["config"]), {}


# --------------------------------------------------------------------------
# Tools


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
        return tool_text(call_plugin_callable(spec.handler, args, **kwargs))

    def check() -> bool:
        return bool(call_plugin_callable(spec.check_fn))

    schema = spec.schema
    return Tool(name=spec.name, description=spec.description or str(schema.get("description") or ""),
                parameters=schema.get("parameters") or {"type": "object", "properties": {}}, handler=handler,
                toolset=spec.toolset or record.name, check=check if spec.check_fn is not None else None,
                plugin=record.name)


def _register_tools(record: state.PluginRecord, register: Callable) -> None:
    for spec in list(record.tools.values()):
        register(kernel_tool(record, spec))
    for provider in record.memory_providers:
        for tool in memory_proxy_tools(record, provider):
            register(tool)
    if record.skills:
        register(skill_view_tool())


# --------------------------------------------------------------------------
# Skills (``ctx.register_skill``): read-only, through a ``skill_view`` tool

SKILL_MAX_CHARS = 20_000


def find_skill(ref: str):
    """``(plugin, name, path)`` for ``"plugin:name"`` or a bare ``"name"``."""
    plugin, _, name = ref.rpartition(":")
    for rec in state.records():
        if plugin and rec.name != plugin:
            continue
        if name in rec.skills:
            return rec.name, name, rec.skills[name][0]
    return None


def skill_view_tool():
    from kernel.types import Tool, ToolError

    def handler(args: dict, ctx: Any) -> dict:
        ref = str(args.get("name") or "")
        found = find_skill(ref)
        if found is None:
            known = sorted(f"{r.name}:{n}" for r in state.records() for n in r.skills)
            raise ToolError(f"no skill {ref!r}; available: {', '.join(known) or 'none'}")
        plugin, name, path = found
        if path.is_dir():
            candidates = [path / "SKILL.md", path / "README.md", *sorted(path.glob("*.md"))]
            path = next((p for p in candidates if p.is_file()), None)
            if path is None:
                raise ToolError(f"skill {plugin}:{name} has no SKILL.md")
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > SKILL_MAX_CHARS:
            text = text[:SKILL_MAX_CHARS] + "\n[... truncated ...]"
        return {"name": f"{plugin}:{name}", "content": text}

    return Tool(name="skill_view", description="Read a skill (instructions a plugin provides) by name, "
                "as 'plugin:skill' or 'skill'.",
                parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                handler=handler, toolset="skills", parallel_safe=True, plugin="hermes-compat")


# --------------------------------------------------------------------------
# Slash commands and CLI commands


def _register_slash(record: state.PluginRecord, register: Callable) -> None:
    for name, (handler, description, args_hint) in list(record.commands.items()):
        def run(raw_args: str, agent: Any, handler=handler) -> Any:
            reply = call_plugin_callable(handler, raw_args)
            return reply if reply is None or isinstance(reply, str) else str(reply)

        register(name, run, description + (f" {args_hint}" if args_hint else ""))


def _register_cli(record: state.PluginRecord, cli: Any) -> None:
    for name, entry in list(record.cli_commands.items()):
        if name in cli.commands:
            log.warning("hermes plugin %s: CLI command %r already exists; not replaced", record.name, name)
            continue
        cli.add_command(cli_command(record, entry), name)


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
        call_plugin_callable(entry["setup_fn"], parser)
        if entry["handler_fn"] is not None and parser.get_default("func") is None:
            parser.set_defaults(func=entry["handler_fn"])
        args = parser.parse_args(list(argv))  # argparse prints usage and exits 2 on bad input
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            return
        result = call_plugin_callable(func, args)
        if isinstance(result, bool):
            sys.exit(0 if result else 1)
        if isinstance(result, int):
            sys.exit(result)
        if isinstance(result, str) and result:
            click.echo(result)

    return command


# --------------------------------------------------------------------------
# Memory providers


class MemoryBackendAdapter:
    """A hermes ``MemoryProvider`` as a kernel memory backend
    (``plugins_memory/base.py``'s interface, by duck typing)."""

    def __init__(self, provider: Any, record: state.PluginRecord):
        self.provider = provider
        self.record = record
        self.name = str(getattr(provider, "name", "") or record.name)
        self._turn = 0

    def _call(self, method: str, *args: Any, default: Any = None, **kwargs: Any) -> Any:
        fn = getattr(self.provider, method, None)
        if not callable(fn):
            return default
        return call_plugin_callable(fn, *args, **kwargs)

    def is_available(self) -> bool:
        return bool(self._call("is_available", default=True))

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        agent = kwargs.pop("agent", None)
        kwargs.setdefault("agent_context", "subagent" if getattr(agent, "parent", None) is not None else "primary")
        call_plugin_callable(self.provider.initialize, session_id, **kwargs)

    def system_prompt_block(self) -> str:
        return self._call("system_prompt_block", default="") or ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self._turn += 1
        self._call("on_turn_start", self._turn, query)
        return self._call("prefetch", query, session_id=session_id, default="") or ""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "", messages=None) -> None:
        self._call("sync_turn", user_content, assistant_content, session_id=session_id, messages=messages)
        self._call("queue_prefetch", user_content, session_id=session_id)

    def on_memory_write(self, action: str, target: str, content: str, metadata=None) -> None:
        self._call("on_memory_write", action, target, content, metadata=metadata)

    def on_pre_compress(self, messages: list) -> str:
        notes = self._call("on_pre_compress", messages, default="")
        return notes if isinstance(notes, str) else ""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", **kwargs: Any) -> None:
        self._call("on_session_switch", new_session_id, parent_session_id=parent_session_id, **kwargs)

    def on_session_end(self, messages: list) -> None:
        self._call("on_session_end", messages)

    def shutdown(self) -> None:
        self._call("shutdown")

    def tools(self) -> list:
        return memory_tools(self.record, self.provider, self.name, lambda: self.provider)

    def get_tool_schemas(self) -> list:
        return list(self._call("get_tool_schemas", default=[]) or [])

    def handle_tool_call(self, tool_name: str, args: dict, **kwargs: Any) -> str:
        return tool_text(self._call("handle_tool_call", tool_name, args, **kwargs))


def memory_tools(record, provider, backend_name: str, find_provider: Callable[..., Any]) -> list:
    """Kernel tools for a memory provider's schemas; the handler asks
    ``find_provider(ctx)`` for the provider instance serving the call."""
    from kernel.types import Tool, ToolError
    from plugins.hermes_compat.host.tool_registry import normalize_schema

    try:
        schemas = call_plugin_callable(provider.get_tool_schemas) or []
    except Exception as exc:
        log.warning("hermes memory provider %s: get_tool_schemas failed: %s", backend_name, exc)
        return []
    tools = []
    for raw in schemas:
        schema = normalize_schema(raw)
        name = schema.get("name")
        if not isinstance(name, str) or not name:
            continue

        def handler(args: dict, ctx: Any, name=name) -> str:
            target = find_provider(ctx)
            if target is None:
                raise ToolError(f"the {backend_name!r} memory provider is not active for this agent "
                                f"(set memory.provider: {backend_name})")
            kwargs = {"task_id": getattr(ctx, "task_id", None), "session_id": getattr(ctx, "session_id", None)}
            return tool_text(call_plugin_callable(target.handle_tool_call, name, args, **kwargs))

        tools.append(Tool(name=name, description=str(schema.get("description") or ""),
                          parameters=schema["parameters"], handler=handler, toolset="memory", plugin=record.name))
    return tools


def memory_proxy_tools(record, provider) -> list:
    """Registered once per plugin host: find the agent's active backend at call time."""
    backend_name = str(getattr(provider, "name", "") or record.name)

    def find(ctx: Any) -> Any:
        try:
            from plugins_memory.manager import active_backend
        except ImportError:
            return None
        backend = active_backend(getattr(ctx, "agent", None))
        if isinstance(backend, MemoryBackendAdapter) and backend.name == backend_name:
            return backend.provider
        return None

    return memory_tools(record, provider, backend_name, find)


def _register_memory(record: state.PluginRecord, register: Callable) -> None:
    for provider in record.memory_providers:
        name = str(getattr(provider, "name", "") or record.name)
        register(name, lambda config, provider=provider: MemoryBackendAdapter(provider, record),
                 f"hermes memory provider from plugin {record.name}")


# --------------------------------------------------------------------------
# Context engines


class ContextEngineAdapter:
    """A hermes ``ContextEngine`` as the kernel's context engine
    (``update_from_response``, ``should_compress``, ``compress``, ``tools``)."""

    def __init__(self, engine: Any, agent: Any, record: state.PluginRecord):
        self.engine = engine
        self.agent = agent
        self.record = record
        self._session = None

    def _call(self, method: str, *args: Any, default: Any = None, **kwargs: Any) -> Any:
        fn = getattr(self.engine, method, None)
        if not callable(fn):
            return default
        return call_plugin_callable(fn, *args, **kwargs)

    def _ensure_session(self) -> None:
        # The engine is built before the agent has a session id: start it on first use.
        agent = self.agent
        session_id = getattr(agent, "session_id", None)
        if session_id == self._session:
            return
        self._session = session_id
        pconf = getattr(agent, "provider_config", None)
        model = getattr(pconf, "model", "") or ""
        length = _context_length(agent, model)
        self._call("update_model", model, length, base_url=getattr(pconf, "base_url", "") or "",
                   provider=getattr(pconf, "provider", "") or "", api_mode=getattr(pconf, "api_mode", "") or "")
        config = getattr(agent, "config", None)
        self._call("on_session_start", session_id, hermes_home=str(getattr(config, "data_dir", "") or ""),
                   platform=getattr(agent, "platform", "cli"), model=model, context_length=length,
                   conversation_id=session_id)

    def update_from_response(self, usage: dict) -> None:
        usage = dict(usage or {})
        usage.setdefault("completion_tokens", usage.get("output_tokens", 0))
        usage.setdefault("prompt_tokens", usage.get("input_tokens", 0))
        usage.setdefault("total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
        self._call("update_from_response", usage)

    def should_compress(self, messages: list) -> bool:
        self._ensure_session()
        if not self._call("has_content_to_compress", messages, default=True):
            return False
        if self._call("should_compress_preflight", messages, default=False):
            return True
        return bool(self._call("should_compress", default=False))

    def compress(self, messages: list, *, agent: Any = None, reason: str = "") -> list:
        self._ensure_session()
        agent = agent or self.agent
        notes = "\n\n".join((getattr(agent, "state", {}) or {}).pop("compression_notes", []) or [])
        last = getattr(self.engine, "last_prompt_tokens", 0) or None
        kwargs = {"current_tokens": last, "focus_topic": None, "force": reason not in ("", "preflight"),
                  "memory_context": notes}
        return self._call("compress", list(messages), **kwargs)

    def tools(self) -> list:
        from kernel.types import Tool
        from plugins.hermes_compat.host.tool_registry import normalize_schema

        out = []
        for raw in self._call("get_tool_schemas", default=[]) or []:
            schema = normalize_schema(raw)
            name = schema.get("name")
            if not isinstance(name, str) or not name:
                continue

            def handler(args: dict, ctx: Any, name=name) -> str:
                messages = list(getattr(self.agent, "messages", []) or [])
                return tool_text(self._call("handle_tool_call", name, args, messages=messages))

            out.append(Tool(name=name, description=str(schema.get("description") or ""),
                            parameters=schema["parameters"], handler=handler, toolset="context_engine",
                            plugin=self.record.name))
        return out


def _context_length(agent: Any, model: str) -> int:
    config = getattr(agent, "config", None)
    value = config.get("model_context_length", None) if config is not None else None
    if isinstance(value, int) and value > 0:
        return value
    try:
        from plugins.compressor import context_window  # the kernel's compressor knows model windows

        return int(context_window(model))
    except Exception:
        return 128_000


def _register_engine(record: state.PluginRecord, register: Callable) -> None:
    engine = record.context_engines[0]
    name = str(getattr(engine, "name", "") or record.name)

    def factory(agent: Any) -> ContextEngineAdapter:
        try:
            own = copy.deepcopy(engine)  # hermes gives every agent its own copy
        except Exception as exc:
            log.warning("hermes context engine %s cannot be copied (%s); agents share one instance", name, exc)
            own = engine
        return ContextEngineAdapter(own, agent, record)

    register(name, factory, f"hermes context engine from plugin {record.name}")


# --------------------------------------------------------------------------
# Model provider profiles (``providers.register_provider``)

# the kernel provider plugin serving each hermes api_mode
_MODE_FACTORIES = {
    "chat_completions": "plugins_providers.openai_chat:factory",
    "codex_responses": "plugins_providers.openai_responses:factory",
    "anthropic_messages": "plugins_providers.anthropic_messages:factory",
}


def _names(profile: Any) -> set:
    return {profile.name, *[a for a in (getattr(profile, "aliases", ()) or ()) if isinstance(a, str)]}


def profile_config(profile: Any, pconf: Any):
    """The ``ProviderConfig`` the api-mode provider needs for this profile:
    its base URL and key variable unless the user's config names them."""
    import os

    env_vars = [v for v in (getattr(profile, "env_vars", ()) or ()) if isinstance(v, str)]
    key_env = pconf.api_key_env or next((v for v in env_vars if os.environ.get(v)), env_vars[0] if env_vars else "")
    return pconf.with_(api_mode=getattr(profile, "api_mode", "") or "chat_completions",
                       base_url=pconf.base_url or getattr(profile, "base_url", "") or "", api_key_env=key_env)


def profile_factory(profile: Any) -> Callable:
    def factory(pconf: Any):
        from kernel.plugins import load_target
        from kernel.types import CONFIG, ProviderError

        inner = profile_config(profile, pconf)
        target = _MODE_FACTORIES.get(inner.api_mode)
        if target is None:
            raise ProviderError(f"hermes provider profile {profile.name!r} uses api_mode {inner.api_mode!r}, "
                                f"which hermes-compat cannot serve", reason=CONFIG, provider=profile.name)
        try:
            make = load_target(target)
        except ImportError as exc:
            raise ProviderError(f"hermes provider profile {profile.name!r} needs the {inner.api_mode} provider "
                                f"plugin ({exc})", reason=CONFIG, provider=profile.name) from None
        return make(inner)

    return factory


def _register_profiles(record: state.PluginRecord, register: Callable) -> None:
    for profile in record.profiles:
        label = getattr(profile, "display_name", "") or getattr(profile, "description", "") or profile.name
        register(profile.name, profile_factory(profile), f"{label} (hermes provider profile, {profile.api_mode})")


def _resolve_mode(record: state.PluginRecord, pconf: Any):
    provider = (getattr(pconf, "provider", "") or "").strip().lower()
    for profile in record.profiles:
        if provider and provider in {n.lower() for n in _names(profile)}:
            return profile.name
    return None
