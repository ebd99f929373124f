"""The ``chat_completions`` provider: ``openai.OpenAI().chat.completions.create``.

Serves every OpenAI-compatible endpoint (OpenAI, OpenRouter, DeepSeek, local
servers such as Ollama, llama.cpp or vLLM) through ``base_url``. Internal
messages are already OpenAI-style; only the keys the API knows are sent.
Reasoning arrives as ``reasoning_content`` (DeepSeek, vLLM) or ``reasoning``
(OpenRouter) and is kept on the assistant message, not sent back.
"""

from __future__ import annotations

from typing import Any

from kernel import hookimpl
from kernel.types import ModelRequest, ModelResponse, normalize_usage
from plugins_providers.base import SDKProvider, counts, emit_safe, get
from plugins_providers.defaults import host_of
from plugins_providers.errors import truncated

NAME = "chat_completions"
_MESSAGE_KEYS = {
    "system": ("role", "content", "name"),
    "user": ("role", "content", "name"),
    "assistant": ("role", "content", "tool_calls", "name"),
    "tool": ("role", "content", "tool_call_id"),
}


def convert_messages(messages: list) -> list:
    out = []
    for msg in messages:
        keys = _MESSAGE_KEYS.get(msg.get("role"), ("role", "content"))
        item = {k: msg[k] for k in keys if k in msg}
        if item.get("role") == "assistant" and not item.get("tool_calls"):
            item.pop("tool_calls", None)
            if item.get("content") is None:
                item["content"] = ""  # some servers reject a null content without tool calls
        if item.get("role") == "tool" and not isinstance(item.get("content"), (str, list)):
            item["content"] = "" if item.get("content") is None else str(item["content"])
        out.append(item)
    return out


def convert_tools(tools: list) -> list:
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


@counts
def usage_of(usage: Any) -> dict:
    if usage is None:
        return normalize_usage()
    prompt = get(usage, "prompt_tokens", 0)
    details = get(usage, "prompt_tokens_details")
    cached = get(details, "cached_tokens", 0)
    written = get(details, "cache_write_tokens", 0)
    return normalize_usage(
        input_tokens=max(0, prompt - cached - written),
        output_tokens=get(usage, "completion_tokens", 0),
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=get(get(usage, "completion_tokens_details"), "reasoning_tokens", 0),
    )


def _reasoning(obj: Any) -> str:
    return get(obj, "reasoning_content") or get(obj, "reasoning") or ""


class ChatCompletionsProvider(SDKProvider):
    api_mode = NAME
    sdk = "openai"
    options_read = ("temperature", "reasoning_effort", "top_p", "extra_body", "extra_headers", "stream_usage",
                    "max_tokens", "service_tier")

    def _build_client(self, key: str) -> Any:
        import openai

        return openai.OpenAI(**self.client_kwargs(key), **self.http_client(openai))

    def kwargs(self, request: ModelRequest) -> dict:
        kwargs: dict = {"model": self.model(request), "messages": convert_messages(request.messages)}
        if request.tools:
            kwargs["tools"] = convert_tools(request.tools)
            kwargs["tool_choice"] = request.tool_choice or "auto"
        if limit := self.max_tokens(request):
            # api.openai.com wants the newer name; compatible servers know the old one
            name = "max_completion_tokens" if host_of(self.target.base_url) == "api.openai.com" else "max_tokens"
            kwargs[name] = limit
        kwargs.update(self.sampling(request, ("temperature", "reasoning_effort", "top_p", "extra_body",
                                              "extra_headers", "service_tier")))
        self.with_reasoning(request, kwargs, "reasoning_effort")  # the provider option is the user's word
        if request.stream:
            kwargs["stream"] = True
            if self.options.get("stream_usage", True):
                kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    def _complete(self, request: ModelRequest, emit: Any) -> ModelResponse:
        kwargs = self.kwargs(request)
        if not request.stream:
            return self._from_completion(self.client.chat.completions.create(**kwargs, timeout=self.answer_timeout()))
        return self._from_stream(self.client.chat.completions.create(**kwargs), request, emit)

    def _from_completion(self, completion: Any) -> ModelResponse:
        choice = completion.choices[0] if completion.choices else None
        msg = get(choice, "message")
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments or "{}"}}
            for c in (get(msg, "tool_calls") or [])
            if get(c, "function") is not None
        ]
        return ModelResponse(
            content=get(msg, "content"),
            tool_calls=calls,
            reasoning=_reasoning(msg) or None,
            usage=usage_of(completion.usage),
            finish_reason=get(choice, "finish_reason"),
            model=completion.model,
        )

    def _from_stream(self, stream: Any, request: ModelRequest, emit: Any) -> ModelResponse:
        text: list = []
        thought: list = []
        calls: dict = {}  # index -> {"id", "name", "args": [..]}
        finish = None
        usage = None
        model = None
        with stream:
            for chunk in self.events(stream):
                if request.cancelled:
                    finish = "cancelled"
                    break
                model = chunk.model or model
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None:
                        piece = _reasoning(delta)
                        if piece:
                            thought.append(piece)
                            emit_safe(emit, "reasoning", piece)
                        if delta.content:
                            text.append(delta.content)
                            emit_safe(emit, "delta", delta.content)
                        for tc in delta.tool_calls or []:
                            slot = calls.setdefault(tc.index, {"id": "", "name": "", "args": [], "announced": False})
                            fn = tc.function
                            if tc.id:
                                slot["id"] = tc.id
                            if fn is not None and fn.name:
                                slot["name"] += fn.name
                            if fn is not None and fn.arguments:
                                slot["args"].append(fn.arguments)
                            if slot["name"] and slot["id"] and not slot["announced"]:
                                slot["announced"] = True
                                emit_safe(emit, "tool_call", slot["name"], slot["id"])
                    if choice.finish_reason:
                        finish = choice.finish_reason
        if finish is None:
            raise truncated(self.label, "its finish_reason")
        tool_calls = [
            {"id": s["id"] or f"call_{i}", "type": "function", "function": {"name": s["name"], "arguments": "".join(s["args"]) or "{}"}}
            for i, s in sorted(calls.items())
        ]
        return ModelResponse(
            content="".join(text) if text or not tool_calls else None,
            tool_calls=tool_calls,
            reasoning="".join(thought) or None,
            usage=usage_of(usage),
            finish_reason=finish,
            model=model,
        )


def factory(config):
    return ChatCompletionsProvider(config)


@hookimpl
def register_model_providers(register):
    register(NAME, factory, description="OpenAI Chat Completions and compatible endpoints (OpenRouter, Ollama, vLLM, ...)")
