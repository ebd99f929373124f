"""The ``anthropic_messages`` provider: ``anthropic.Anthropic().messages.create``.

Conversion from the internal OpenAI-style history, at this edge only:

* system messages are split out into ``system``;
* assistant tool calls become ``tool_use`` blocks, tool results
  ``tool_result`` blocks in a user turn; consecutive tool results (a parallel
  batch), and any user message that follows them, merge into one user turn,
  as do consecutive user messages (the API wants strict alternation);
* thinking blocks (with their signatures) the model returned are kept on the
  assistant message under ``THINKING_KEY`` and sent back in place: Anthropic
  requires them when a tool loop continues with extended thinking;
* prompt-cache markers go on the system prompt and the last 3 messages when
  talking to Anthropic itself (``api.anthropic.com``) or when the provider
  option ``prompt_cache`` is true.

SDK 2.x notes: ``temperature``/``top_p`` are no longer keywords of
``messages.create`` (they go through ``extra_body``), and the key is sent as
``Authorization: Bearer``, which Anthropic and compatible endpoints accept.
"""

from __future__ import annotations

import json
from typing import Any

from kernel import hookimpl
from kernel.types import ModelRequest, ModelResponse, normalize_usage
from plugins_providers.base import SDKProvider, counts, dump, emit_safe, get, parse_args, text_of, warn_once
from plugins_providers.defaults import host_of
from plugins_providers.errors import truncated

NAME = "anthropic_messages"
THINKING_KEY = "anthropic_thinking_blocks"
DEFAULT_MAX_TOKENS = 8192
CACHE = {"type": "ephemeral"}
MAX_IMAGE_BASE64 = 5 * 2**20  # the Messages API's limit of one image, on its base64 text (a 3.75 MB file)
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter"}


def _blocks(content: Any) -> list:
    """User content as Anthropic blocks (text parts and images)."""
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                part = {"type": "text", "text": part}
            if not isinstance(part, dict):
                continue
            if part.get("type") in ("text", "input_text"):
                if part.get("text"):
                    out.append({"type": "text", "text": part["text"]})
            elif part.get("type") == "image_url":
                url = part.get("image_url")
                url = url.get("url") if isinstance(url, dict) else url
                if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
                    media, data = url[5:].split(";base64,", 1)
                    out.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
                               if len(data) <= MAX_IMAGE_BASE64 else _left_out(len(data)))
                elif isinstance(url, str):
                    out.append({"type": "image", "source": {"type": "url", "url": url}})
            else:
                out.append(part)
        return out
    text = text_of(content)
    return [{"type": "text", "text": text}] if text else []


def _left_out(size: int) -> dict:
    """What Claude reads instead of an image over its limit: sent, the API would refuse this request and every later
    one of the conversation (the history keeps the image; another provider still gets it)."""
    megabytes = f"{size / 2**20:.1f} MB"
    warn_once((NAME, "image", size), "an image of %s (base64) is not sent to the Messages API, which takes %d MB at "
              "most; the model is told it was left out", megabytes, MAX_IMAGE_BASE64 // 2**20)
    return {"type": "text", "text": f"[an image the user attached was left out: {megabytes} as base64, over the "
                                    f"{MAX_IMAGE_BASE64 // 2**20} MB this API takes; ask for a smaller one]"}


def convert_messages(messages: list) -> tuple:
    """(system blocks, messages) with the merging rules of the module docstring."""
    system: list = []
    out: list = []

    def add(role: str, blocks: list) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    for msg in messages:
        role = msg.get("role")
        if role == "system":
            text = text_of(msg.get("content"))
            if text:
                system.append({"type": "text", "text": text})
        elif role == "user":
            add("user", _blocks(msg.get("content")) or [{"type": "text", "text": "(empty)"}])
        elif role == "tool":
            result = text_of(msg.get("content"))
            add("user", [{"type": "tool_result", "tool_use_id": msg.get("tool_call_id", ""), "content": result or "(no output)"}])
        elif role == "assistant":
            blocks = [dict(b) for b in msg.get(THINKING_KEY) or []]
            text = text_of(msg.get("content"))
            if text:
                blocks.append({"type": "text", "text": text})
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {}
                blocks.append({"type": "tool_use", "id": call.get("id", ""), "name": fn.get("name", ""), "input": parse_args(fn.get("arguments"))})
            add("assistant", blocks or [{"type": "text", "text": "(empty)"}])
    if out and out[0]["role"] != "user":  # the API wants a user turn first (e.g. after compression)
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(continued)"}]})
    return system, out


def add_cache_markers(system: list, messages: list, ttl: str = "5m") -> None:
    """Mark the system prompt and the last 3 messages (4 breakpoints, the API's limit), kept ``ttl`` (5m or 1h)."""
    marker = {**CACHE, "ttl": ttl} if ttl == "1h" else CACHE
    if system:
        system[-1]["cache_control"] = dict(marker)
    for msg in messages[-3:]:
        blocks = msg["content"]
        for block in reversed(blocks):
            if block.get("type") not in ("thinking", "redacted_thinking"):
                block["cache_control"] = dict(marker)
                break


def convert_tools(tools: list) -> list:
    return [
        {"name": t["name"], "description": t.get("description", ""), "input_schema": t.get("parameters") or {"type": "object", "properties": {}}}
        for t in tools
    ]


@counts
def usage_of(usage: Any, output: Any = None) -> dict:
    if usage is None:
        return normalize_usage()
    return normalize_usage(
        input_tokens=get(usage, "input_tokens", 0),
        output_tokens=get(usage, "output_tokens", 0) if output is None else output,
        cache_read_tokens=get(usage, "cache_read_input_tokens", 0),
        cache_write_tokens=get(usage, "cache_creation_input_tokens", 0),
        reasoning_tokens=get(get(usage, "output_tokens_details"), "thinking_tokens", 0),
    )


def response_of(blocks: list, usage: dict, stop_reason: Any, model: Any) -> ModelResponse:
    text: list = []
    thought: list = []
    calls: list = []
    thinking_blocks: list = []
    for block in blocks:
        kind = get(block, "type")
        if kind == "text":
            text.append(get(block, "text", ""))
        elif kind == "tool_use":
            calls.append({"id": get(block, "id"), "type": "function", "function": {"name": get(block, "name"), "arguments": json.dumps(get(block, "input", {}))}})
        elif kind in ("thinking", "redacted_thinking"):
            thinking_blocks.append(dump(block))
            if kind == "thinking":
                thought.append(get(block, "thinking", ""))
    return ModelResponse(
        content="".join(text) if text or not calls else None,
        tool_calls=calls,
        reasoning="".join(thought) or None,
        usage=usage,
        finish_reason=_FINISH.get(stop_reason, stop_reason),
        model=model,
        extra={THINKING_KEY: thinking_blocks} if thinking_blocks else {},
    )


class AnthropicMessagesProvider(SDKProvider):
    api_mode = NAME
    sdk = "anthropic"
    options_read = ("temperature", "top_p", "top_k", "extra_body", "extra_headers", "max_tokens", "thinking_budget",
                    "prompt_cache")

    def _build_client(self, key: str) -> Any:
        import anthropic

        return anthropic.Anthropic(**self.client_kwargs(key), **self.http_client(anthropic))

    def caching(self) -> bool:
        option = self.options.get("prompt_cache")
        if option is not None:
            return bool(option)
        return host_of(self.target.base_url) in ("api.anthropic.com", "")

    def kwargs(self, request: ModelRequest) -> dict:
        system, messages = convert_messages(request.messages)
        if self.caching():
            add_cache_markers(system, messages, request.extra.get("cache_ttl") or "5m")
        kwargs: dict = {
            "model": self.model(request),
            "messages": messages,
            "max_tokens": self.max_tokens(request) or DEFAULT_MAX_TOKENS,
        }
        if system:
            kwargs["system"] = system
        if request.tools:
            kwargs["tools"] = convert_tools(request.tools)
            kwargs["tool_choice"] = {"type": "none" if request.tool_choice == "none" else "auto"}
        budget = request.extra.get("thinking_budget") or self.options.get("thinking_budget")
        if budget:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": int(budget)}
        given = self.sampling(request, ("extra_body", "temperature", "top_p", "top_k", "extra_headers"))
        extra_body = {**dict(given.pop("extra_body", None) or {}),  # temperature ... are not keywords in SDK 2.x
                      **{key: given.pop(key) for key in ("temperature", "top_p", "top_k") if key in given}}
        if extra_body:
            kwargs["extra_body"] = extra_body
        kwargs.update(given)
        self.with_reasoning(request, kwargs, "thinking")  # the provider option is the user's word
        if request.extra.get("speed"):  # agent.service_tier: fast, on Opus 4.6 (plugins_providers.serving)
            from plugins_providers.serving import FAST_BETA

            kwargs["extra_body"] = {**kwargs.get("extra_body", {}), "speed": request.extra["speed"]}
            headers = dict(kwargs.get("extra_headers") or {})
            betas = [b for b in str(headers.get("anthropic-beta", "")).split(",") if b.strip()]
            kwargs["extra_headers"] = {**headers, "anthropic-beta": ",".join([*betas, FAST_BETA])}
        if "thinking" in kwargs:
            self._thinking_sampling(kwargs)
        if request.stream:
            kwargs["stream"] = True
        return kwargs

    def _thinking_sampling(self, kwargs: dict) -> None:
        """Leave out what Claude refuses beside thinking (a temperature, a top_k), said once: sent, every request of
        the run would fail; thinking is what agent.reasoning_effort or thinking_budget asked for."""
        from plugins_providers.reasoning import refused_with_thinking

        for key in refused_with_thinking(kwargs.get("extra_body") or {}):
            kwargs["extra_body"].pop(key)
            warn_once((self.api_mode, "thinking", key), "the provider option '%s' is not sent while %s thinks "
                      "(agent.reasoning_effort or thinking_budget): the API refuses the two together", key,
                      kwargs["model"])
        if kwargs.get("extra_body") == {}:
            del kwargs["extra_body"]

    def _complete(self, request: ModelRequest, emit: Any) -> ModelResponse:
        kwargs = self.kwargs(request)
        if not request.stream:
            msg = self.client.messages.create(**kwargs, timeout=self.answer_timeout())
            return response_of(msg.content, usage_of(msg.usage), msg.stop_reason, msg.model)
        return self._from_stream(self.client.messages.create(**kwargs), request, emit)

    def _from_stream(self, stream: Any, request: ModelRequest, emit: Any) -> ModelResponse:
        blocks: dict = {}  # index -> block dict being assembled
        args: dict = {}  # index -> partial JSON pieces
        start_usage = None
        output_tokens = None
        delta_usage = None
        stop_reason = None
        model = None
        done = False
        with stream:
            for event in self.events(stream):
                if request.cancelled:
                    return ModelResponse(content=None, finish_reason="cancelled")
                kind = event.type
                if kind == "message_start":
                    start_usage = event.message.usage
                    model = event.message.model
                elif kind == "content_block_start":
                    block = dump(event.content_block)
                    blocks[event.index] = block
                    if block.get("type") == "tool_use":
                        args[event.index] = []
                        emit_safe(emit, "tool_call", block.get("name", ""), block.get("id", ""))
                elif kind == "content_block_delta":
                    delta = event.delta
                    block = blocks.setdefault(event.index, {"type": "text", "text": ""})
                    if delta.type == "text_delta":
                        block["text"] = block.get("text", "") + delta.text
                        emit_safe(emit, "delta", delta.text)
                    elif delta.type == "thinking_delta":
                        block["thinking"] = block.get("thinking", "") + delta.thinking
                        emit_safe(emit, "reasoning", delta.thinking)
                    elif delta.type == "signature_delta":
                        block["signature"] = delta.signature
                    elif delta.type == "input_json_delta":
                        args.setdefault(event.index, []).append(delta.partial_json)
                elif kind == "message_delta":
                    stop_reason = get(event.delta, "stop_reason") or stop_reason
                    delta_usage = event.usage
                    output_tokens = get(event.usage, "output_tokens", output_tokens)
                elif kind == "message_stop":
                    done = True
                    break
        if not done:
            raise truncated(self.label, "message_stop")
        for index, pieces in args.items():
            blocks[index]["input"] = parse_args("".join(pieces) or "{}")
        usage = usage_of(start_usage, output_tokens)
        # message_delta may carry updated cache counts (cumulative); prefer them
        for key, field in (("cache_read_tokens", "cache_read_input_tokens"), ("cache_write_tokens", "cache_creation_input_tokens")):
            value = get(delta_usage, field)
            if value:
                usage[key] = value
        # thinking tokens come with the final (cumulative) output count
        thinking = get(get(delta_usage, "output_tokens_details"), "thinking_tokens")
        if thinking:
            usage["reasoning_tokens"] = thinking
        return response_of([blocks[i] for i in sorted(blocks)], _final_usage(usage), stop_reason, model)


@counts
def _final_usage(usage: dict) -> dict:
    return normalize_usage(**{k: usage[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                     "cache_write_tokens", "reasoning_tokens")})


def factory(config):
    return AnthropicMessagesProvider(config)


@hookimpl
def register_model_providers(register):
    register(NAME, factory, description="Anthropic Messages API (tool_use blocks, prompt caching, thinking)")
