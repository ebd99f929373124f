"""Auxiliary models: the ``auxiliary.<task>`` config blocks (``compression``,
``approval``) and one call on the model they name.

A block names a model and, optionally, another endpoint (``provider``,
``base_url``, ``api_mode``, ``api_key_env``, ``timeout``), and what the calls send besides (``extra_body``);
hermes-agent's ``api_key`` written in the block is used, and said to belong in the environment. Empty or ``auto``
means the conversation's own model. The call goes through the agent's single
model-call path (``agent.complete_once``), so the API hooks see it, an
interrupt stops it, and the fallback policy applies.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Optional

FIELDS = ("model", "provider", "base_url", "api_mode", "api_key_env")
log = logging.getLogger(__name__)
_said: set = set()


def provider_config(config: Any, task: str, prefix: str = "") -> Optional[Any]:
    """The ``auxiliary.<task>`` block as a partial ProviderConfig (or, with ``prefix``, the keys ``<prefix>.model``,
    ``<prefix>.provider`` ...: delegation's, each of which a distro may set), or None when it names nothing of its
    own. A malformed block is a ConfigError, not a silent fall back to the expensive model."""
    from hermes.host.config import ConfigError
    from kernel.types import ProviderConfig

    if config is None:
        return None
    key = prefix or f"auxiliary.{task}"
    raw = {field: config.get(f"{prefix}.{field}", None) for field in (*FIELDS, "api_key")} if prefix else \
        config.get(key, None)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"{key}: expected a mapping (model, provider, base_url, ...), got {raw!r}")
    fields = {}
    for field in FIELDS:
        value = raw.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ConfigError(f"{key}.{field}: expected a string, got {value!r}")
        if value.strip() and value.strip().lower() != "auto":
            fields[field] = value.strip()
    timeout, body = raw.get("timeout"), raw.get("extra_body")
    if timeout is not None and (not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0):
        raise ConfigError(f"{key}.timeout: expected a positive number of seconds, got {timeout!r}")
    if body is not None and not isinstance(body, dict):
        raise ConfigError(f"{key}.extra_body: expected a mapping of fields to send, got {body!r}")
    if isinstance(raw.get("api_key"), str) and raw["api_key"].strip() and "api_key_env" not in fields:
        fields["api_key_env"] = literal_key(key, raw["api_key"].strip())
    if not fields:
        return None
    extra = (("timeout", float(timeout)),) if timeout is not None else ()
    return ProviderConfig(**fields, extra=extra + ((("extra_body", body),) if body else ()))


def _variable(key: str) -> str:
    import re

    return f"HERMES_{re.sub(r'[^A-Z0-9]', '_', key.upper())}_API_KEY"


def export_written_keys(config: Any) -> None:
    """As hermes starts (hermes-compat's ``register_config``): each key written in config (an auxiliary block's, the
    delegation's, a fallback entry's) into the variable :func:`literal_key` names, before any agent reads which
    variables hold keys, so it is masked and kept from tools as every key is."""
    import os

    from plugins.fallback import entries  # numbered as the fallback chain numbers them: the same variables

    data = config.data
    blocks = [(f"auxiliary.{task}", b) for task, b in (data.get("auxiliary") or {}).items()] \
        if isinstance(data.get("auxiliary"), dict) else []
    blocks += [("delegation", data.get("delegation"))]
    blocks += [(f"fallback_providers[{i}]", entry) for i, entry in enumerate(entries(config))]
    for key, block in blocks:
        if isinstance(block, dict) and not block.get("api_key_env") and not block.get("key_env"):
            value = block.get("api_key") or (block.get("key") if key.startswith("fallback") else None)
            if isinstance(value, str) and value.strip():
                os.environ.setdefault(_variable(key), value.strip())


def literal_key(key: str, value: str) -> str:
    """hermes-agent's ``api_key`` written in an auxiliary block (or a delegation or fallback entry): used (through a
    variable of its own, so it never travels in a ProviderConfig), and said once to belong in the environment."""
    import os

    variable = _variable(key)
    os.environ.setdefault(variable, value)
    if key not in _said:
        _said.add(key)
        log.warning("%s.api_key: an API key written in config.yaml; it is used, but belongs in the environment "
                    "(%s.api_key_env names the variable)", key, key)
    return variable


def caller(agent: Any, aux: Any = None, task: str = "auxiliary") -> Optional[Callable[..., str]]:
    """``call(messages, max_tokens=None) -> str`` on the auxiliary model
    ``aux`` (None: the conversation's model), or None when the agent cannot
    make model calls. ``task`` names the work for the API hooks."""
    complete_once = getattr(agent, "complete_once", None)
    if complete_once is None:
        return None
    if aux is None:
        return lambda messages, max_tokens=None: complete_once(messages, max_tokens=max_tokens, task=task)
    pconf = joined(agent, aux)
    return lambda messages, max_tokens=None: complete_once(messages, max_tokens=max_tokens, provider_config=pconf,
                                                           task=task)


def joined(agent: Any, aux: Any) -> Any:
    """The ProviderConfig an auxiliary block's calls go to."""
    main = getattr(agent, "provider_config", None)
    if not (aux.provider or aux.base_url or aux.api_mode) and main is not None:
        # only a model named: the conversation's settings with it (a provider left to the model's family: its)
        return main.with_(model=aux.model or main.model, extra=tuple(sorted({**main.options(), **aux.options()}.items())))
    # another endpoint; without a model of its own it serves the conversation's model name
    return aux if aux.model or main is None else aux.with_(model=main.model)


def check(agent: Any, task: str, prefix: str = "") -> None:
    """As a session starts: is ``auxiliary.<task>`` (or ``prefix``'s keys) usable (:func:`say_unusable`)? Not first
    when its work comes (a summary, a review, a subagent), which then goes without it."""
    from hermes.host.config import ConfigError

    try:
        aux = provider_config(agent.config, task, prefix)
    except ConfigError:
        return  # a malformed block: config check and the call itself say it
    if aux is not None:
        say_unusable(agent, joined(agent, aux), prefix or f"auxiliary.{task}")


def say_unusable(agent: Any, pconf: Any, what: str) -> None:
    """Warn once per process when a provider config kept for later (a fallback, an auxiliary model) cannot be used:
    an unknown provider, no key or SDK, a URL without a scheme, a model of another provider's family. Building its
    provider (kept by the agent for its calls) imports no SDK."""
    from kernel.types import CONFIG, ProviderError

    if pconf in _said:
        return
    try:
        agent.provider_for(pconf)
    except ProviderError as exc:
        if exc.reason == CONFIG:
            _said.add(pconf)
            log.warning("%s (%s) cannot be used: %s", what, pconf.label(), exc.message)


def doctor_lines(agent: Any, task: str, online: bool, prefix: str = "") -> Optional[list]:
    """``hermes doctor``'s line for the ``auxiliary.<task>`` block (or ``prefix``'s keys): None when it names no
    model."""
    from hermes.host.config import ConfigError
    from plugins.doctor.hookspecs import FAIL, Check

    name = prefix or f"auxiliary.{task}"
    try:
        aux = provider_config(agent.config, task, prefix)
    except ConfigError as exc:
        return [Check(name, FAIL, str(exc))]
    return None if aux is None else [probe(agent, joined(agent, aux), name, online)]


def probe(agent: Any, pconf: Any, name: str, online: bool) -> Any:
    """``hermes doctor``'s line for one model: can its provider be built (a known provider, a key, a URL) and,
    ``online``, does it answer one short request (straight to the provider: no retries, no fallback; but through
    the plugins' ``pre_api_request``, which may add what the endpoint needs, as a gateway's token)?"""
    import time

    from kernel.types import ApiCall, ModelRequest, ProviderError
    from plugins.doctor.hookspecs import FAIL, OK, Check

    try:
        provider = agent.provider_for(pconf)
        if not online:
            return Check(name, OK, f"{pconf.label()}: configured (not called: --offline)")
        started = time.monotonic()
        request = ModelRequest(model=pconf.model, messages=[{"role": "user", "content": "Reply with the word OK."}],
                               stream=False, max_tokens=16)
        mode = agent.caller.modes.get(pconf, pconf.api_mode)
        agent.hook.pre_api_request(call=ApiCall(
            request=request, session_id=agent.session_id, task_id="probe", turn_id="probe",
            api_request_id="probe-1", platform=agent.platform, provider=pconf.provider or mode, api_mode=mode,
            base_url=pconf.base_url, number=1, started_at=time.time(), aux_task="probe"), agent=agent)
        provider.complete(request, _Silent())
    except ProviderError as exc:
        said = f"no answer within {agent.config.get('agent.api_timeout'):g} s" if exc.silent else exc.message
        return Check(name, FAIL, f"{pconf.label()}: {said}" if pconf.model else said)
    return Check(name, OK, f"{pconf.label()}: answered in {time.monotonic() - started:.1f} s")


class _Silent:
    """The event sink of a call nobody watches."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None
