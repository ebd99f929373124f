"""A scripted step rendered as one API's JSON body or SSE frames, and as
that API's error body."""

from __future__ import annotations

import json
import re
from typing import Any, Optional, Union

from plugins_providers.testserver.script import (CHAT, CREATED, IMAGES, MESSAGES, RESPONSES, SPEECH, TRANSCRIPTIONS,
                                                 Step)


def _split_words(text: str) -> list:
    parts = re.findall(r"\S+\s*|\s+", text)
    return parts or [text]


def _deltas(text: Union[str, list, None]) -> list:
    if text is None:
        return []
    if isinstance(text, (list, tuple)):
        return [str(t) for t in text]
    return _split_words(str(text)) if text else []


def _full(text: Union[str, list, None]) -> Optional[str]:
    if text is None:
        return None
    return "".join(_deltas(text)) if isinstance(text, (list, tuple)) else str(text)


def _calls(step: Step, n: int, prefix: str) -> list:
    """Normalise tool calls to ``(id, name, arguments_json)``."""
    out = []
    for i, call in enumerate(step.tool_calls):
        if isinstance(call, dict):
            name, args, cid = call["name"], call.get("arguments", {}), call.get("id")
        else:
            name, args = call[0], call[1] if len(call) > 1 else {}
            cid = call[2] if len(call) > 2 else None
        text = args if isinstance(args, str) else json.dumps(args)
        out.append((cid or f"{prefix}{n}_{i}", name, text))
    return out


def _arg_pieces(text: str) -> list:
    if len(text) < 2:
        return [text]
    mid = len(text) // 2
    return [text[:mid], text[mid:]]


def _total(*counts: Any) -> Any:
    """The sum of usage counts; a count that is no number is sent as it is (a provider's odd usage block)."""
    odd = [c for c in counts if not isinstance(c, int)]
    return odd[0] if odd else sum(counts)


def _usage(step: Step) -> dict:
    u = {"input": 10, "output": 5, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    u.update(step.usage or {})
    return {k: int(v) if isinstance(v, (int, float)) else v for k, v in u.items()}  # text is sent as it is


class _Frame:
    """One SSE frame; ``delta`` marks frames that carry a piece of content."""

    __slots__ = ("event", "data", "delta")

    def __init__(self, data: Any, event: Optional[str] = None, delta: bool = False):
        self.event, self.data, self.delta = event, data, delta

    def encode(self) -> bytes:
        data = self.data if isinstance(self.data, str) else json.dumps(self.data)
        head = f"event: {self.event}\n" if self.event else ""
        return f"{head}data: {data}\n\n".encode()


class _Chat:
    @staticmethod
    def body(step: Step, n: int, model: str, body: dict) -> dict:
        u = _usage(step)
        calls = _calls(step, n, "call_")
        msg: dict = {"role": "assistant", "content": _full(step.text)}
        if step.reasoning:
            msg["reasoning_content"] = step.reasoning
        if calls:
            msg["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": args}} for cid, name, args in calls
            ]
        finish = step.finish_reason or ("tool_calls" if calls else "stop")
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": CREATED,
            "model": model,
            "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
            "usage": _Chat.usage(u),
        }

    @staticmethod
    def usage(u: dict) -> dict:
        prompt = _total(u["input"], u["cache_read"], u["cache_write"])
        return {
            "prompt_tokens": prompt,
            "completion_tokens": u["output"],
            "total_tokens": _total(prompt, u["output"]),
            "prompt_tokens_details": {"cached_tokens": u["cache_read"], "cache_write_tokens": u["cache_write"]},
            "completion_tokens_details": {"reasoning_tokens": u["reasoning"]},
        }

    @staticmethod
    def frames(step: Step, n: int, model: str, body: dict) -> list:
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": CREATED, "model": model}

        def chunk(delta: dict, finish: Optional[str] = None, is_delta: bool = False) -> _Frame:
            return _Frame(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}]), delta=is_delta)

        out = [chunk({"role": "assistant", "content": ""})]
        for piece in _deltas(step.reasoning):
            out.append(chunk({"reasoning_content": piece}, is_delta=True))
        for piece in _deltas(step.text):
            out.append(chunk({"content": piece}, is_delta=True))
        calls = _calls(step, n, "call_")
        for i, (cid, name, args) in enumerate(calls):
            out.append(chunk({"tool_calls": [{"index": i, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}]}))
            for piece in _arg_pieces(args):
                out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}, is_delta=True))
        out.append(chunk({}, step.finish_reason or ("tool_calls" if calls else "stop")))
        if (body.get("stream_options") or {}).get("include_usage"):
            out.append(_Frame(dict(base, choices=[], usage=_Chat.usage(_usage(step)))))
        out.append(_Frame("[DONE]"))
        return out

    @staticmethod
    def error_frame(step: Step) -> _Frame:
        return _Frame({"error": {"message": step.message or "boom mid-stream", "type": step.error_kind, "param": None, "code": None}})


class _Responses:
    @staticmethod
    def usage(u: dict) -> dict:
        inp = _total(u["input"], u["cache_read"], u["cache_write"])
        return {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": u["cache_read"], "cache_write_tokens": u["cache_write"]},
            "output_tokens": u["output"],
            "output_tokens_details": {"reasoning_tokens": u["reasoning"]},
            "total_tokens": _total(inp, u["output"]),
        }

    @staticmethod
    def items(step: Step, n: int) -> list:
        items = []
        if step.reasoning:
            items.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{n}",
                    "summary": [{"type": "summary_text", "text": step.reasoning}],
                    "encrypted_content": f"enc-{n}",
                    "status": "completed",
                }
            )
        if step.text is not None:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{n}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": _full(step.text), "annotations": []}],
                }
            )
        for i, (cid, name, args) in enumerate(_calls(step, n, "call_")):
            items.append({"type": "function_call", "id": f"fc_{n}_{i}", "call_id": cid, "name": name, "arguments": args, "status": "completed"})
        return items

    @staticmethod
    def response(step: Step, n: int, model: str, body: dict, status: str, output: list, usage: bool) -> dict:
        resp = {
            "id": f"resp_{n}",
            "object": "response",
            "created_at": CREATED,
            "status": status,
            "model": model,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": body.get("tool_choice") or "auto",
            "tools": [],
        }
        if usage:
            resp["usage"] = _Responses.usage(_usage(step))
        if status == "incomplete":
            resp["incomplete_details"] = {"reason": "max_output_tokens"}
        return resp

    @staticmethod
    def end(step: Step) -> str:
        """The response's final status: ``finish_reason="length"`` is the API's cut at max_output_tokens."""
        return "incomplete" if step.finish_reason == "length" else "completed"

    @staticmethod
    def body(step: Step, n: int, model: str, body: dict) -> dict:
        return _Responses.response(step, n, model, body, _Responses.end(step), _Responses.items(step, n), True)

    @staticmethod
    def frames(step: Step, n: int, model: str, body: dict) -> list:
        seq = [0]
        out: list = []

        def ev(kind: str, is_delta: bool = False, **data: Any) -> None:
            out.append(_Frame(dict(type=kind, sequence_number=seq[0], **data), event=kind, delta=is_delta))
            seq[0] += 1

        ev("response.created", response=_Responses.response(step, n, model, body, "in_progress", [], False))
        ev("response.in_progress", response=_Responses.response(step, n, model, body, "in_progress", [], False))
        items = _Responses.items(step, n)
        for idx, item in enumerate(items):
            iid = item["id"]
            if item["type"] == "reasoning":
                ev("response.output_item.added", output_index=idx, item=dict(item, summary=[], status="in_progress"))
                part = {"type": "summary_text", "text": ""}
                ev("response.reasoning_summary_part.added", item_id=iid, output_index=idx, summary_index=0, part=part)
                for piece in _deltas(step.reasoning):
                    ev("response.reasoning_summary_text.delta", True, item_id=iid, output_index=idx, summary_index=0, delta=piece)
                ev("response.reasoning_summary_text.done", item_id=iid, output_index=idx, summary_index=0, text=step.reasoning)
                ev("response.reasoning_summary_part.done", item_id=iid, output_index=idx, summary_index=0, part=dict(part, text=step.reasoning))
            elif item["type"] == "message":
                text = item["content"][0]["text"]
                ev("response.output_item.added", output_index=idx, item=dict(item, status="in_progress", content=[]))
                part = {"type": "output_text", "text": "", "annotations": []}
                ev("response.content_part.added", item_id=iid, output_index=idx, content_index=0, part=part)
                for piece in _deltas(step.text):
                    ev("response.output_text.delta", True, item_id=iid, output_index=idx, content_index=0, delta=piece, logprobs=[])
                ev("response.output_text.done", item_id=iid, output_index=idx, content_index=0, text=text, logprobs=[])
                ev("response.content_part.done", item_id=iid, output_index=idx, content_index=0, part=dict(part, text=text))
            else:
                ev("response.output_item.added", output_index=idx, item=dict(item, arguments="", status="in_progress"))
                for piece in _arg_pieces(item["arguments"]):
                    ev("response.function_call_arguments.delta", True, item_id=iid, output_index=idx, delta=piece)
                ev("response.function_call_arguments.done", item_id=iid, output_index=idx, arguments=item["arguments"])
            ev("response.output_item.done", output_index=idx, item=item)
        status = _Responses.end(step)
        ev(f"response.{status}", response=_Responses.response(step, n, model, body, status, items, True))
        return out

    @staticmethod
    def error_frame(step: Step) -> _Frame:
        data = {"type": "error", "sequence_number": 999, "code": step.error_kind, "message": step.message or "boom mid-stream", "param": None}
        return _Frame(data, event="error")


class _Messages:
    @staticmethod
    def usage(u: dict, output: Optional[int] = None) -> dict:
        return {
            "input_tokens": u["input"],
            "output_tokens": u["output"] if output is None else output,
            "cache_read_input_tokens": u["cache_read"],
            "cache_creation_input_tokens": u["cache_write"],
            "output_tokens_details": {"thinking_tokens": u["reasoning"]},
        }

    @staticmethod
    def blocks(step: Step, n: int) -> list:
        blocks: list = []
        if step.reasoning:
            blocks.append({"type": "thinking", "thinking": step.reasoning, "signature": f"sig-{n}"})
        if step.text is not None:
            blocks.append({"type": "text", "text": _full(step.text)})
        for cid, name, args in _calls(step, n, "toolu_"):
            blocks.append({"type": "tool_use", "id": cid, "name": name, "input": json.loads(args or "{}")})
        return blocks

    @staticmethod
    def stop_reason(step: Step) -> str:
        if step.finish_reason:  # "length", as the other APIs say it, is Anthropic's "max_tokens"
            return {"length": "max_tokens"}.get(step.finish_reason, step.finish_reason)
        return "tool_use" if step.tool_calls else "end_turn"

    @staticmethod
    def body(step: Step, n: int, model: str, body: Optional[dict] = None) -> dict:
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": _Messages.blocks(step, n),
            "stop_reason": _Messages.stop_reason(step),
            "stop_sequence": None,
            "usage": _Messages.usage(_usage(step)),
        }

    @staticmethod
    def frames(step: Step, n: int, model: str, body: dict) -> list:
        out: list = []

        def ev(kind: str, is_delta: bool = False, **data: Any) -> None:
            out.append(_Frame(dict(type=kind, **data), event=kind, delta=is_delta))

        u = _usage(step)
        start = _Messages.body(step, n, model)
        start_usage = _Messages.usage(u, output=1)
        del start_usage["output_tokens_details"]  # thinking is counted with the final output, in message_delta
        start.update(content=[], stop_reason=None, usage=start_usage)
        ev("message_start", message=start)
        for idx, block in enumerate(_Messages.blocks(step, n)):
            if block["type"] == "thinking":
                ev("content_block_start", index=idx, content_block={"type": "thinking", "thinking": "", "signature": ""})
                for piece in _deltas(step.reasoning):
                    ev("content_block_delta", True, index=idx, delta={"type": "thinking_delta", "thinking": piece})
                ev("content_block_delta", index=idx, delta={"type": "signature_delta", "signature": block["signature"]})
            elif block["type"] == "text":
                ev("content_block_start", index=idx, content_block={"type": "text", "text": ""})
                if idx == 0:
                    ev("ping")
                for piece in _deltas(step.text):
                    ev("content_block_delta", True, index=idx, delta={"type": "text_delta", "text": piece})
            else:
                ev("content_block_start", index=idx, content_block=dict(block, input={}))
                for piece in _arg_pieces(json.dumps(block["input"])):
                    ev("content_block_delta", True, index=idx, delta={"type": "input_json_delta", "partial_json": piece})
            ev("content_block_stop", index=idx)
        ev("message_delta", delta={"stop_reason": _Messages.stop_reason(step), "stop_sequence": None}, usage={"output_tokens": u["output"], "output_tokens_details": {"thinking_tokens": u["reasoning"]}})
        ev("message_stop")
        return out

    @staticmethod
    def error_frame(step: Step) -> _Frame:
        return _Frame({"type": "error", "error": {"type": step.error_kind, "message": step.message or "Overloaded"}}, event="error")


class _Images:
    """OpenAI's image generation: the step's text is the image, as base64 (default: a 1x1 PNG)."""

    DOT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

    @staticmethod
    def body(step: Step, n: int, model: str, body: dict) -> dict:
        return {"created": CREATED, "data": [{"b64_json": step.text if isinstance(step.text, str) else _Images.DOT,
                                              "revised_prompt": body.get("prompt")}],
                "usage": {"input_tokens": 10, "output_tokens": 100, "total_tokens": 110}}


class _Speech:
    """OpenAI's speech: the step's text is the audio, as base64 (default: a tenth of a second of silence, WAV),
    sent as bytes of the type ``response_format`` names."""

    TYPES = {"mp3": "audio/mpeg", "wav": "audio/wav", "opus": "audio/ogg", "aac": "audio/aac", "flac": "audio/flac",
             "pcm": "audio/pcm"}

    @staticmethod
    def audio(step: Step, body: dict) -> "tuple[bytes, str]":
        import base64
        import io
        import wave

        if isinstance(step.text, str):
            data = base64.b64decode(step.text)
        else:
            out = io.BytesIO()
            with wave.open(out, "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(8000)
                w.writeframes(b"\0\0" * 800)
            data = out.getvalue()
        return data, _Speech.TYPES.get(str(body.get("response_format") or "mp3"), "application/octet-stream")


class _Transcription:
    """OpenAI's transcription: the step's text is what was said (default: "hello")."""

    @staticmethod
    def body(step: Step, n: int, model: str, body: dict) -> dict:
        return {"text": step.text if isinstance(step.text, str) else "hello"}


RENDER = {CHAT: _Chat, RESPONSES: _Responses, MESSAGES: _Messages, IMAGES: _Images, SPEECH: _Speech,
          TRANSCRIPTIONS: _Transcription}

# status -> (anthropic error type, openai type, openai code, default message)
_ERRORS = {
    400: ("invalid_request_error", "invalid_request_error", None, "Invalid request"),
    401: ("authentication_error", "invalid_request_error", "invalid_api_key", "Incorrect API key provided"),
    402: ("billing_error", "insufficient_quota", "insufficient_quota", "Your credit balance is too low"),
    403: ("permission_error", "invalid_request_error", None, "Permission denied"),
    404: ("not_found_error", "invalid_request_error", "model_not_found", "Not found"),
    408: ("timeout_error", "server_error", None, "Request timed out"),
    413: ("request_too_large", "invalid_request_error", None, "Request too large"),
    429: ("rate_limit_error", "requests", "rate_limit_exceeded", "Rate limit reached for requests"),
    500: ("api_error", "server_error", None, "The server had an error while processing your request."),
    503: ("api_error", "server_error", None, "Service unavailable"),
    529: ("overloaded_error", "server_error", None, "Overloaded"),
}


def error_body(path: str, step: Step, request_id: str) -> dict:
    a_type, o_type, o_code, default = _ERRORS.get(step.status, ("api_error", "server_error", None, f"HTTP {step.status}"))
    message = step.message or default
    if path == MESSAGES:
        return {"type": "error", "error": {"type": step.code or a_type, "message": message}, "request_id": request_id}
    return {"error": {"message": message, "type": o_type, "param": None, "code": step.code or o_code}}


# ---------------------------------------------------------------------------
# The server

