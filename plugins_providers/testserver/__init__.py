"""A loopback server that speaks the three model wire protocols, for tests.

It answers ``POST /v1/chat/completions`` (OpenAI Chat Completions),
``POST /v1/responses`` (OpenAI Responses) and ``POST /v1/messages``
(Anthropic Messages), streamed (SSE, chosen by ``"stream": true`` in the body,
as the SDKs do) or not, and ``GET /v1/models`` (its ``models``, in the shape
of the SDK asking). Replies come from a script queue; when the queue is
empty the server answers with ``default`` (the text ``"ok"``). Every request
is recorded (``POST /v1/images/generations``, OpenAI's images, and ``POST /v1/audio/speech``, its speech, too: a
reply's text is the picture or the audio in base64; ``POST /v1/audio/transcriptions``: a reply's text is the
transcript). Only the standard library is used, so the real SDKs talk to it
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
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union
from urllib.parse import urlsplit

from plugins_providers.testserver.script import (CHAT, MESSAGES, PATHS, RESPONSES, TRANSCRIPTIONS, RecordedRequest,
                                                 Step, bad_bytes, cut, drop, error, garbage, keepalive, reply,
                                                 stream_error)
from plugins_providers.testserver.wire import RENDER, error_body


def _form(content_type: str, raw: bytes) -> dict:
    """A multipart/form-data body as ``{field: value}``, a file as ``{"filename": ..., "bytes": n}``."""
    from email.parser import BytesParser

    message = BytesParser().parsebytes(f"content-type: {content_type}\r\n\r\n".encode() + raw)
    found = {}
    for part in message.get_payload() if message.is_multipart() else []:
        name, filename = part.get_param("name", header="content-disposition"), part.get_filename()
        data = part.get_payload(decode=True) or b""
        found[name] = {"filename": filename, "bytes": len(data)} if filename else data.decode("utf-8", "replace")
    return found

__all__ = ["CHAT", "MESSAGES", "RESPONSES", "RecordedRequest", "Step", "WireServer", "cut", "drop", "error",
           "garbage", "reply", "stream_error", "bad_bytes", "keepalive"]

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_HTTPServer"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes: without this the body waits for the client's delayed ACK
        # (Nagle), 40 ms on every non-streamed answer
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
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
        """``GET /v1/models``: the server's model list, in the shape of the SDK asking (Anthropic's sends its
        version header); anything else is not found."""
        owner = self.server.owner
        path = urlsplit(self.path).path  # an absolute URL too: the server stands in for a host through a proxy
        owner._record(RecordedRequest("GET", path, {k.lower(): v for k, v in self.headers.items()}, None, time.time()))
        if path != "/v1/models":
            self._send_json(404, {"error": {"message": "not found", "type": "invalid_request_error", "param": None,
                                            "code": None}})
        elif owner.api_key is not None and not self._auth_ok(owner.api_key):
            self._send_error(path, Step(status=401), 0)
        elif self.headers.get("anthropic-version"):
            rows = [{"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"}
                    for m in owner.models]
            self._send_json(200, {"data": rows, "has_more": False, "first_id": owner.models[0] if owner.models else
                                  None, "last_id": owner.models[-1] if owner.models else None})
        else:
            self._send_json(200, {"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                              "owned_by": "wire-server"} for m in owner.models]})

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = raw.decode("utf-8", "replace")
        if urlsplit(self.path).path == TRANSCRIPTIONS:  # multipart: its fields, the file's name and size
            body = _form(self.headers.get("content-type", ""), raw)
        path = urlsplit(self.path).path  # an absolute URL too: the server stands in for a host through a proxy
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = RecordedRequest("POST", path, headers, body, time.time())
        owner._record(record)
        model = body.get("model") if isinstance(body, dict) and isinstance(body.get("model"), str) else owner.model
        if path not in PATHS:
            self._send_json(404, {"error": {"message": f"unknown path {path}", "type": "invalid_request_error", "param": None, "code": None}})
            return
        if not isinstance(body, dict):
            self._send_json(400, error_body(path, Step(status=400, message="body is not JSON"), "req_bad"))
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
        render = RENDER[path]
        if hasattr(render, "audio"):  # bytes, not JSON
            data, kind = render.audio(step, body)
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif record.stream:
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
        self._send_json(step.status, error_body(path, step, request_id), headers)

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
        quiet_until = time.monotonic() + step.keepalive_for
        while time.monotonic() < quiet_until:  # a proxy or a busy provider: comments, no event
            self._write_chunk(b": keep-alive\n\n", chunked)
            if owner._stopping.wait(0.2):
                return
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
            data = frame.encode()
            if step.bad_bytes_after is not None and frame.delta and deltas >= step.bad_bytes_after:
                for marker in (b'"content": "', b'"text": "', b'"delta": "'):  # chat, messages, responses
                    if marker in data:
                        data = data.replace(marker, marker + b"\xff\xfe", 1)
                        break
                self._write_chunk(data, chunked)
                break
            self._write_chunk(data, chunked)
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

    def __init__(self, *, api_key: Optional[str] = None, default: Optional[Step] = None, model: str = "fake-model",
                 port: int = 0, tls: Optional[tuple] = None):
        """``tls``: (certificate file, key file) to serve HTTPS with, and the authority whose certificate a client
        must show (mutual TLS) as a third."""
        self.api_key, self.wanted_port, self.tls = api_key, port, tls  # port 0: any free port
        self.default = default or reply("ok")
        self.model = model
        self.models: list = [model]  # what GET /v1/models lists
        self.requests: list = []
        self.on_request: Optional[Callable] = None  # called with each RecordedRequest as it arrives
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
        self._httpd = _HTTPServer(("127.0.0.1", self.wanted_port), _Handler)
        self._httpd.owner = self
        if self.tls:
            import ssl

            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*self.tls[:2])
            if len(self.tls) > 2:  # a client without a certificate of that authority is refused in the handshake
                context.load_verify_locations(self.tls[2])
                context.verify_mode = ssl.CERT_REQUIRED
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
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
        """``http://127.0.0.1:PORT`` (the Anthropic SDK's base_url; ``https`` with ``tls``)."""
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

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
        if self.on_request is not None:
            self.on_request(record)

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
