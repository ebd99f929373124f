"""The ``codex_responses`` provider: ``openai.OpenAI().responses.create``.

History becomes Responses input items: system messages become
``instructions``; assistant tool calls become ``function_call`` items and tool
results ``function_call_output`` items, both keyed by the same ``call_id``
(the id the model gave the call is echoed back unchanged). Reasoning items
the model returned are kept on the assistant message under
``REASONING_KEY`` (through ``ModelResponse.extra``) and sent back, in place,
on the next request: reasoning models need them to continue a tool loop.

Requests are stateless (``store: false``); for reasoning models (o-series,
gpt-5, codex, or ``encrypted_reasoning: true`` in the provider options) the
encrypted reasoning content is requested so it can be carried across turns.
"""

from __future__ import annotations

import re
from typing import Any

from kernel import hookimpl
from kernel.types import ModelRequest, ModelResponse, ProviderError, normalize_usage
from plugins_providers.base import SDKProvider, counts, dump, emit_safe, get, text_of
from plugins_providers.errors import stream_event_error, truncated

NAME = "codex_responses"
REASONING_KEY = "codex_reasoning_items"
_REASONING_MODELS = re.compile(r"^(o\d|gpt-5|codex|.*-codex)", re.I)


def _user_content(content: Any) -> Any:
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") in ("text", "input_text"):
                parts.append({"type": "input_text", "text": part.get("text", "")})
            elif isinstance(part, dict) and part.get("type") == "image_url":
                url = part.get("image_url")
                parts.append({"type": "input_image", "image_url": url.get("url") if isinstance(url, dict) else url})
            elif isinstance(part, dict):
                parts.append(part)
        return parts
    return text_of(content)


def convert_messages(messages: list) -> tuple:
    """(instructions, input items)."""
    instructions: list = []
    items: list = []
    for msg in messages:
        role = msg.get("role")
        if role == "system":
            instructions.append(text_of(msg.get("content")))
        elif role == "user":
            items.append({"role": "user", "content": _user_content(msg.get("content"))})
        elif role == "assistant":
            for item in msg.get(REASONING_KEY) or []:
                items.append({k: v for k, v in item.items() if k != "status"})
            text = text_of(msg.get("content"))
            if text:
                items.append({"role": "assistant", "content": text})
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {}
                items.append(
                    {"type": "function_call", "call_id": call.get("id", ""), "name": fn.get("name", ""), "arguments": fn.get("arguments") or "{}"}
                )
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": msg.get("tool_call_id", ""), "output": text_of(msg.get("content"))})
    return "\n\n".join(i for i in instructions if i), items


def convert_tools(tools: list) -> list:
    return [
        {
            "type": "function",
            "name": t["name"],
            "description": t.get("description", ""),
            "parameters": t.get("parameters") or {"type": "object", "properties": {}},
        }
        for t in tools
    ]


@counts
def usage_of(usage: Any) -> dict:
    if usage is None:
        return normalize_usage()
    details = get(usage, "input_tokens_details")
    cached = get(details, "cached_tokens", 0)
    written = get(details, "cache_write_tokens", 0)
    return normalize_usage(
        input_tokens=max(0, get(usage, "input_tokens", 0) - cached - written),
        output_tokens=get(usage, "output_tokens", 0),
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=get(get(usage, "output_tokens_details"), "reasoning_tokens", 0),
    )


def response_of(resp: Any, incomplete: bool = False) -> ModelResponse:
    """A finished ``Response`` in internal form."""
    text: list = []
    thought: list = []
    calls: list = []
    reasoning_items: list = []
    for item in resp.output or []:
        kind = get(item, "type")
        if kind == "message":
            for part in get(item, "content") or []:
                if get(part, "type") == "output_text":
                    text.append(get(part, "text", ""))
        elif kind == "function_call":
            calls.append({"id": item.call_id, "type": "function", "function": {"name": item.name, "arguments": item.arguments or "{}"}})
        elif kind == "reasoning":
            thought.extend(get(s, "text", "") for s in get(item, "summary") or [])
            thought.extend(get(c, "text", "") for c in get(item, "content") or [])
            reasoning_items.append(dump(item))
    finish = "length" if incomplete else ("tool_calls" if calls else "stop")
    return ModelResponse(
        content="".join(text) if text or not calls else None,
        tool_calls=calls,
        reasoning="\n".join(t for t in thought if t) or None,
        usage=usage_of(resp.usage),
        finish_reason=finish,
        model=resp.model,
        extra={REASONING_KEY: reasoning_items} if reasoning_items else {},
    )


class ResponsesProvider(SDKProvider):
    api_mode = NAME
    sdk = "openai"
    options_read = ("reasoning_effort", "temperature", "top_p", "extra_body", "extra_headers", "encrypted_reasoning",
                    "max_tokens", "service_tier")

    def _build_client(self, key: str) -> Any:
        import openai

        return openai.OpenAI(**self.client_kwargs(key), **self.http_client(openai))

    def kwargs(self, request: ModelRequest) -> dict:
        instructions, items = convert_messages(request.messages)
        model = self.model(request)
        kwargs: dict = {"model": model, "input": items, "store": False}
        if instructions:
            kwargs["instructions"] = instructions
        if request.tools:
            kwargs["tools"] = convert_tools(request.tools)
            kwargs["tool_choice"] = request.tool_choice or "auto"
        if limit := self.max_tokens(request):
            kwargs["max_output_tokens"] = limit
        encrypted = self.options.get("encrypted_reasoning")
        if encrypted or (encrypted is None and _REASONING_MODELS.match(model)):
            kwargs["include"] = ["reasoning.encrypted_content"]
        given = self.sampling(request, ("reasoning_effort", "temperature", "top_p", "extra_body", "extra_headers",
                                        "service_tier"))
        if "reasoning_effort" in given:
            kwargs["reasoning"] = {"effort": given.pop("reasoning_effort"), "summary": "auto"}
        kwargs.update(given)
        self.with_reasoning(request, kwargs, "reasoning")  # the provider option is the user's word
        if request.stream:
            kwargs["stream"] = True
        return kwargs

    def _complete(self, request: ModelRequest, emit: Any) -> ModelResponse:
        kwargs = self.kwargs(request)
        if not request.stream:
            resp = self.client.responses.create(**kwargs, timeout=self.answer_timeout())
            return response_of(resp, incomplete=get(resp, "status") == "incomplete")
        return self._from_stream(self.client.responses.create(**kwargs), request, emit)

    def _from_stream(self, stream: Any, request: ModelRequest, emit: Any) -> ModelResponse:
        with stream:
            for event in self.events(stream):
                if request.cancelled:
                    return ModelResponse(content=None, finish_reason="cancelled")
                kind = event.type
                if kind == "response.output_text.delta":
                    emit_safe(emit, "delta", event.delta)
                elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                    emit_safe(emit, "reasoning", event.delta)
                elif kind == "response.output_item.added" and get(event.item, "type") == "function_call":
                    emit_safe(emit, "tool_call", event.item.name, event.item.call_id)
                elif kind in ("response.completed", "response.incomplete"):
                    return response_of(event.response, incomplete=kind == "response.incomplete")
                elif kind == "response.failed":
                    raise self._failed(get(get(event.response, "error"), "message", "") or "response failed", get(get(event.response, "error"), "code", ""))
                elif kind == "error":
                    raise self._failed(get(event, "message", "") or "error event", get(event, "code", ""))
        raise truncated(self.label, "response.completed")

    def _failed(self, message: str, code: str) -> ProviderError:
        return stream_event_error(message, code, code, provider=self.label, secrets=[self._key])


def factory(config):
    return ResponsesProvider(config)


@hookimpl
def register_model_providers(register):
    register(NAME, factory, description="OpenAI Responses API (input items, reasoning items carried across turns)")
