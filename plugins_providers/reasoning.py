"""How hard a model thinks: ``agent.reasoning_effort`` (hermes-agent's key) and chat's ``/reasoning LEVEL``, said to
each API in its own words, and only to the models known to take it: a request that carries an effort its model does
not take fails, every time.

- OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and later, codex, gpt-oss): ``reasoning_effort`` in chat
  completions, ``reasoning.effort`` in the Responses API, in the levels each family takes.
- Claude 3.7 to 4.5: extended thinking with a token budget; Claude 4.6 and later: adaptive thinking at an effort.
- OpenRouter: its ``reasoning`` field, for the families it reasons with (OpenAI's, DeepSeek, Grok, Gemini 2.5 and
  later, Qwen 3); Gemini's own OpenAI endpoint: ``reasoning_effort``; xAI's: grok-3-mini's low or high.
- Any other model: nothing is sent (``hermes model`` says so).

A provider option (``provider_options.reasoning_effort``, ``thinking_budget``) is the user's word for one provider and
wins. The level reaches the providers on each request (``request.extra["reasoning"]``, set by the ``provider-resolve``
plugin's ``pre_api_request``); the calls beside the conversation (a summary, an approval) carry their own
(``auxiliary.<task>.reasoning_effort``) or none, a subagent's ``delegation.reasoning_effort`` when set."""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from kernel import hookimpl

LEVELS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
SPELLINGS = {"ultra": "max", "off": "none", "false": "none", "disabled": "none"}  # hermes-agent's other words
KEY, PER_MODEL, DELEGATION = "agent.reasoning_effort", "agent.reasoning_overrides", "delegation.reasoning_effort"

_OPENAI = re.compile(r"(o1(?!-mini|-preview)|o[34]|gpt-oss|gpt-5(?!(\.\d+)?-chat)|codex|.*-codex)")
_GPT5 = re.compile(r"gpt-5(?:\.(\d+))?")
_CLAUDE = re.compile(r"claude-(?:opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2})(?!\d))?")
_OPENROUTER = ("openai/", "deepseek/", "x-ai/", "google/gemini-2.5", "google/gemini-3", "qwen/qwen3")
BUDGET = {"minimal": 1024, "low": 4000, "medium": 8000, "high": 16000}  # Claude before 4.6: thinking tokens
_ANSWER_ROOM = 4096  # max_tokens must leave room for the answer after the budget
_THREE = {"minimal": "low", "xhigh": "high", "max": "high"}  # for those that take low, medium and high


def level_of(value: Any) -> str:
    """The level a setting names (YAML's ``false`` and hermes-agent's ``off``/``disabled`` are ``none``, its ``ultra``
    is ``max``), ``""`` when unset."""
    if value is False:
        return "none"
    if value is None or value is True:
        return ""
    text = str(value).strip().lower()
    return SPELLINGS.get(text, text)


def level_for(config: Any, model: str) -> str:
    """The level ``model`` is asked at: ``agent.reasoning_overrides``' for it (hermes-agent's per-model levels) unless
    ``agent.reasoning_effort`` is set over the file (a chat's ``/reasoning``, a distro's block), else that key's."""
    per_model = config.get(PER_MODEL) if KEY not in getattr(config, "overrides", {}) else None
    spelt = _spelling(model)
    for name, value in (per_model.items() if isinstance(per_model, dict) else ()):
        if _spelling(str(name)) == spelt and level_of(value) in LEVELS:  # an unknown level: the key's (config check)
            return level_of(value)
    return level_of(config.get(KEY))


def level_of_call(config: Any, call: Any, depth: int) -> str:
    """The level one model call is asked at: a call beside the conversation (a summary, an approval) at its task's
    ``auxiliary.<task>.reasoning_effort``, else at the model's own effort; a subagent's (``depth`` above 0) at
    ``delegation.reasoning_effort`` when set (all hermes-agent's keys); else :func:`level_for`."""
    if call.aux_task or depth and config.get(DELEGATION) not in ("", None):
        key = f"auxiliary.{call.aux_task.partition(':')[0]}.reasoning_effort" if call.aux_task else DELEGATION
        level = level_of(config.get(key, None))
        if level and level not in LEVELS:
            from plugins_providers.base import warn_once

            warn_once((key, level), "%s: %r is not a level (%s); the call goes at the model's own effort", key,
                      level, ", ".join(LEVELS))
        return level if level in LEVELS else ""
    return level_for(config, call.request.model)


def _spelling(model: str) -> str:
    """A model's name as the per-model levels match it: no vendor prefix, lower case, dots as dashes
    (``anthropic/claude-opus-4.6`` is ``claude-opus-4-6``)."""
    return bare(model).replace(".", "-")


def bare(model: str) -> str:
    """The model's name without a router's vendor prefix, in lower case (``openai/o3`` -> ``o3``)."""
    return (model or "").lower().rsplit("/", 1)[-1]


def openai_effort(model: str, level: str) -> Optional[str]:
    """The ``reasoning_effort`` an OpenAI reasoning model takes for ``level`` (the nearest its family has), or None
    for a model that takes none (``gpt-4o``, ``gpt-5-chat-latest``, ``o1-mini``)."""
    name = bare(model)
    if not level or not _OPENAI.match(name):
        return None
    five = _GPT5.match(name)
    minor = int(five.group(1) or 0) if five else -1  # -1: the o-series
    if name.endswith("-pro") or "-pro-" in name:
        return "high"  # the pro models think at one level
    if level == "none":
        return "none" if minor >= 1 else "minimal" if minor == 0 and "codex" not in name else "low"
    if level == "minimal":
        return "minimal" if minor == 0 and "codex" not in name else "low"
    if level in ("xhigh", "max"):
        return "xhigh" if minor >= 2 or "codex-max" in name else "high"
    return level


def claude_thinking(model: str, level: str, max_tokens: int) -> dict:
    """The Messages API's arguments for ``level`` on ``model``: ``thinking`` (a budget before Claude 4.6, adaptive
    from it, with ``output_config.effort``) and a ``max_tokens`` that leaves room for the answer; {} for a model
    without thinking (Claude 3.5 and before, another vendor's) or ``none``."""
    name = bare(model)
    found = _CLAUDE.search(name)
    if found:
        version = (int(found.group(1)), int(found.group(2) or 0))
    elif re.search(r"claude-3[-.]7", name):
        version = (3, 7)
    else:
        version = (3, 0) if re.search(r"claude-(instant|[123])", name) else (99, 0) if "claude" in name else (0, 0)
    if not level or level == "none" or version < (3, 7):
        return {}
    if version < (4, 6):
        budget = BUDGET.get(level, 32000)
        return {"thinking": {"type": "enabled", "budget_tokens": budget},
                "max_tokens": max(max_tokens, budget + _ANSWER_ROOM)}
    effort = {"minimal": "low", "xhigh": "xhigh" if version >= (4, 7) else "max"}.get(level, level)
    return {"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": effort}}


def refused_with_thinking(sampling: dict) -> list:
    """The settings of ``sampling`` Claude refuses while it thinks (a 400 on every request): a ``temperature`` other
    than 1, any ``top_k``, a ``top_p`` under 0.95."""
    def refused(key: str, value: Any) -> bool:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return key == "top_k" or (key == "temperature" and value != 1) or \
            (key == "top_p" and (not number or value < 0.95))

    return [key for key, value in sampling.items() if key in ("temperature", "top_p", "top_k") and refused(key, value)]


def openrouter_reasoning(model: str, level: str) -> Optional[dict]:
    """OpenRouter's ``reasoning`` field for ``level``, or None: a family it does not reason with, Claude (its newer
    models refuse the field there) and ``none`` (a model that must think would refuse to stop)."""
    name = (model or "").lower()
    if not level or level == "none" or not name.startswith(_OPENROUTER):
        return None
    if name.startswith("openai/"):
        effort = openai_effort(name, level)
        return {"effort": effort} if effort else None
    return {"effort": _THREE.get(level, level)}


def gemini_effort(model: str, level: str) -> Optional[str]:
    """``reasoning_effort`` on Gemini's OpenAI endpoint: Gemini 2.5 and later think at low, medium or high."""
    if not level or level == "none" or not re.match(r"gemini-(2\.5|[3-9])", bare(model)):
        return None
    return _THREE.get(level, level)


def xai_effort(model: str, level: str) -> Optional[str]:
    """``reasoning_effort`` on xAI's own endpoint: grok-3-mini thinks at low or high; its other models refuse the
    field (grok-4 always thinks)."""
    if not level or level == "none" or not bare(model).startswith("grok-3-mini"):
        return None
    return "low" if level in ("minimal", "low") else "high"


def arguments(api_mode: str, host: str, model: str, level: str, max_tokens: int = 0) -> dict:
    """The request's arguments for ``level`` on ``model`` in ``api_mode`` at ``host`` ({}: nothing to send)."""
    if api_mode == "anthropic_messages":
        return claude_thinking(model, level, max_tokens)
    if host == "api.x.ai":
        effort = xai_effort(model, level)
        return {} if not effort else {"reasoning": {"effort": effort}} if api_mode == "codex_responses" \
            else {"reasoning_effort": effort}
    if api_mode == "codex_responses":
        effort = openai_effort(model, level)
        return {"reasoning": {"effort": effort, "summary": "auto"}} if effort else {}
    if host == "openrouter.ai":
        sent = openrouter_reasoning(model, level)
        return {"extra_body": {"reasoning": sent}} if sent else {}
    effort = gemini_effort(model, level) if host == "generativelanguage.googleapis.com" else openai_effort(model, level)
    return {"reasoning_effort": effort} if effort else {}


def sent(level: str, api_mode: str, target: Any, model: str) -> Optional[dict]:
    """What a request to ``model`` through a built-in provider's ``target`` carries for ``level`` (without the
    ``max_tokens`` it may raise); None for another provider, which reads ``request.extra["reasoning"]`` as it will."""
    if target is None or api_mode not in ("chat_completions", "codex_responses", "anthropic_messages"):
        return None
    from plugins_providers.defaults import host_of

    found = arguments(api_mode, host_of(target.base_url), target.model_for(model), level)
    return {k: v for k, v in found.items() if k != "max_tokens"}


def for_agent(agent: Any, pconf: Any) -> tuple:
    """(the level ``pconf``'s model is asked at, what its requests carry for it (:func:`sent`; None when unset)); the
    provider is built to tell, so a ProviderError says why it cannot be."""
    level = level_for(agent.config, pconf.model)
    if not level:
        return level, None
    provider = agent.provider_for(pconf)
    return level, sent(level, getattr(provider, "api_mode", ""), getattr(provider, "target", None), pconf.model)


def said(level: str, carried: Optional[dict], model: str) -> str:
    """``level`` and what a request ``carried`` for it (:func:`sent`), in a few words."""
    if carried is None:
        return f"{level}: as the provider plugin takes it"
    if carried:
        return f"{level}: sent as {json.dumps(carried)}"
    return f"{level}: nothing sent (" + ("the model's default" if level == "none" else
                                         f"{model} is not known to take a reasoning effort") + ")"


def apply(kwargs: dict, api_mode: str, host: str, level: str) -> None:
    """Add ``level``'s arguments to a request's ``kwargs``; what is there stays (``extra_body``'s keys, a larger
    ``max_tokens``)."""
    added = arguments(api_mode, host, kwargs.get("model", ""), level, kwargs.get("max_tokens") or 0)
    if "extra_body" in added:
        added["extra_body"] = {**added["extra_body"], **(kwargs.get("extra_body") or {})}
    kwargs.update(added)


class Effort:
    """Callbacks of one agent (a request's of ``hermes serve``, an editor's session of ``hermes acp``) that ask its
    conversation's calls at ``level``, over agent.reasoning_effort ("": config's)."""

    def __init__(self, level: str = ""):
        self.level = level

    @hookimpl
    def pre_api_request(self, call):
        if self.level and not call.aux_task:
            call.request.extra["reasoning"] = self.level
