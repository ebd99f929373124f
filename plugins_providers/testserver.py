"""A loopback server that speaks the three model wire protocols, for tests.

It answers ``POST /v1/chat/completions`` (OpenAI Chat Completions),
``POST /v1/responses`` (OpenAI Responses) and ``POST /v1/messages``
(Anthropic Messages), streamed (SSE, chosen by ``"stream": true`` in the body,
as the SDKs do) or not. Replies come from a script queue; when the queue is
empty the server answers with ``default`` (the text ``"ok"``). Every request
is recorded. Only the standard library is used, so the real SDKs talk to it
over real sockets: parsing, streaming, retries and timeouts are all exercised.

Usage::

    from plugins_providers.testserver import WireServer, reply, error, drop, cut, stream_error, garbage

    with WireServer() as server:            # or server = WireServer().start() ... server.stop()
        server.push(reply(tool_calls=[("get_weather", {"city": "Paris"})]),
                    error(429, retry_after=1),
                    reply("It is sunny.", reasoning="Looked it up", usage={"input": 20, "output": 4}))
        client = openai.OpenAI(base_url=server.openai_url, api_key="k", max_retries=0)
        ...
        server.requests[0].body["messages"]   # what the client sent
        server.requests[0].headers["x-stainless-retry-count"]

Script steps (``Step``, built with the helpers below):

* ``reply(text, tool_calls=[(name, args) | {"name", "arguments", "id"}], reasoning=, usage=)``:
  ``usage`` is neutral ``{"input", "output", "cache_read", "cache_write", "reasoning"}``
  and is rendered in each API's own spelling. ``text`` may be a list of
  stream deltas; otherwise it is split at word boundaries.
* ``error(status, retry_after=, retry_after_ms=, message=, code=, should_retry=)``: a
  provider-shaped error body (OpenAI or Anthropic, by path) with the headers.
* ``drop()``: the connection is closed before any header is sent.
* ``cut(after=N, chunked=False, **reply)``: a stream that stops after N delta
  frames without its final event (close-delimited EOF, or a chunked body cut
  in the middle of a chunk when ``chunked=True``). Non-streamed requests get
  half a JSON body.
* ``stream_error(after=N, kind="overloaded_error", **reply)``: an in-stream
  error event after N delta frames.
* ``garbage(after=N, **reply)``: a malformed (non-JSON) frame after N delta frames.
* every step takes ``delay=`` (seconds before the headers: use with a client
  timeout to get a timeout) and ``frame_delay=`` (seconds between SSE frames).
* a callable ``request -> Step`` is called with the ``RecordedRequest``.

Set ``WireServer(api_key="k")`` to require ``Authorization: Bearer k`` (or
``x-api-key: k``); a wrong key gets a 401.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"
PATHS = (CHAT, RESPONSES, MESSAGES)
CREATED = 1700000000


# ---------------------------------------------------------------------------
# Script steps


@dataclass
class Step:
    """One scripted answer (see the module docstring for the helpers)."""

    text: Union[str, list, None] = None
    tool_calls: list = field(default_factory=list)
    reasoning: Optional[str] = None
    usage: Optional[dict] = None
    status: int = 200
    retry_after: Union[float, str, None] = None
    retry_after_ms: Optional[int] = None
    message: Optional[str] = None
    code: Optional[str] = None
    should_retry: Optional[bool] = None
    headers: dict = field(default_factory=dict)
    drop: bool = False
    cut_after: Optional[int] = None
    cut_chunked: bool = False
    error_after: Optional[int] = None
    error_kind: str = "overloaded_error"
    garbage_after: Optional[int] = None
    delay: float = 0.0
    frame_delay: float = 0.0
    finish_reason: Optional[str] = None


def reply(text: Union[str, list, None] = None, **kw: Any) -> Step:
    """A successful answer: text, tool calls, reasoning, usage."""
    return Step(text=text, **kw)


def error(status: int, **kw: Any) -> Step:
    """An HTTP error with a provider-shaped body."""
    return Step(status=status, **kw)


def drop(**kw: Any) -> Step:
    """Close the connection before sending any header."""
    return Step(drop=True, **kw)


def cut(after: int = 1, chunked: bool = False, text: Union[str, list, None] = "partial answer cut short", **kw: Any) -> Step:
    """A stream that ends after ``after`` delta frames, without its final event."""
    return Step(text=text, cut_after=after, cut_chunked=chunked, **kw)


def stream_error(after: int = 1, kind: str = "overloaded_error", text: Union[str, list, None] = "partial answer", **kw: Any) -> Step:
    """An in-stream error event after ``after`` delta frames."""
    return Step(text=text, error_after=after, error_kind=kind, **kw)


def garbage(after: int = 1, text: Union[str, list, None] = "partial answer", **kw: Any) -> Step:
    """A malformed (non-JSON) SSE frame after ``after`` delta frames."""
    return Step(text=text, garbage_after=after, **kw)


@dataclass
class RecordedRequest:
    """A request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    headers: dict
    body: Any
    time: float = 0.0

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    @property
    def retry_count(self) -> Optional[str]:
        return self.headers.get("x-stainless-retry-count")


# ---------------------------------------------------------------------------
# Rendering: a Step into one API's JSON body or SSE frames


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


def _usage(step: Step) -> dict:
    u = {"input": 10, "output": 5, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    u.update(step.usage or {})
    return {k: int(v) for k, v in u.items()}


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
        prompt = u["input"] + u["cache_read"] + u["cache_write"]
        return {
            "prompt_tokens": prompt,
            "completion_tokens": u["output"],
            "total_tokens": prompt + u["output"],
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
        inp = u["input"] + u["cache_read"] + u["cache_write"]
        return {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": u["cache_read"], "cache_write_tokens": u["cache_write"]},
            "output_tokens": u["output"],
            "output_tokens_details": {"reasoning_tokens": u["reasoning"]},
            "total_tokens": inp + u["output"],
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
        return resp

    @staticmethod
    def body(step: Step, n: int, model: str, body: dict) -> dict:
        return _Responses.response(step, n, model, body, "completed", _Responses.items(step, n), True)

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
        ev("response.completed", response=_Responses.response(step, n, model, body, "completed", items, True))
        out[-1].event = "response.completed"
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
        if step.finish_reason:
            return step.finish_reason
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


_RENDER = {CHAT: _Chat, RESPONSES: _Responses, MESSAGES: _Messages}

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


def _error_body(path: str, step: Step, request_id: str) -> dict:
    a_type, o_type, o_code, default = _ERRORS.get(step.status, ("api_error", "server_error", None, f"HTTP {step.status}"))
    message = step.message or default
    if path == MESSAGES:
        return {"type": "error", "error": {"type": step.code or a_type, "message": message}, "request_id": request_id}
    return {"error": {"message": message, "type": o_type, "param": None, "code": step.code or o_code}}


# ---------------------------------------------------------------------------
# The server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_HTTPServer"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.server.owner._track(self.connection, False)

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout, OSError):
            self.close_connection = True

    def do_GET(self) -> None:
        self._send_json(404, {"error": {"message": "not found", "type": "invalid_request_error", "param": None, "code": None}})

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = self.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = RecordedRequest("POST", path, headers, body, time.time())
        owner._record(record)
        model = body.get("model") if isinstance(body, dict) and isinstance(body.get("model"), str) else owner.model
        if path not in PATHS:
            self._send_json(404, {"error": {"message": f"unknown path {path}", "type": "invalid_request_error", "param": None, "code": None}})
            return
        if not isinstance(body, dict):
            self._send_json(400, _error_body(path, Step(status=400, message="body is not JSON"), "req_bad"))
            return
        step, n = owner._next(record)
        if step.delay and owner._stopping.wait(step.delay):
            return
        if step.drop:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if owner.api_key is not None and not self._auth_ok(owner.api_key):
            step = Step(status=401)
        if step.status != 200:
            self._send_error(path, step, n)
            return
        render = _RENDER[path]
        if record.stream:
            frames = render.frames(step, n, model, body)
            self._send_stream(frames, step, render)
        elif step.cut_after is not None:
            data = json.dumps(render.body(step, n, model, body)).encode()
            self._send_raw(200, data[: len(data) // 2], declared=len(data))
        else:
            self._send_json(200, render.body(step, n, model, body), step.headers)

    # -- helpers
    def _auth_ok(self, key: str) -> bool:
        bearer = self.headers.get("authorization", "")
        return bearer == f"Bearer {key}" or self.headers.get("x-api-key") == key

    def _send_json(self, status: int, data: Any, headers: Optional[dict] = None) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, str(value))
        self.end_headers()
        self.wfile.write(payload)

    def _send_raw(self, status: int, payload: bytes, declared: int) -> None:
        """Declare ``declared`` bytes, send fewer, then close: a cut body."""
        self.close_connection = True
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(declared))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_error(self, path: str, step: Step, n: int) -> None:
        request_id = f"req_{step.status}_{n}"
        headers = {"request-id" if path == MESSAGES else "x-request-id": request_id}
        if step.retry_after is not None:
            headers["retry-after"] = step.retry_after
        if step.retry_after_ms is not None:
            headers["retry-after-ms"] = step.retry_after_ms
        if step.should_retry is not None:
            headers["x-should-retry"] = "true" if step.should_retry else "false"
        headers.update(step.headers)
        self._send_json(step.status, _error_body(path, step, request_id), headers)

    def _send_stream(self, frames: list, step: Step, render: Any) -> None:
        # Normal streams are chunked so the connection stays alive; a cut with
        # chunked=False is close-delimited so that the cut is a clean EOF.
        chunked = step.cut_after is None or step.cut_chunked
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        for key, value in step.headers.items():
            self.send_header(key, str(value))
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.close_connection = True
            self.send_header("connection", "close")
        self.end_headers()
        owner = self.server.owner
        deltas = 0
        for frame in frames:
            if step.frame_delay and owner._stopping.wait(step.frame_delay):
                return
            if step.cut_after is not None and deltas >= step.cut_after:
                if chunked:  # announce a chunk, send half of it, hang up
                    data = frame.encode()
                    self.wfile.write(b"%x\r\n" % len(data) + data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            if step.error_after is not None and deltas >= step.error_after:
                self._write_chunk(render.error_frame(step).encode(), chunked)
                break
            if step.garbage_after is not None and deltas >= step.garbage_after:
                event = f"event: {frame.event}\n" if frame.event else ""
                self._write_chunk(f"{event}data: {{not json\n\n".encode(), chunked)
                break
            self._write_chunk(frame.encode(), chunked)
            deltas += frame.delta
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_chunk(self, data: bytes, chunked: bool) -> None:
        if chunked:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        else:
            self.wfile.write(data)
        self.wfile.flush()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: "WireServer"


class WireServer:
    """The scripted server. Thread-safe; start it once, push steps any time."""

    def __init__(self, *, api_key: Optional[str] = None, default: Optional[Step] = None, model: str = "fake-model"):
        self.api_key = api_key
        self.default = default or reply("ok")
        self.model = model
        self.requests: list = []
        self._queue: list = []
        self._lock = threading.Lock()
        self._count = 0
        self._conns: set = set()
        self._stopping = threading.Event()
        self._httpd: Optional[_HTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle
    def start(self) -> "WireServer":
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="wire-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # wake keep-alive handler threads
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread:
            self._thread.join(timeout=2)

    def __enter__(self) -> "WireServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- addresses
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("WireServer is not started: call start() first")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the Anthropic SDK's base_url)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the OpenAI SDK's base_url)."""
        return self.url + "/v1"

    # -- script
    def push(self, *steps: Union[Step, str, Callable]) -> "WireServer":
        """Append steps to the queue (a str is ``reply(text)``)."""
        with self._lock:
            self._queue.extend(reply(s) if isinstance(s, str) else s for s in steps)
        return self

    def script(self, steps: list) -> "WireServer":
        """Replace the queue with ``steps``."""
        with self._lock:
            self._queue.clear()
        return self.push(*steps)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        """Forget the queue and the recorded requests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    def requests_to(self, path: str) -> list:
        return [r for r in self.requests if r.path == path]

    # -- internals
    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(record)

    def _next(self, record: RecordedRequest) -> tuple:
        with self._lock:
            self._count += 1
            n = self._count
            step = self._queue.pop(0) if self._queue else self.default
        if callable(step) and not isinstance(step, Step):
            step = step(record)
            if isinstance(step, str):
                step = reply(step)
        return step, n

    def _track(self, conn: socket.socket, opened: bool) -> None:
        with self._lock:
            (self._conns.add if opened else self._conns.discard)(conn)
