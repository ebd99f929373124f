"""The fallback policy: what to do when a model call fails.

The kernel's loop executes the decision; this plugin only decides, from the
failure's classified ``reason`` (see ``plugins_providers/errors.py``) and the
chain ``[primary] + fallback_providers``:

* a stream that failed after some of its text was shown is retried and moved
  on like any other failure (the front end marks where the new answer starts,
  see ``plugins/terminal/console.py``); when nothing was shown (``--json``, subagents) it
  is as if it had failed before the first byte;
* ``context_overflow``: compress the history and call again;
* ``server``/``transport`` (5xx, 529, timeouts, drops, cut streams): retry the
  same provider with backoff (``retry_after`` if the server gave one, else
  ``agent.retry_base_delay`` doubling per attempt; capped at
  ``agent.retry_max_delay``), at most ``agent.api_max_retries`` times (a
  provider that went silent past the stream idle timeout: once), then move on;
* ``rate_limit``, ``billing``: move on at once (with nothing to move on to, a
  rate limit is retried like a server error; billing gives up);
* ``auth``: ask the provider to re-read its key once, then move on;
* ``bad_request``, ``config``: move on (another provider may accept it);
* when every entry failed: give up with one line per provider and why.

Fallback is turn-scoped: the next turn starts on the primary again, unless the
primary was rate limited; then it cools down for ``retry_after`` (or
``fallback_cooldown`` seconds, doubling on consecutive rate limits, capped at
``fallback_cooldown_max``), and ``choose_provider`` starts turns on the first
fallback until the cooldown ends. A successful answer from the primary resets
the streak. Per-agent state lives in ``agent.state["fallback"]``, per-turn
state in ``failure.turn_state``.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Optional

from kernel import hookimpl
from kernel.hints import close_matches
from kernel.types import (
    AUTH,
    BILLING,
    CONTEXT_OVERFLOW,
    RATE_LIMIT,
    SERVER,
    TRANSPORT,
    Compress,
    GiveUp,
    ProviderConfig,
    RefreshCredentials,
    Retry,
    SwitchProvider,
)

log = logging.getLogger(__name__)

# dotted key -> default; read from the agent's config (tests make them small)
SETTINGS = {
    "agent.api_max_retries": 3,
    "agent.retry_base_delay": 1.0,
    "agent.retry_max_delay": 30.0,
    "agent.fallback_cooldown": 60.0,
    "agent.fallback_cooldown_max": 600.0,
}
TRANSIENT = (SERVER, TRANSPORT)
HELP = {
    "agent.api_max_retries": "retries of one model call on a retryable failure",
    "agent.retry_base_delay": "seconds before the first retry; doubles per attempt",
    "agent.retry_max_delay": "the longest wait between retries, in seconds",
    "agent.fallback_cooldown": "seconds a rate-limited primary rests before turns start on it again; doubles",
    "agent.fallback_cooldown_max": "the longest rest of a rate-limited primary, in seconds",
}


def _setting(agent: Any, key: str) -> float:
    config = getattr(agent, "config", None)
    value = config.get(key, SETTINGS[key]) if config is not None else None
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return SETTINGS[key]
    return value


# A key written in an entry (hermes-agent reads them) is used through a variable of its own, so it never travels in a
# ProviderConfig into hook payloads; beside api_key_env it is dropped.
LITERAL_KEYS = ("api_key", "key")
_warned: set = set()


def normalized(i: int, entry: dict) -> dict:
    """Entry ``i`` with hermes-agent's spellings read and a key written in it moved to a variable."""
    entry = dict(entry)
    if "key_env" in entry and not entry.get("api_key_env"):
        entry["api_key_env"] = entry.pop("key_env")  # hermes-agent's spelling
    entry.pop("key_env", None)
    for name in LITERAL_KEYS:
        value = entry.pop(name, None)
        if isinstance(value, str) and value.strip() and not entry.get("api_key_env"):
            from plugins.auxiliary import literal_key

            entry["api_key_env"] = literal_key(f"fallback_providers[{i}]", value.strip())
        elif value is not None and (i, name) not in _warned:
            _warned.add((i, name))
            log.warning("fallback_providers[%d]: '%s' in config is ignored: api_key_env names the key's variable",
                        i, name)
    return entry


def entries(config: Any) -> list:
    """``fallback_providers``, then hermes-agent's older ``fallback_model`` (one mapping, or a list)."""
    if config is None:
        return []
    older = config.get("fallback_model", None)
    return [*(config.get("fallback_providers") or []), *([older] if isinstance(older, dict) else older or [])]


def provider_config(entry: dict) -> ProviderConfig:
    """A ``fallback_providers`` entry as a ProviderConfig: its other keys are the provider's options."""
    fields = ("model", "provider", "base_url", "api_mode", "api_key_env")
    extra = tuple(sorted((k, v) for k, v in entry.items() if k not in fields))
    return ProviderConfig(extra=extra, **{k: str(entry.get(k) or "") for k in fields})


def chain(agent: Any, primary: ProviderConfig) -> list:
    """``[primary] + fallback_providers`` as ProviderConfigs, without repeats.
    Entries without a model are skipped (the original does the same)."""
    out = [primary]
    for i, entry in enumerate(entries(getattr(agent, "config", None))):
        if not isinstance(entry, dict) or not entry.get("model"):
            if (i, "model") not in _warned:  # asked at each session's start and each failure: said once
                _warned.add((i, "model"))
                near = [k for k in (entry if isinstance(entry, dict) else ()) if close_matches(str(k), ["model"])]
                log.warning("fallback_providers[%d] has no model%s; skipped", i, f" ('{near[0]}' is no key)" if near else "")
            continue
        pconf = provider_config(normalized(i, entry))
        if pconf not in out:
            out.append(pconf)
    return out


def _state(agent: Any) -> dict:
    state = getattr(agent, "state", None)
    if state is None:
        return {}
    return state.setdefault("fallback", {"cooldown_until": 0.0, "streak": 0})


def _cooling(agent: Any) -> bool:
    return _state(agent).get("cooldown_until", 0.0) > time.monotonic()


def _give_up(failure: Any, note: str = "") -> GiveUp:
    """One line per provider (its last failure), in the order they were tried."""
    last: dict = {}
    for label, why in failure.history or [(failure.config.label(), str(failure.error))]:
        last.pop(label, None)
        last[label] = why
    lines = "; ".join(f"{label}: {why}" for label, why in last.items())
    head = "every provider failed" if len(last) > 1 else "the model call failed"
    return GiveUp(f"{head}{note}: {lines}")


def _next_entry(failure: Any, agent: Any) -> Optional[ProviderConfig]:
    entries = chain(agent, failure.primary)
    tried = failure.turn_state.setdefault("tried", [])
    if failure.config not in tried:
        tried.append(failure.config)
    for pconf in entries:
        if pconf in tried:
            continue
        if pconf == failure.primary and _cooling(agent):
            continue
        return pconf
    # every fallback failed while the primary cools down: better the primary than nothing
    if failure.primary not in tried:
        return failure.primary
    return None


def _move_on(failure: Any, agent: Any) -> Any:
    nxt = _next_entry(failure, agent)
    if nxt is None:
        return _give_up(failure)
    failure.turn_state.setdefault("tried", []).append(nxt)
    return SwitchProvider(nxt)


def _backoff(failure: Any, agent: Any) -> float:
    cap = _setting(agent, "agent.retry_max_delay")
    if failure.error.retry_after is not None:
        return min(cap, max(0.0, failure.error.retry_after))
    base = _setting(agent, "agent.retry_base_delay")
    return min(cap, base * (2 ** max(0, failure.attempt - 1)))


def _start_cooldown(failure: Any, agent: Any) -> None:
    state = _state(agent)
    state["streak"] = state.get("streak", 0) + 1
    base = _setting(agent, "agent.fallback_cooldown")
    cap = _setting(agent, "agent.fallback_cooldown_max")
    wait = failure.error.retry_after
    if wait is None:
        wait = base * (2 ** (state["streak"] - 1))
    state["cooldown_until"] = time.monotonic() + min(cap, max(0.0, wait))


@hookimpl
def register_config(declare):
    for key, text in HELP.items():
        declare(key, int if key == "agent.api_max_retries" else float, SETTINGS[key], text, minimum=0)
    declare("fallback_model", (dict, list), None, "hermes-agent's older single fallback (a mapping like a "
            "fallback_providers entry): tried after those")


@hookimpl(trylast=True)
def on_provider_error(failure, agent):
    err = failure.error
    reason = err.reason
    if reason == CONTEXT_OVERFLOW:
        return Compress()
    if reason == RATE_LIMIT and failure.config == failure.primary:
        _start_cooldown(failure, agent)
    if reason in (RATE_LIMIT, BILLING):
        nxt = _next_entry(failure, agent)
        if nxt is not None:
            failure.turn_state["tried"].append(nxt)
            return SwitchProvider(nxt)
        if reason == BILLING:
            return _give_up(failure)
        # nothing to move on to: wait out the rate limit like a transient error
    if reason in TRANSIENT or reason == RATE_LIMIT:
        retries = int(_setting(agent, "agent.api_max_retries"))
        if getattr(err, "silent", False):
            retries = min(retries, 1)  # silence is retried once: a silent provider is left within ~2 x the timeout
        if failure.attempt <= retries:
            return Retry(_backoff(failure, agent))
        return _move_on(failure, agent)
    if reason == AUTH:
        refreshed = failure.turn_state.setdefault("refreshed", [])
        if failure.config not in refreshed:
            refreshed.append(failure.config)
            return RefreshCredentials()
        return _move_on(failure, agent)
    return _move_on(failure, agent)  # bad_request, config, anything new


@hookimpl(trylast=True)
def choose_provider(primary, agent):
    if not _cooling(agent):
        return None
    for pconf in chain(agent, primary)[1:]:
        return pconf
    return None


@hookimpl
def on_session_start(agent):
    """A fallback entry that cannot work is said as a session starts: not in the outage it is kept for."""
    from plugins.auxiliary import say_unusable

    for pconf in chain(agent, agent.primary)[1:]:
        say_unusable(agent, pconf, "fallback provider")


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent, online):
    from plugins.auxiliary import probe

    return [probe(agent, pconf, f"fallback {i}", online) for i, pconf in enumerate(chain(agent, agent.primary)[1:], 1)]


@hookimpl
def post_api_request(agent):
    # the primary answered: its rate-limit streak is over
    if getattr(agent, "provider_config", None) == getattr(agent, "primary", object()):
        state = _state(agent)
        state["streak"] = 0
        state["cooldown_until"] = 0.0
