"""The scripted provider: answers from a script instead of a model.

For the loop's own tests, for plugin authors' tests and for trying hermes
without an API key. In-process, build one with :func:`scripted_plugin`; from
the command line, point ``--base-url`` at a JSON file holding a list of steps::

    hermes run --api-mode scripted --base-url script.json "hi"

A step is a string (the final answer), or a mapping with ``content``,
``tool_calls`` (``[[name, {args}], ...]`` or OpenAI-shaped calls),
``reasoning``, ``usage``, ``finish_reason`` (``length``: cut at the output
limit), ``delay`` (seconds to wait, for interrupt tests) and
``error`` (``{"reason": ..., "message": ..., "status_code": ...}``: raise a
ProviderError). In-process steps may also be ``ModelResponse`` objects,
exceptions (raised) or callables ``request -> step``. When the script runs out
the provider answers ``"(script finished)"``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterable

from kernel import hookimpl
from kernel.protocols import Provider
from kernel.types import CONFIG, ModelRequest, ModelResponse, ProviderError, normalize_usage

NAME = "scripted"


def _tool_calls(raw: Any) -> list:
    calls = []
    for item in raw or []:
        if isinstance(item, dict) and "function" in item:
            fn = dict(item["function"])
            if not isinstance(fn.get("arguments"), str):
                fn["arguments"] = json.dumps(fn.get("arguments") or {})
            calls.append({"id": item.get("id") or f"call_{uuid.uuid4().hex[:10]}", "type": "function", "function": fn})
            continue
        name, args = item[0], item[1] if len(item) > 1 else {}
        arguments = args if isinstance(args, str) else json.dumps(args)
        call_id = item[2] if len(item) > 2 else f"call_{uuid.uuid4().hex[:10]}"
        calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
    return calls


def to_response(step: Any, request: ModelRequest) -> ModelResponse:
    """Turn one script step into a ModelResponse (or raise its error)."""
    if callable(step) and not isinstance(step, (ModelResponse, BaseException)):
        step = step(request)
    if isinstance(step, BaseException):
        raise step
    if isinstance(step, ModelResponse):
        return step
    if isinstance(step, str):
        step = {"content": step}
    if not isinstance(step, dict):
        raise ProviderError(f"bad script step: {step!r:.60}", reason=CONFIG, provider=NAME)
    if step.get("delay"):
        deadline = time.monotonic() + float(step["delay"])
        while time.monotonic() < deadline and not request.cancelled:
            time.sleep(0.005)
    if step.get("error"):
        err = step["error"]
        raise ProviderError(
            err.get("message", "scripted failure"), reason=err.get("reason", "server"),
            status_code=err.get("status_code"), retry_after=err.get("retry_after"), provider=NAME,
        )
    if not isinstance(step.get("content"), (str, type(None))):
        raise ProviderError(f"bad script step: content must be a string, got {step.get('content')!r:.60}",
                            reason=CONFIG, provider=NAME)
    usage = step.get("usage") or {}
    return ModelResponse(
        content=step.get("content"),
        tool_calls=_tool_calls(step.get("tool_calls")),
        reasoning=step.get("reasoning"),
        usage=normalize_usage(**usage) if usage else normalize_usage(input_tokens=10, output_tokens=5),
        finish_reason=step.get("finish_reason") or ("tool_calls" if step.get("tool_calls") else "stop"),
        model=request.model,
    )


class ScriptedProvider(Provider):
    """Plays a script; records every request in ``requests``."""

    def __init__(self, steps: Iterable[Any] = ()):
        self.steps = list(steps)
        self.requests: list = []
        self._lock = threading.Lock()

    def complete(self, request: ModelRequest, emit) -> ModelResponse:
        with self._lock:
            self.requests.append(request)
            step = self.steps.pop(0) if self.steps else "(script finished)"
        response = to_response(step, request)
        if request.stream:
            if response.reasoning:
                emit.reasoning(response.reasoning)
            if response.content:
                for piece in _pieces(response.content):
                    if request.cancelled:
                        break
                    emit.delta(piece)
            for call in response.tool_calls:
                emit.tool_call(call["function"]["name"], call["id"])
        return response


def _pieces(text: str, size: int = 16) -> list:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _from_file(config) -> ScriptedProvider:
    path = Path(config.base_url) if config.base_url else None
    if path is None or not path.is_file():
        raise ProviderError(
            "the scripted provider needs --base-url pointing at a JSON script file", reason=CONFIG, provider=NAME
        )
    try:
        steps = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ProviderError(f"cannot read script {path}: {exc}", reason=CONFIG, provider=NAME) from None
    if not isinstance(steps, list):
        raise ProviderError(f"script {path} must hold a JSON list of steps", reason=CONFIG, provider=NAME)
    return ScriptedProvider(steps)


@hookimpl
def register_model_providers(register):
    register(NAME, _from_file, description="answers from a JSON script (tests, demos)")


class scripted_plugin:
    """An in-process plugin object serving one :class:`ScriptedProvider`::

        plugin = scripted_plugin(["hello"])
        host = PluginHost.from_objects([plugin], config)
        plugin.provider.requests  # what the loop sent
    """

    __name__ = "scripted"

    def __init__(self, steps: Iterable[Any] = ()):
        self.provider = ScriptedProvider(steps)

    @hookimpl
    def register_model_providers(self, register):
        register(NAME, lambda config: self.provider, description="in-process script")
