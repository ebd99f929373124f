"""API-mode resolution: which provider plugin serves a ``ProviderConfig``.

The kernel honours an explicit ``api_mode`` before asking this hook. Then, in
the seeds' order:

1. the provider name (``anthropic`` -> ``anthropic_messages``, ``openai-codex``
   -> ``codex_responses``, ``openrouter`` -> ``chat_completions``; see
   ``defaults.PROVIDERS``);
2. base URL heuristics: host ``api.anthropic.com``, a path ending in
   ``/anthropic`` (or ``/anthropic/v1``) or ``api.kimi.com/coding`` ->
   ``anthropic_messages``; the OpenAI (or xAI) API host -> ``codex_responses``;
3. a model string naming its provider (``anthropic/claude-...``,
   ``openrouter/vendor/model``), or a model name of a known family
   (``gpt-4.1``: openai, ``claude-...``: anthropic; ``defaults.FAMILIES``),
   when no custom base URL says otherwise;
4. ``chat_completions``, the mode most endpoints speak.

The hook runs last (``trylast``) so another plugin can claim a config first. The plugin also declares
``agent.reasoning_effort`` and hands it to each request (:mod:`plugins_providers.reasoning`), and the service tier
and Claude's cache lifetime (:mod:`plugins_providers.serving`).
"""

from __future__ import annotations

from typing import Optional
from urllib.parse import urlparse

from kernel import hookimpl
from plugins_providers.defaults import PROVIDERS, provider_name, target
from plugins_providers.serving import carry, openrouter_cache

DEFAULT_MODE = "chat_completions"


def mode_for_url(base_url: str) -> Optional[str]:
    if not base_url:
        return None
    try:
        parsed = urlparse(base_url)
    except ValueError:
        return None
    host = (parsed.hostname or "").lower()
    path = parsed.path.rstrip("/").lower()
    if host == "api.anthropic.com" or path.endswith("/anthropic") or path.endswith("/anthropic/v1"):
        return "anthropic_messages"
    if host == "api.kimi.com" and path.startswith("/coding"):
        return "anthropic_messages"
    if host in ("api.openai.com", "api.x.ai"):
        return "codex_responses"
    return None


def api_mode_for(config) -> str:
    provider = provider_name(config.provider)
    if provider in PROVIDERS:
        return PROVIDERS[provider].api_mode
    by_url = mode_for_url(config.base_url)
    if by_url:
        return by_url
    guessed = target(config, DEFAULT_MODE).provider
    if guessed in PROVIDERS:
        return PROVIDERS[guessed].api_mode
    return DEFAULT_MODE


@hookimpl(trylast=True)
def resolve_api_mode(config):
    return api_mode_for(config)


@hookimpl
def register_config(declare, config):
    from kernel.keys import Key
    from plugins_providers.reasoning import DELEGATION, KEY, LEVELS, PER_MODEL, SPELLINGS

    declare(Key(KEY, (str, bool), "", f"how hard a model thinks: {', '.join(LEVELS)} (unset: the model's own; sent "
                "only to models known to take it, in their API's words: `hermes model` says what)",
                choices=("", *LEVELS, *SPELLINGS)))
    declare(Key(PER_MODEL, dict, {}, f"per-model levels over {KEY}: {{MODEL: LEVEL}} (hermes-agent's; "
                "anthropic/claude-opus-4.6 and claude-opus-4-6 name one model)"))
    declare(Key(DELEGATION, (str, bool), "", f"the subagents' level over {KEY} (unset: theirs is the same)",
                choices=("", *LEVELS, *SPELLINGS)))
    declare(Key("network.force_ipv4", bool, False, "look hosts up for IPv4 addresses first, where IPv6 is broken "
                "(hermes-agent's)"))
    if config.get("network.force_ipv4") is True:  # before any command connects anywhere
        from plugins_providers.ipv4 import prefer_ipv4

        prefer_ipv4()
    from plugins_providers.serving import declare_keys

    declare_keys(declare)


@hookimpl
def pre_api_request(call, agent):
    """Each call carries the reasoning level it is asked at to the providers (``request.extra["reasoning"]``;
    :func:`plugins_providers.reasoning.level_of_call`): the conversation's, a subagent's, or a side call's own; a
    conversation's calls also its service tier and Claude's cache lifetime, and every call to OpenRouter its response
    cache (:mod:`plugins_providers.serving`)."""
    config = agent.config
    if call.aux_task or any(config.get(key) not in ("", None) for key in ("agent.reasoning_effort",
                                                                          "delegation.reasoning_effort")) \
            or config.get("agent.reasoning_overrides"):
        from plugins_providers.reasoning import level_of_call

        if level := level_of_call(config, call, getattr(agent, "depth", 0)):
            call.request.extra.setdefault("reasoning", level)
    if not call.aux_task:
        carry(config, call)
    openrouter_cache(config, call)


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """A reasoning level set for a model that is sent nothing for it (it takes none, or none is known), and a sampling
    option Claude's thinking leaves out."""
    from kernel.types import ProviderError
    from plugins.doctor.hookspecs import WARN, Check
    from plugins_providers.reasoning import for_agent, refused_with_thinking

    pconf = agent.primary
    try:
        level, carried = for_agent(agent, pconf)
        provider = agent.provider_for(pconf)
    except ProviderError:
        return None  # the provider's own check says why
    checks = []
    if level and level != "none" and carried == {}:
        checks.append(Check("reasoning", WARN, f"agent.reasoning_effort is {level}, and {pconf.model} is not known to "
                            "take a reasoning effort: nothing is sent for it"))
    options = getattr(provider, "options", {})
    if getattr(provider, "api_mode", "") == "anthropic_messages" and ("thinking" in (carried or {}) or
                                                                     options.get("thinking_budget")):
        if refused := refused_with_thinking({**options, **(options.get("extra_body") or {})}):
            checks.append(Check("reasoning", WARN, f"{' and '.join(refused)} {'are' if len(refused) > 1 else 'is'} not "
                                f"sent while {pconf.model} thinks: the API refuses the two together"))
    return checks or None
