"""Sampling: a server asks hermes' model for an answer (``sampling/createMessage``).

Off unless the server's entry says ``sampling: {enabled: true}``. A request is
answered through the provider of the agent that called the server last (whose
tool call is usually the one in flight), counts against that agent's iteration
budget, and keeps to hermes-agent's limits: ``allowed_models`` (empty: any),
``max_tokens_cap``, ``max_rpm`` and ``timeout``. Sampling never runs tools."""

from __future__ import annotations

import collections
import concurrent.futures
import logging
import threading
import time
import weakref
from typing import Any

log = logging.getLogger("hermes.mcp")


class Sampler:
    def __init__(self, host):
        self.host = host
        self._recent: dict = collections.defaultdict(collections.deque)  # server -> times of its requests
        self._lock = threading.Lock()
        self.agents = weakref.WeakValueDictionary()  # server -> the agent that called it last (its calls sample)

    def __call__(self, server, params) -> Any:
        from mcp_types import INVALID_REQUEST, CreateMessageResult, ErrorData, TextContent

        settings = server.sampling
        refuse = lambda why: ErrorData(code=INVALID_REQUEST, message=f"hermes: {why}")  # noqa: E731
        agent = self.agents.get(server.name)
        if agent is None:
            return refuse("no agent is using this server now")
        with self._lock:
            recent, now = self._recent[server.name], time.monotonic()
            while recent and now - recent[0] > 60:
                recent.popleft()
            if len(recent) >= int(settings.get("max_rpm") or 10):
                return refuse(f"more than {int(settings.get('max_rpm') or 10)} sampling requests a minute")
            recent.append(now)
        from plugins import auxiliary

        aux = auxiliary.provider_config(agent.config, "mcp")  # hermes-agent's auxiliary.mcp: these calls' model
        base = auxiliary.joined(agent, aux) if aux else agent.provider_config
        allowed = [str(m) for m in settings.get("allowed_models") or []]
        hint = _hinted(params)  # the server's wish, taken only when allowed by name: it may not exist here
        model = str(settings.get("model") or "") or (hint if hint in allowed else "") or base.model
        if allowed and model not in allowed:
            return refuse(f"model {model!r} is not in this server's sampling.allowed_models")
        if not agent.budget.consume():
            return refuse("the agent's iteration budget is used up")
        cap = int(settings.get("max_tokens_cap") or 4096)
        messages = ([{"role": "system", "content": params.system_prompt}] if params.system_prompt else []) + \
            [{"role": m.role, "content": _text(m.content)} for m in params.messages]
        pconf = base if model == base.model else base.with_(model=model)
        pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hermes-mcp-sampling")
        future = pool.submit(agent.complete_once, messages, max_tokens=min(cap, params.max_tokens or cap),
                             provider_config=pconf, task=f"mcp_sampling:{server.name}")
        pool.shutdown(wait=False)
        timeout = float(settings.get("timeout") or 30)
        try:
            text = future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            return refuse(f"the model did not answer within {timeout:g}s (sampling.timeout)")
        except Exception as exc:  # noqa: BLE001 - the provider's failure, told to the server
            return refuse(f"the model call failed: {exc}")
        log.info("MCP server %s: sampling request answered by %s", server.name, model)
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=text), model=model,
                                   stop_reason="endTurn")


def _hinted(params) -> str:
    prefs = params.model_preferences
    for hint in (prefs.hints or []) if prefs is not None else []:
        if hint.name:
            return str(hint.name)
    return ""


def _text(content) -> str:
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(getattr(b, "text", None) or f"[{getattr(b, 'type', 'other')} content]" for b in blocks)
