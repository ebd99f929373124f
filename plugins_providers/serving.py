"""hermes-agent's keys for how a conversation's model calls are served: ``agent.service_tier`` (OpenAI's processing
tier: ``fast`` is its priority processing, ``flex`` the slower and cheaper one; on Anthropic's API ``fast`` is Claude
Opus 4.6's fast mode, a beta), ``prompt_caching.cache_ttl`` (how
long Claude keeps a prompt's cache: ``5m``, or ``1h`` for conversations with long pauses) and
``openrouter.response_cache`` (OpenRouter answers a request it has seen from its cache, for
``openrouter.response_cache_ttl`` seconds). The provider-resolve plugin hands them to each call that can take them
(``request.extra``); the providers send them in their API's words.
"""

from __future__ import annotations

import os
import re
from typing import Any

SERVICE_TIER, CACHE_TTL = "agent.service_tier", "prompt_caching.cache_ttl"
OR_CACHE, OR_CACHE_TTL = "openrouter.response_cache", "openrouter.response_cache_ttl"
TIERS = {"fast": "priority", "priority": "priority", "on": "priority", "true": "priority", "flex": "flex"}
STANDARD = ("", "normal", "default", "standard", "auto", "off", "none", "false")  # hermes-agent's words for none
TTLS = ("5m", "1h")
OPENAI = ("chat_completions", "codex_responses")
OWN_HOSTS = {"chat_completions": ("api.openai.com", ""), "codex_responses": ("api.openai.com", ""),
             "anthropic_messages": ("api.anthropic.com", "")}  # "": the SDK's own endpoint
FAST_CLAUDE = re.compile(r"claude-opus-4[-.]6(?!\d)")  # the one model of Claude's fast mode (its beta)
FAST_BETA = "fast-mode-2026-02-01"


def tier_of(value: Any) -> str:
    """The ``service_tier`` a setting names (YAML's ``on`` and ``off`` are booleans), ``""`` for the standard one."""
    return TIERS.get(str(value).strip().lower(), "") if value not in (None, False) else ""


def carry(config: Any, call: Any) -> None:
    """The keys into a conversation's call where its endpoint takes them; where it does not, said once. Asked on
    every model call: with both keys at their defaults it reads them and returns."""
    tier, ttl = tier_of(config.get(SERVICE_TIER)), str(config.get(CACHE_TTL) or "5m")
    if not tier and ttl == "5m":
        return
    if ttl != "5m" and call.api_mode == "anthropic_messages":
        call.request.extra.setdefault("cache_ttl", ttl)
    if not tier:
        return
    from plugins_providers.base import warn_once
    from plugins_providers.defaults import host_of

    host = host_of(call.base_url)
    own = host in OWN_HOSTS.get(call.api_mode, ())
    if call.api_mode in OPENAI and own:
        call.request.extra.setdefault("service_tier", tier)
    elif tier == "priority" and own and FAST_CLAUDE.search(call.request.model or ""):
        call.request.extra.setdefault("speed", "fast")  # Claude's fast mode: a beta of Opus 4.6 alone
    else:  # a compatible server may refuse the field; another Claude answers 400 to `speed`
        where = host or call.provider
        warn_once((SERVICE_TIER, where, call.request.model), "%s is sent to OpenAI's own API, and to Claude Opus 4.6 "
                  "on Anthropic's as its fast mode: %s (%s) is not asked for it", SERVICE_TIER, where,
                  call.request.model)


def openrouter_cache(config: Any, call: Any) -> None:
    """A call to OpenRouter asks for its response cache (hermes-agent's headers): ``HERMES_OPENROUTER_CACHE`` and
    ``HERMES_OPENROUTER_CACHE_TTL`` win over config, as there."""
    if call.provider != "openrouter" and "openrouter.ai" not in (call.base_url or ""):
        return
    said = os.environ.get("HERMES_OPENROUTER_CACHE", "").strip().lower()
    if not (said in ("1", "true", "yes", "on") if said else config.get(OR_CACHE)):
        return
    headers = {"X-OpenRouter-Cache": "true"}
    ttl = os.environ.get("HERMES_OPENROUTER_CACHE_TTL", "").strip() or config.get(OR_CACHE_TTL)
    if str(ttl).isdigit() and 1 <= int(ttl) <= 86400:
        headers["X-OpenRouter-Cache-TTL"] = str(int(ttl))
    call.request.extra["extra_headers"] = {**headers, **call.request.extra.get("extra_headers", {})}


def declare_keys(declare: Any) -> None:
    from kernel.keys import Key

    declare(Key(SERVICE_TIER, (str, bool), "", "OpenAI's processing tier: fast (priority processing, priced higher) "
                "or flex (slower, cheaper), sent to OpenAI's own API; fast is also Claude Opus 4.6's fast mode on "
                "Anthropic's", choices=(*STANDARD, *TIERS)))
    declare(Key(CACHE_TTL, str, "5m", "how long Claude keeps the prompt's cache: 5m, or 1h (each write costs more, "
                "a pause of up to an hour still reads it)", choices=TTLS))
    declare(Key(OR_CACHE, bool, True, "OpenRouter answers a request it has seen from its response cache "
                "(hermes-agent's; HERMES_OPENROUTER_CACHE wins)"))
    declare(Key(OR_CACHE_TTL, int, 300, "seconds OpenRouter keeps a cached response, 1 to 86400 "
                "(HERMES_OPENROUTER_CACHE_TTL wins)", minimum=1))
