"""The HTTP API as an ASGI application (Starlette), on a plugin host made
without click: OpenAI's chat completions, responses and models, as
hermes-agent's API server answers them (``gateway/platforms/api_server.py`` in 0.19), its
capabilities and health routes.

Errors are OpenAI's envelope (``{"error": {"message", "type", "param", "code"}}``)
with the right status, never a traceback. Each request gets its own agent on
a worker thread; at most ``api_server.max_concurrent_runs`` run at once (more:
429). A streamed answer whose client goes away interrupts its agent.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from plugins.serve.turns import Sink, TurnRequest, build_agent, run_turn

log = logging.getLogger("hermes.serve")
SESSION_HEADER = "X-Hermes-Session-Id"
MAX_SESSION_ID = 256
KEEPALIVE = 15.0  # seconds of silence before an SSE comment keeps a proxy from closing the stream
RUNS_KEPT = 200  # ended runs this process remembers (GET /v1/runs, the page)


def error(status: int, message: str, kind: str = "invalid_request_error", code: Optional[str] = None,
          param: Optional[str] = None, headers: Optional[dict] = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                        status_code=status, headers=headers)


class Server:
    """The state one ``hermes serve`` process shares between requests."""

    def __init__(self, host, *, key: str = "", model_name: str = "hermes-agent", max_concurrent: int = 8,
                 max_body: int = 1_000_000, approval_timeout: float = 300.0):
        from kernel import __version__

        self.host, self.key, self.model_name = host, key, model_name
        self.max_body, self.version = max_body, __version__
        self.slots = asyncio.Semaphore(max_concurrent)
        self.pool = ThreadPoolExecutor(max_workers=max_concurrent, thread_name_prefix="hermes-serve")
        self._responses: Any = None  # plugins.serve.responses.ResponseStore, opened by the first use
        self.runs: dict = {}  # run id -> plugins.serve.runs.Run (this process's)
        from plugins.serve.runs import trace_hooks

        trace_hooks(host.pm)
        self.approval_timeout = approval_timeout

    # ------------------------------------------------------------ plumbing
    def authorized(self, request: Request) -> bool:
        if not self.key:
            return True
        given = request.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.key.encode())

    async def body(self, request: Request) -> Any:
        """The JSON body, or an error response (too large, not JSON, not an object)."""
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body:
            return error(413, f"the request body is over {self.max_body} bytes (api_server.max_body_bytes)")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > self.max_body:
                return error(413, f"the request body is over {self.max_body} bytes (api_server.max_body_bytes)")
        try:
            data = json.loads(raw or b"null")
        except (ValueError, UnicodeDecodeError) as exc:
            return error(400, f"the request body is not JSON: {exc}")
        if not isinstance(data, dict):
            return error(400, "the request body must be a JSON object")
        return data

    # ------------------------------------------------------------- routes
    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok", "platform": "hermes-agent", "server": "hermes", "version": self.version})

    async def models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [
            {"id": self.model_name, "object": "model", "created": int(time.time()), "owned_by": "hermes",
             "permission": [], "root": self.model_name, "parent": None}]})

    async def capabilities(self, request: Request) -> Response:
        return JSONResponse({
            # "hermes-agent": the API this speaks (its clients check it); "server" says which implementation
            "object": "hermes.api_server.capabilities", "platform": "hermes-agent", "server": "hermes",
            "version": self.version, "model": self.model_name,
            "auth": {"type": "bearer", "required": bool(self.key)},
            "runtime": {"mode": "server_agent", "tool_execution": "server", "split_runtime": False},
            "features": {"chat_completions": True, "chat_completions_streaming": True, "responses_api": True,
                         "responses_streaming": False, "run_submission": True, "run_status": True,
                         "run_events_sse": True, "run_stop": True, "run_approval_response": True,
                         "session_resources": True,
                         "session_continuity_header": SESSION_HEADER},
            "endpoints": {"health": {"method": "GET", "path": "/health"},
                          "models": {"method": "GET", "path": "/v1/models"},
                          "capabilities": {"method": "GET", "path": "/v1/capabilities"},
                          "chat_completions": {"method": "POST", "path": "/v1/chat/completions"},
                          "responses": {"method": "POST", "path": "/v1/responses"},
                          "response": {"method": "GET", "path": "/v1/responses/{response_id}"},
                          "response_delete": {"method": "DELETE", "path": "/v1/responses/{response_id}"},
                          "runs": {"method": "POST", "path": "/v1/runs"},
                          "run_status": {"method": "GET", "path": "/v1/runs/{run_id}"},
                          "run_events": {"method": "GET", "path": "/v1/runs/{run_id}/events"},
                          "run_approval": {"method": "POST", "path": "/v1/runs/{run_id}/approval"},
                          "run_stop": {"method": "POST", "path": "/v1/runs/{run_id}/stop"}}})

    async def chat_completions(self, request: Request) -> Response:
        body = await self.body(request)
        if isinstance(body, Response):
            return body
        turn = self._chat_turn(request, body)
        if isinstance(turn, Response):
            return turn
        if self.slots.locked():
            return error(429, "too many conversations at once (api_server.max_concurrent_runs); try again",
                         kind="rate_limit_error", code="too_many_runs")
        model = str(body.get("model") or self.model_name)
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:29]}", int(time.time())
        if turn.stream:  # the agent first: its session id is a header
            sink = Sink(asyncio.get_running_loop())
            agent = await self._build(turn, sink)
            if isinstance(agent, Response):
                return agent
            return StreamingResponse(self._stream_chat(request, turn, sink, completion_id, created, model),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", SESSION_HEADER: agent.session_id})
        async with self.slots:
            outcome = await self._run(request, turn, None)
        if isinstance(outcome, Response):
            return outcome
        agent, result = outcome
        headers = {SESSION_HEADER: result.session_id}
        if not result.final_response and result.exit_reason != "completed":
            return error(502, result.error or f"the agent ended without an answer ({result.exit_reason})",
                         kind="server_error", code="agent_incomplete", headers=headers)
        return JSONResponse({
            "id": completion_id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": result.final_response or ""},
                         "finish_reason": _finish(result)}],
            "usage": _usage(result)}, headers=headers)

    @property
    def responses(self):
        if self._responses is None:
            from hermes.host.config import data_dir
            from plugins.serve.responses import ResponseStore

            self._responses = ResponseStore(data_dir() / "response_store.db")
        return self._responses

    async def create_response(self, request: Request) -> Response:
        from plugins.serve.responses import input_messages, output_items

        body = await self.body(request)
        if isinstance(body, Response):
            return body
        messages = input_messages(body.get("input"))
        if not messages:
            return error(400, "'input' must be text or a list of messages", param="input")
        if body.get("stream"):
            return error(400, "streamed responses are not served yet: leave 'stream' out, or use "
                              "/v1/chat/completions with stream", param="stream", code="unsupported")
        history, instructions = [], body.get("instructions")
        previous = body.get("previous_response_id")
        if previous is not None:
            stored = await asyncio.to_thread(self.responses.get, str(previous)) if isinstance(previous, str) else None
            if stored is None:
                return error(404, f"no stored response '{previous}'", param="previous_response_id", code="not_found")
            history, instructions = list(stored["conversation_history"]), instructions or stored.get("instructions")
        system = [m["content"] for m in messages if m["role"] == "system"]
        messages = [m for m in messages if m["role"] != "system"]
        if not messages or messages[-1]["role"] != "user" or not messages[-1]["content"].strip():
            return error(400, "the input must end with the user's message, with text", param="input")
        if system:
            instructions = "\n".join(([instructions] if isinstance(instructions, str) else []) + system)
        if self.slots.locked():
            return error(429, "too many conversations at once (api_server.max_concurrent_runs); try again",
                         kind="rate_limit_error", code="too_many_runs")
        model = body.get("model")
        history += messages[:-1]
        turn = TurnRequest(user_message=messages[-1]["content"], history=history,
                           system_message=instructions if isinstance(instructions, str) else None,
                           model=model if isinstance(model, str) and model != self.model_name else "")
        async with self.slots:
            outcome = await self._run(request, turn, None)
        if isinstance(outcome, Response):
            return outcome
        _, result = outcome
        status = "completed" if result.exit_reason == "completed" else \
            "incomplete" if result.exit_reason in ("budget_exhausted", "interrupted_by_user") else "failed"
        usage = _usage(result)
        data = {"id": f"resp_{uuid.uuid4().hex}", "object": "response", "created_at": int(time.time()),
                "status": status, "model": str(model or self.model_name), "previous_response_id": previous,
                "instructions": instructions, "output": output_items(_this_turn(result.messages),
                                                                      result.final_response, result.error),
                "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                "error": None if status != "failed" else {"code": "server_error", "message": result.error or ""},
                "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"],
                          "total_tokens": usage["total_tokens"]}}
        if body.get("store", True) is not False:
            await asyncio.to_thread(self.responses.put, data["id"], {
                "response": data, "conversation_history": result.messages, "instructions": instructions,
                "session_id": result.session_id})
        return JSONResponse(data, headers={SESSION_HEADER: result.session_id})

    async def get_response(self, request: Request) -> Response:
        response_id = request.path_params["response_id"]
        stored = await asyncio.to_thread(self.responses.get, response_id)
        if stored is None:
            return error(404, f"no stored response '{response_id}'", code="not_found")
        return JSONResponse(stored["response"])

    async def delete_response(self, request: Request) -> Response:
        response_id = request.path_params["response_id"]
        if not await asyncio.to_thread(self.responses.delete, response_id):
            return error(404, f"no stored response '{response_id}'", code="not_found")
        return JSONResponse({"id": response_id, "object": "response", "deleted": True})

    async def start_run(self, request: Request) -> Response:
        from plugins.serve.responses import input_messages
        from plugins.serve.runs import Run

        body = await self.body(request)
        if isinstance(body, Response):
            return body
        messages = input_messages(body.get("input"))
        if not messages or messages[-1]["role"] != "user" or not messages[-1]["content"].strip():
            return error(400, "'input' must be text, or messages ending with the user's", param="input")
        session_id = body.get("session_id") or request.headers.get(SESSION_HEADER, "").strip() or None
        if session_id is not None and not self.key:
            return error(403, "going on with a stored session needs the server to have a key (API_SERVER_KEY)",
                         kind="permission_error")
        if self.slots.locked():
            return error(429, "too many conversations at once (api_server.max_concurrent_runs); try again",
                         kind="rate_limit_error", code="too_many_runs")
        model, instructions = body.get("model"), body.get("instructions")
        system = [m["content"] for m in messages if m["role"] == "system"]
        messages = [m for m in messages if m["role"] != "system"]
        turn = TurnRequest(user_message=messages[-1]["content"], history=messages[:-1],
                           system_message="\n".join(([instructions] if isinstance(instructions, str) else []) + system)
                           or None, session_id=str(session_id) if session_id else None,
                           model=model if isinstance(model, str) and model != self.model_name else "", stream=True)
        run = Run(asyncio.get_running_loop(), model=str(model or self.model_name), input=messages[-1]["content"])
        run.approval_timeout = self.approval_timeout
        self.runs[run.id] = run
        for old in [r for r in self.runs if self.runs[r].status in ("completed", "failed", "cancelled")][:-RUNS_KEPT]:
            del self.runs[old]  # the oldest ended ones beyond what is kept
        asyncio.ensure_future(self._drive(run, turn))
        return JSONResponse({"run_id": run.id, "object": "hermes.run", "status": "started"}, status_code=202)

    async def _drive(self, run, turn: TurnRequest) -> None:
        """A run from its start to its last event (a task of the server's loop)."""
        from plugins.serve.runs import RUN

        loop = asyncio.get_running_loop()
        async with self.slots:
            sink = Sink(loop)
            try:
                agent = await loop.run_in_executor(self.pool, build_agent, self.host, turn, sink)
            except Exception as exc:  # noqa: BLE001
                run.status, run.error = "failed", f"the agent could not be built: {exc}"
                run.emit("run.failed", error=run.error)
                return
            agent.state[RUN], run.agent, run.session_id = run, agent, agent.session_id
            run.status = "running"
            run.emit("run.started", session_id=agent.session_id)
            relay = asyncio.ensure_future(_relay(sink, run))
            try:
                result = await loop.run_in_executor(self.pool, run_turn, agent, turn)
            except Exception as exc:  # noqa: BLE001 - the loop's own failure
                result, run.error = None, f"the turn failed: {exc}"
            relay.cancel()
            while not sink.queue.empty():
                _relay_one(sink.queue.get_nowait(), run)
            run.agent = None
        if result is not None:
            run.session_id, run.output, run.usage = result.session_id, result.final_response, result.usage
            run.error = result.error
        if result is not None and (result.interrupted or run.stopping):
            run.status = "cancelled"
            run.emit("run.cancelled", output=run.output)
        elif result is not None and result.exit_reason in ("completed", "budget_exhausted"):
            run.status = "completed"
            run.emit("run.completed", output=run.output, usage=run.usage, exit_reason=result.exit_reason)
        else:
            run.status = "failed"
            run.emit("run.failed", error=run.error or "the turn ended without an answer")

    def _run_of(self, request: Request):
        run = self.runs.get(request.path_params["run_id"])
        return run if run is not None else error(404, f"no run '{request.path_params['run_id']}'",
                                                 code="run_not_found")

    async def list_runs(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [run.state() for run in reversed(self.runs.values())]})

    async def run_trace(self, request: Request) -> Response:
        run = self._run_of(request)
        return run if isinstance(run, Response) else JSONResponse({"object": "list", "run_id": run.id,
                                                                  "data": list(run.trace)})

    async def page(self, request: Request) -> Response:
        from pathlib import Path

        return Response((Path(__file__).with_name("page.html")).read_text(encoding="utf-8"), media_type="text/html")

    async def get_run(self, request: Request) -> Response:
        run = self._run_of(request)
        return run if isinstance(run, Response) else JSONResponse(run.state())

    async def run_events(self, request: Request) -> Response:
        from plugins.serve.runs import sse

        run = self._run_of(request)
        if isinstance(run, Response):
            return run

        async def stream():
            async for record in run.follow():
                yield sse(record)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def run_approval(self, request: Request) -> Response:
        from plugins.serve.runs import CHOICES

        run = self._run_of(request)
        if isinstance(run, Response):
            return run
        body = await self.body(request)
        if isinstance(body, Response):
            return body
        choice = {"approve": "once", "approved": "once", "allow": "once"}.get(str(body.get("choice", "")).lower(),
                                                                              str(body.get("choice", "")).lower())
        if choice not in CHOICES:
            return error(400, f"'choice' must be one of {', '.join(CHOICES)}", param="choice",
                         code="invalid_approval_choice")
        pending = run.pending
        if pending is None or body.get("approval_id") not in (None, pending.id):
            return error(409, f"run '{run.id}' is not waiting for that approval", code="approval_not_active")
        pending.choice = choice
        pending.answered.set()
        run.emit("approval.responded", approval_id=pending.id, choice=choice)
        return JSONResponse({"run_id": run.id, "approval_id": pending.id, "choice": choice})

    async def stop_run(self, request: Request) -> Response:
        run = self._run_of(request)
        if isinstance(run, Response):
            return run
        if run.status not in ("completed", "failed", "cancelled"):
            run.stopping = True
            if run.agent is not None:
                run.agent.interrupt()
        return JSONResponse({"run_id": run.id, "status": "stopping" if run.stopping else run.status})

    # -------------------------------------------------------------- turns
    def _chat_turn(self, request: Request, body: dict):
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return error(400, "'messages' must be a non-empty list", param="messages")
        system, conversation = [], []
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                return error(400, f"messages[{i}] must be an object", param=f"messages[{i}]")
            role, content = message.get("role"), _text(message.get("content"))
            if content is None:
                return error(400, f"messages[{i}].content must be a string or a list of text parts",
                             param=f"messages[{i}].content")
            if role in ("system", "developer"):
                system.append(content)
            elif role in ("user", "assistant"):
                conversation.append({"role": role, "content": content})
        if not conversation or conversation[-1]["role"] != "user" or not conversation[-1]["content"].strip():
            return error(400, "the last message must be the user's, with text", param="messages")
        stream = body.get("stream", False)
        if not isinstance(stream, bool):
            return error(400, "'stream' must be true or false", param="stream")
        session_id = request.headers.get(SESSION_HEADER, "").strip() or None
        if session_id is not None:
            if not self.key:  # a session's history is the store's: only for an authenticated caller
                return error(403, f"{SESSION_HEADER} needs the server to have a key (API_SERVER_KEY)",
                             kind="permission_error")
            if len(session_id) > MAX_SESSION_ID or any(c in session_id for c in "\r\n\x00/\\"):
                return error(400, f"{SESSION_HEADER} is not a session id", param=SESSION_HEADER)
        model = body.get("model")
        return TurnRequest(user_message=conversation[-1]["content"], history=conversation[:-1],
                           system_message="\n".join(system) if system else None, session_id=session_id,
                           model=model if isinstance(model, str) and model and model != self.model_name else "",
                           stream=stream)

    async def _build(self, turn: TurnRequest, sink: Optional[Sink]):
        """The request's agent (built on a worker thread), or an error response."""
        try:
            agent = await asyncio.get_running_loop().run_in_executor(self.pool, build_agent, self.host, turn, sink)
        except Exception as exc:  # noqa: BLE001 - a configuration the server cannot run
            return error(500, f"the agent could not be built: {exc}", kind="server_error", code="agent_config")
        if sink is not None:
            sink.agent = agent
        return agent

    async def _run(self, request: Request, turn: TurnRequest, sink: Optional[Sink], agent: Any = None):
        """(agent, result) of the turn on a worker thread, or an error response; a client that goes away
        interrupts the agent."""
        loop = asyncio.get_running_loop()
        agent = agent or await self._build(turn, sink)
        if isinstance(agent, Response):
            return agent
        future = loop.run_in_executor(self.pool, run_turn, agent, turn)
        while True:
            done, _ = await asyncio.wait({future}, timeout=0.25)
            if done:
                break
            if await request.is_disconnected():
                agent.interrupt()
        try:
            return agent, future.result()
        except Exception as exc:  # noqa: BLE001 - the loop's own failure: a server error, logged once
            log.error("a turn failed: %s", exc, exc_info=log.isEnabledFor(logging.DEBUG))
            return error(500, f"the turn failed: {exc}", kind="server_error")

    async def _stream_chat(self, request: Request, turn: TurnRequest, sink: Sink, completion_id: str, created: int,
                           model: str):
        def chunk(delta: dict, finish: Optional[str] = None, **extra) -> str:
            data = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

        async with self.slots:
            task = asyncio.ensure_future(self._run(request, turn, sink, sink.agent))
            yield chunk({"role": "assistant"})
            try:
                while True:
                    getter = asyncio.ensure_future(sink.queue.get())
                    done, _ = await asyncio.wait({getter, task}, timeout=KEEPALIVE, return_when="FIRST_COMPLETED")
                    if getter in done:
                        event = getter.result()
                        if event.kind == "delta":
                            sink.streamed = True
                            yield chunk({"content": event.data["text"]})
                        elif event.kind in ("tool_start", "tool_complete"):
                            yield f"event: hermes.tool.progress\ndata: {json.dumps(event.data)}\n\n"
                        continue
                    getter.cancel()
                    if task in done:
                        break
                    yield ": keepalive\n\n"
                while not sink.queue.empty():
                    event = sink.queue.get_nowait()
                    if event.kind == "delta":
                        yield chunk({"content": event.data["text"]})
                outcome = task.result()
                if isinstance(outcome, Response):  # hermes-agent's failure facts, and the reason
                    yield chunk({}, "error", hermes={"completed": False, "failed": True, "partial": sink.streamed,
                                                     "error_code": "agent_error",
                                                     "error": json.loads(outcome.body)["error"]["message"]})
                else:
                    _, result = outcome
                    if not sink.streamed and result.final_response:  # the provider did not stream: all at once
                        yield chunk({"content": result.final_response})
                    finish = _finish(result)
                    extra = {} if finish == "stop" else {"hermes": {
                        "completed": False, "failed": finish == "error", "partial": bool(result.final_response),
                        "error_code": "output_truncated" if finish == "length" else "agent_error",
                        "error": result.error or result.exit_reason}}
                    yield chunk({}, finish, usage=_usage(result), **extra)
                yield "data: [DONE]\n\n"
            finally:
                sink.closed = True
                if not task.done() and sink.agent is not None:  # the client went away mid-stream
                    sink.agent.interrupt()


def _relay_one(event, run) -> None:
    if event.kind == "delta":
        run.emit("message.delta", delta=event.data["text"])
    elif event.kind == "tool_start":
        preview = json.dumps(event.data.get("args"), ensure_ascii=False, default=str)
        run.emit("tool.started", tool=event.data["tool"], tool_call_id=event.data["toolCallId"],
                 preview=preview[:200])
    elif event.kind == "tool_complete":
        run.emit("tool.completed", tool=event.data["tool"], tool_call_id=event.data["toolCallId"],
                 duration=round(event.data["duration_ms"] / 1000, 3), error=event.data["status"] != "completed",
                 result=event.data.get("result", ""))


async def _relay(sink: Sink, run) -> None:
    """A run's agent events, as the run's lifecycle events."""
    while True:
        _relay_one(await sink.queue.get(), run)


def _text(content: Any) -> Optional[str]:
    """A message's content as text: a string, or the text parts of a list (other parts are dropped)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") in ("text", "input_text")]
        return "\n".join(str(p) for p in parts)
    return None


def _this_turn(messages: list) -> list:
    """The messages after the turn's user message (the history before it came with the request)."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    return messages[users[-1] + 1:] if users else messages


def _finish(result) -> str:
    return "stop" if result.exit_reason == "completed" else "length" if result.exit_reason == "budget_exhausted" \
        else "error"


def _usage(result) -> dict:
    usage = result.usage or {}
    prompt, completion = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def make_app(server: Server) -> Starlette:
    """The ASGI application of ``server``: its routes behind the bearer key (``/health`` is open)."""
    from functools import partial

    from plugins.serve import sessions

    def guarded(handler):
        async def endpoint(request: Request) -> Response:
            if not server.authorized(request):
                return error(401, "a valid API key is required (Authorization: Bearer KEY)",
                             kind="authentication_error", code="invalid_api_key")
            try:
                return await handler(request)
            except Exception as exc:  # noqa: BLE001 - never a traceback to the client
                log.error("%s %s failed: %s", request.method, request.url.path, exc,
                          exc_info=log.isEnabledFor(logging.DEBUG))
                return error(500, f"internal error: {type(exc).__name__}: {exc}", kind="server_error")
        return endpoint

    async def not_found(request: Request, exc: Exception) -> Response:
        return error(404, f"no route {request.method} {request.url.path}", code="not_found")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return error(405, f"{request.method} is not allowed on {request.url.path}", code="method_not_allowed")

    return Starlette(routes=[
        Route("/health", server.health, methods=["GET"]),
        Route("/v1/models", guarded(server.models), methods=["GET"]),
        Route("/v1/capabilities", guarded(server.capabilities), methods=["GET"]),
        Route("/v1/chat/completions", guarded(server.chat_completions), methods=["POST"]),
        Route("/v1/responses", guarded(server.create_response), methods=["POST"]),
        Route("/api/sessions", guarded(partial(sessions.list_sessions, server)), methods=["GET"]),
        Route("/api/sessions/{session_id}", guarded(partial(sessions.get_session, server)), methods=["GET"]),
        Route("/api/sessions/{session_id}", guarded(partial(sessions.patch_session, server)), methods=["PATCH"]),
        Route("/api/sessions/{session_id}", guarded(partial(sessions.delete_session, server)), methods=["DELETE"]),
        Route("/api/sessions/{session_id}/messages", guarded(partial(sessions.session_messages, server)),
              methods=["GET"]),
        Route("/", server.page, methods=["GET"]),
        Route("/v1/runs", guarded(server.start_run), methods=["POST"]),
        Route("/v1/runs", guarded(server.list_runs), methods=["GET"]),
        Route("/v1/runs/{run_id}/trace", guarded(server.run_trace), methods=["GET"]),
        Route("/v1/runs/{run_id}", guarded(server.get_run), methods=["GET"]),
        Route("/v1/runs/{run_id}/events", guarded(server.run_events), methods=["GET"]),
        Route("/v1/runs/{run_id}/approval", guarded(server.run_approval), methods=["POST"]),
        Route("/v1/runs/{run_id}/stop", guarded(server.stop_run), methods=["POST"]),
        Route("/v1/responses/{response_id}", guarded(server.get_response), methods=["GET"]),
        Route("/v1/responses/{response_id}", guarded(server.delete_response), methods=["DELETE"]),
    ], exception_handlers={404: not_found, 405: not_allowed})
