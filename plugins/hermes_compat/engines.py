"""A hermes ``ContextEngine`` as the kernel's context engine."""

from __future__ import annotations

import copy
from typing import Any, Callable

from kernel.protocols import ContextEngine
from plugins.hermes_compat import state
from plugins.hermes_compat.bridge import call_plugin_callable
from plugins.hermes_compat.state import log
from plugins.hermes_compat.tools_commands import tool_text


class ContextEngineAdapter(ContextEngine):
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
        token = state.ENGINE_AGENT.set(self.agent)  # what a ContextCompressor it inherits from summarises with
        try:
            return call_plugin_callable(fn, *args, **kwargs)
        finally:
            state.ENGINE_AGENT.reset(token)

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

    def compress(self, messages: list, *, agent: Any = None, reason: str = "", notes: list = ()) -> list:
        self._ensure_session()
        notes = "\n\n".join(n for n in notes if n)
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


def register_engine(record: state.PluginRecord, register: Callable) -> None:
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
