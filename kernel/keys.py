"""Config keys: the record every part declares its keys with, and the loop's
own (:data:`KERNEL_KEYS`); a plugin declares its through ``register_config``.
The loop reads values through the :class:`kernel.protocols.Settings` it is given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Key:
    """A config key: its dotted name, type, default and one line of help.

    ``type`` is ``int``, ``float`` (an integer is accepted), ``str``, ``bool``, ``list``, ``list[str]`` or ``dict``
    (or a tuple of them); a ``dict`` or ``list`` key is free-form below it. ``minimum`` is the least number that makes
    sense (a budget of -5 is as wrong as one of "lots"); ``choices``, the only values it takes (text without case).
    ``alias_for`` names the key this one is another name for: read when that one is not set."""

    name: str
    type: type
    default: Any = None
    help: str = ""
    owner: str = "kernel"
    minimum: Optional[float] = None
    alias_for: str = ""
    choices: tuple = ()
    names: str = ""  # a registry table whose entries' names are its values (``config check`` names a typo)


# the keys the loop reads (names follow hermes-agent where it has them)
KERNEL_KEYS = [
    Key("model", str, "", "the model to talk to (`-m`)"),
    Key("provider", str, "", "the provider: openai, anthropic, openrouter, ... (`--provider`)"),
    Key("base_url", str, "", "the provider's API base URL (`--base-url`)"),
    Key("api_mode", str, "", "the wire protocol: chat_completions, anthropic_messages, ...", names="model_providers"),
    Key("api_key_env", str, "", "the environment variable that holds the API key (`--api-key-env`)"),
    Key("provider_options", dict, {}, "extra options passed to the provider (temperature, headers, ...)"),
    Key("fallback_providers", list, [], "providers to try in order when the primary fails (mappings like the above)"),
    Key("toolsets", list[str], None, "the toolsets offered to the model (`-t`); all when unset, none when []"),
    Key("agent.max_turns", int, 90, "the iteration budget of one turn (model calls with tools)", minimum=1),
    Key("agent.api_timeout", float, 600, "seconds one model call may take in all", minimum=1),
    Key("agent.stream_idle_timeout", float, 60, "seconds a provider may send nothing before the call is retried "
        "(left at 60, a local server or a reasoning model gets agent.api_timeout)", minimum=1),
    Key("agent.system_prompt", str, "", "the identity text at the start of the system prompt"),
    Key("agent.stream", bool, True, "stream answers as they arrive"),
    Key("agent.max_tokens", int, None, "the answer's token limit per call (the provider's default when unset)",
        minimum=1),
    Key("agent.disabled_tools", list[str], [], "tool names never offered to the model"),
    Key("context.engine", str, "compressor", "the engine keeping the history in the window", names="context_engines"),
    Key("tools.env_passthrough", list[str], [], "secret-looking environment variables tools may still see"),
    Key("tools.max_result_chars", int, 100_000, "the characters of a tool result that are kept", minimum=1000),
]
