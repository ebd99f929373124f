"""Registration bridges: a hermes plugin's tools, slash commands, CLI
commands, memory providers, context engines, model provider profiles, web
search and speech providers and secret sources as kernel registrations. See :mod:`plugins.hermes_compat.bridge`
for hooks."""

from __future__ import annotations

from plugins.hermes_compat import state
from plugins.hermes_compat.engines import register_engine
from plugins.hermes_compat.memory import register_memory
from plugins.hermes_compat.profiles import register_profiles, resolve_mode
from plugins.hermes_compat.speech import backends as speech_backends
from plugins.hermes_compat.tools_commands import register_cli, register_skills, register_slash, register_tools
from plugins.hermes_compat.web import backends as web_backends
from plugins.secret_sources.sources import read_sources


def registration_impls(record: state.PluginRecord):
    """``(hook, params, body(kwargs), hookimpl options)`` for what ``record`` registered."""
    if record.tools or record.memory_providers:
        opts = {"trylast": True} if any(s.override for s in record.tools.values()) else {}
        yield "register_tools", ("register",), lambda kw: register_tools(record, kw["register"]), opts
    if record.skills:
        yield "register_skills", ("register",), lambda kw: register_skills(record, kw["register"]), {
            "optionalhook": True}  # brought by the skills plugin
    if record.commands:
        yield "register_slash_commands", ("register",), lambda kw: register_slash(record, kw["register"]), {
            "optionalhook": True}  # brought by the commands plugin
    if record.cli_commands:
        yield "register_commands", ("cli",), lambda kw: register_cli(record, kw["cli"]), {}
    if record.memory_providers:
        yield "register_memory_backends", ("register",), lambda kw: register_memory(record, kw["register"]), {
            "optionalhook": True}  # brought by the memory plugin
    if record.context_engines:
        yield "register_context_engines", ("register",), lambda kw: register_engine(record, kw["register"]), {}
    if record.web_providers:  # the web plugin's hooks
        yield "web_search_backends", ("agent",), lambda kw: web_backends(record, "search"), {"optionalhook": True}
        yield "web_extract_backends", ("agent",), lambda kw: web_backends(record, "extract"), {"optionalhook": True}
    if record.tts_providers:  # the tts plugin's hook
        yield "tts_backends", ("agent",), lambda kw: speech_backends(record, kw["agent"]), {"optionalhook": True}
    if record.secret_sources:  # after the built-in sources' register_config: theirs are set first
        yield "register_config", ("declare", "config"), lambda kw: read_sources(
            record.secret_sources, kw["declare"], kw["config"]), {"trylast": True}
    if record.profiles:
        yield "register_model_providers", ("register",), lambda kw: register_profiles(record, kw["register"]), {}
        yield "resolve_api_mode", ("config",), lambda kw: resolve_mode(record, kw["config"]), {}
