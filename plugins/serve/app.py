"""The HTTP API as an ASGI application (Starlette), on a plugin host made
without click: OpenAI's chat completions, responses and models, as
hermes-agent's API server answers them (``gateway/platforms/api_server.py`` in 0.19), its
capabilities, health, skills and toolsets routes.

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
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from kernel.messages import text_of
from plugins.images import client_content, has_content
from plugins.serve.once import HEADER, REPLAYED, Once
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


def sampling(body: dict, limits: tuple) -> "dict | JSONResponse":
    """The client's ``temperature``, ``top_p`` and token limit (the first of ``limits`` it sends: each API names it
    its own way) as the provider options of its turn, and its reasoning effort (chat completions' ``reasoning_effort``,
    the Responses API's ``reasoning.effort``) as ``reasoning``; one out of range is a 400 naming it."""
    from plugins_providers.reasoning import LEVELS

    options = {}
    effort = body.get("reasoning_effort", (body.get("reasoning") or {}).get("effort")
                      if isinstance(body.get("reasoning"), dict) else None)
    if effort is not None:
        if effort not in LEVELS:
            return error(400, f"the reasoning effort must be one of {', '.join(LEVELS)}", param="reasoning_effort"
                         if "reasoning_effort" in body else "reasoning.effort")
        options["reasoning"] = effort
    for key, low, high in (("temperature", 0, 2), ("top_p", 0, 1)):
        if (value := body.get(key)) is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            return error(400, f"'{key}' must be a number from {low} to {high}", param=key)
        options[key] = value
    for key in limits:
        if (value := body.get(key)) is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return error(400, f"'{key}' must be a whole number of at least 1", param=key)
        return {**options, "max_tokens": value}
    return options


class Server:
    """The state one ``hermes serve`` process shares between requests."""

    def __init__(self, host, *, key: str = "", model_name: str = "hermes-agent", max_concurrent: int = 8,
                 max_body: int = 1_000_000, approval_timeout: float = 300.0):
        from kernel import __version__

        self.host, self.key, self.model_name = host, key, model_name
        self.max_body, self.version = max_body, __version__
        self.slots, self.max_concurrent = asyncio.Semaphore(max_concurrent), max_concurrent
        self.started = time.monotonic()
        self.pool = ThreadPoolExecutor(max_workers=max_concurrent, thread_name_prefix="hermes-serve")
        self._responses: Any = None  # plugins.serve.responses.ResponseStore, opened by the first use
        self.runs: dict = {}  # run id -> plugins.serve.runs.Run (this process's)
        from plugins.serve.runs import trace_hooks
        from plugins.serve.turns import Events

        host.pm.register(Events(), name="serve-events")  # this server's agents' events (no other command's)
        trace_hooks(host.pm)
        self.approval_timeout = approval_timeout
        self.endpoints: dict = {}  # name -> {"method", "path"}, for /v1/capabilities (make_app fills it)
        self.cors_origins: list = []  # web origins whose pages may call the API ("*": any)
        self.app: Any = None  # the command's hermes.cli.app.App: cron jobs run now (/api/jobs) are built on it
        self.once = Once()  # the answers of requests sent with an Idempotency-Key

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
        for key, what in (("model", "a model's name"), ("instructions", "the text of the system prompt")):
            if not isinstance(data.get(key, ""), (str, type(None))):  # answered as the model "5", instructions 5, before
                return error(400, f"'{key}' must be a string ({what})", param=key)
        if b"\\u" in raw:  # a lone surrogate escape ("\ud800") parses, but no model, store or JSON writer takes it
            try:
                json.dumps(data, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                return error(400, "the request body holds a lone surrogate escape (\\ud800-\\udfff), which is no text")
        return data

    def busy(self) -> Optional[Response]:
        """429 when ``api_server.max_concurrent_runs`` conversations are running, else None."""
        if not self.slots.locked():
            return None
        return error(429, "too many conversations at once (api_server.max_concurrent_runs); try again",
                     kind="rate_limit_error", code="too_many_runs")

    # ------------------------------------------------------------- routes
    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok", "platform": "hermes-agent", "server": "hermes", "version": self.version})

    async def health_detailed(self, request: Request) -> Response:
        """hermes-agent's dashboard probe: the process, its uptime and how many conversations run now."""
        running = self.max_concurrent - self.slots._value  # noqa: SLF001 - asyncio keeps no public count
        return JSONResponse({"status": "ok", "platform": "hermes-agent", "server": "hermes", "version": self.version,
                             "gateway_state": "running", "pid": os.getpid(),
                             "uptime_seconds": round(time.monotonic() - self.started, 1), "model": self.model_name,
                             "active_agents": running, "max_concurrent_runs": self.max_concurrent,
                             "gateway_busy": running > 0})

    async def skills(self, request: Request) -> Response:
        """The skills a request's agent may load, as hermes-agent's ``/v1/skills`` lists them."""
        from plugins.skills import skills_of

        found = await asyncio.get_running_loop().run_in_executor(self.pool, skills_of, self.host.config, self.host)
        return JSONResponse({"object": "list", "data": [
            {"name": s.name, "description": s.description, "category": None, "source": s.source}
            for s in sorted(found.values(), key=lambda s: s.name)]})

    async def toolsets(self, request: Request) -> Response:
        """Each toolset, whether a request's agent is offered its tools, and which they are (``/v1/toolsets``)."""
        listed = await asyncio.get_running_loop().run_in_executor(self.pool, toolset_rows, self.host)
        return JSONResponse({"object": "list", "data": listed})

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
                         "responses_streaming": True, "run_submission": True, "run_status": True,
                         "run_events_sse": True, "run_stop": True, "run_approval_response": True,
                         "session_resources": True, "session_chat": True, "session_chat_streaming": True,
                         "session_fork": True, "tool_progress_events": True, "approval_events": True,
                         "skills_api": True, "admin_config_rw": False, "memory_write_api": False,
                         "audio_api": False, "realtime_voice": False,
                         "session_continuity_header": SESSION_HEADER, "cors": bool(self.cors_origins)},
            "endpoints": self.endpoints})

    async def chat_completions(self, request: Request) -> Response:
        body = await self.body(request)
        if isinstance(body, Response):
            return body
        turn = self._chat_turn(request, body)
        if isinstance(turn, Response):
            return turn
        model = str(body.get("model") or self.model_name)
        if (key := request.headers.get(HEADER, "").strip()) and not turn.stream:  # a retry: the first's answer
            return await self.once.answer(key, body, lambda: self._chat_answer(request, turn, model, detached=True))
        if (busy := self.busy()) is not None:
            return busy
        if turn.stream:  # the agent first: its session id is a header
            sink = Sink(asyncio.get_running_loop())
            agent = await self._build(turn, sink)
            if isinstance(agent, Response):
                return agent
            completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:29]}", int(time.time())
            return StreamingResponse(self._stream_chat(request, turn, sink, completion_id, created, model),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", SESSION_HEADER: agent.session_id})
        return await self._chat_answer(request, turn, model)

    async def _chat_answer(self, request: Request, turn: TurnRequest, model: str, detached: bool = False) -> Response:
        """A chat completion not streamed (``detached``: its agent runs on when the client goes away)."""
        if (busy := self.busy()) is not None:
            return busy
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:29]}", int(time.time())
        async with self.slots:
            outcome = await self._run(request, turn, None, detached=detached)
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

    async def page(self, request: Request) -> Response:
        from pathlib import Path

        return Response((Path(__file__).with_name("page.html")).read_text(encoding="utf-8"), media_type="text/html")

    # -------------------------------------------------------------- turns
    def _chat_turn(self, request: Request, body: dict):
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return error(400, "'messages' must be a non-empty list", param="messages")
        system, conversation = [], []
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                return error(400, f"messages[{i}] must be an object", param=f"messages[{i}]")
            role = message.get("role")
            try:
                content = client_content(message.get("content"))
            except ValueError as exc:
                return error(400, f"messages[{i}].content: {exc}", param=f"messages[{i}].content")
            if content is None:
                return error(400, f"messages[{i}].content must be a string or a list of text and image parts",
                             param=f"messages[{i}].content")
            if role in ("system", "developer"):
                system.append(text_of(content))
            elif role in ("user", "assistant"):
                conversation.append({"role": role, "content": content if role == "user" else text_of(content)})
        if not conversation or conversation[-1]["role"] != "user" or not has_content(conversation[-1]["content"]):
            return error(400, "the last message must be the user's, with text or an image", param="messages")
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
        options = sampling(body, ("max_completion_tokens", "max_tokens"))
        if isinstance(options, Response):
            return options
        model = body.get("model")
        return TurnRequest(user_message=conversation[-1]["content"], history=conversation[:-1],
                           system_message="\n".join(system) if system else None, session_id=session_id,
                           model=model if isinstance(model, str) and model and model != self.model_name else "",
                           stream=stream, options=options)

    async def session_turn(self, request: Request, turn: TurnRequest) -> Response:
        """A turn on a stored session: its answer, or (``turn.stream``) hermes-agent's session chat events."""
        if (busy := self.busy()) is not None:
            return busy
        headers = {SESSION_HEADER: turn.session_id}
        if not turn.stream:
            async with self.slots:
                outcome = await self._run(request, turn, None)
            if isinstance(outcome, Response):
                return outcome
            _, result = outcome
            return JSONResponse({"object": "hermes.session.chat.completion", "session_id": result.session_id,
                                 "message": {"role": "assistant", "content": result.final_response or ""},
                                 "exit_reason": result.exit_reason, "usage": result.usage}, headers=headers)
        sink = Sink(asyncio.get_running_loop())

        async def events():
            async with self.slots:
                task = asyncio.ensure_future(self._run(request, turn, sink))
                async for event in sink.until(task, KEEPALIVE):
                    if event is None:
                        yield ": keepalive\n\n"
                        continue
                    name = {"delta": "message.delta", "tool_start": "tool.started",
                            "tool_complete": "tool.completed"}[event.kind]
                    yield f"event: {name}\ndata: {json.dumps(event.data, ensure_ascii=False)}\n\n"
                outcome = task.result()
                if isinstance(outcome, Response):
                    yield f"event: error\ndata: {outcome.body.decode()}\n\n"
                else:
                    _, result = outcome
                    done_data = {"session_id": result.session_id, "exit_reason": result.exit_reason,
                                 "message": {"role": "assistant", "content": result.final_response or ""},
                                 "usage": result.usage}
                    yield f"event: done\ndata: {json.dumps(done_data, ensure_ascii=False)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream", headers={**headers,
                                                                                      "Cache-Control": "no-cache"})

    async def _build(self, turn: TurnRequest, sink: Optional[Sink]):
        """The request's agent (built on a worker thread), or an error response."""
        try:
            agent = await asyncio.get_running_loop().run_in_executor(self.pool, build_agent, self.host, turn, sink)
        except Exception as exc:  # noqa: BLE001 - a configuration the server cannot run
            return error(500, f"the agent could not be built: {exc}", kind="server_error", code="agent_config")
        if sink is not None:
            sink.agent = agent
        return agent

    async def _run(self, request: Request, turn: TurnRequest, sink: Optional[Sink], agent: Any = None,
                   detached: bool = False):
        """(agent, result) of the turn on a worker thread, or an error response; a client that goes away
        interrupts the agent, unless ``detached`` (an Idempotency-Key's retry will collect the answer)."""
        loop = asyncio.get_running_loop()
        agent = agent or await self._build(turn, sink)
        if isinstance(agent, Response):
            return agent
        future = loop.run_in_executor(self.pool, run_turn, agent, turn)
        while True:
            done, _ = await asyncio.wait({future}, timeout=0.25)
            if done:
                break
            if not detached and await request.is_disconnected():
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
                async for event in sink.until(task, KEEPALIVE):
                    if event is None:
                        yield ": keepalive\n\n"
                    elif event.kind == "delta":
                        sink.streamed = True
                        yield chunk({"content": event.data["text"]})
                    elif event.kind in ("tool_start", "tool_complete"):
                        yield f"event: hermes.tool.progress\ndata: {json.dumps(event.data)}\n\n"
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


def toolset_rows(host) -> list:
    """hermes-agent's toolset rows for the agent a request gets: ``enabled`` when any of the toolset's tools is
    offered to it, ``configured`` when no tool's check says it cannot work here (a key or program missing)."""
    from kernel.agent import Agent
    from plugins.tools_command.offered import rows

    agent = Agent(host, platform="api")
    try:
        tools = rows(agent)
    finally:
        agent.close()
    out: dict = {}
    for tool in tools:
        if not tool["toolset"]:
            continue
        row = out.setdefault(tool["toolset"], {
            "name": tool["toolset"], "label": tool["toolset"], "plugin": tool["plugin"],
            "description": (host.registry.toolsets.get(tool["toolset"]) or ([], ""))[1],
            "enabled": False, "configured": True, "tools": []})
        row["tools"].append(tool["name"])
        row["enabled"] |= tool["offered"]
        row["configured"] &= not tool["why"].startswith("unavailable")
    return sorted(out.values(), key=lambda row: row["name"])


def server_for(host) -> Server:
    """A :class:`Server` on ``host`` as its configuration says (``API_SERVER_KEY`` wins over ``api_server.key``,
    ``API_SERVER_CORS_ORIGINS`` over ``api_server.cors_origins``)."""
    config = host.config
    origins = os.environ.get("API_SERVER_CORS_ORIGINS") or config.get("api_server.cors_origins") or []
    server = Server(host, key=os.environ.get("API_SERVER_KEY") or str(config.get("api_server.key") or ""),
                    model_name=str(config.get("api_server.model_name") or "hermes-agent"),
                    max_concurrent=int(config.get("api_server.max_concurrent_runs") or 8),
                    max_body=int(config.get("api_server.max_body_bytes") or 1_000_000),
                    approval_timeout=float(config.get("api_server.approval_timeout") or 300))
    server.cors_origins = [o.strip() for o in (origins.split(",") if isinstance(origins, str) else origins)
                           if isinstance(o, str) and o.strip()]
    return server


def create_app() -> Starlette:
    """The API for any ASGI server, without the command line (``uvicorn --factory
    plugins.serve.app:create_app``): the plugins config.yaml (found through ``HERMES_HOME``) enables, loaded
    here. It does not refuse a public address without a key as ``hermes serve`` does: that is the server's
    command line, which this does not see."""
    from hermes.host.config import load_config
    from hermes.host.plugins import PluginHost

    host = PluginHost.discover(load_config())
    host.registry  # noqa: B018 - registrations collected now: a plugin failing there is dropped before requests
    return make_app(server_for(host))


def make_app(server: Server) -> Starlette:
    """The ASGI application of ``server``: its routes behind the bearer key (``/health`` is open)."""
    from functools import partial

    from plugins.serve import jobs, responses, runs, sessions

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

    table = [  # (name in /v1/capabilities, method, path, handler); the page and /health need no key
        ("page", "GET", "/", server.page), ("health", "GET", "/health", server.health),
        ("health_v1", "GET", "/v1/health", server.health),
        ("health_detailed", "GET", "/health/detailed", server.health_detailed),
        ("skills", "GET", "/v1/skills", server.skills), ("toolsets", "GET", "/v1/toolsets", server.toolsets),
        ("models", "GET", "/v1/models", server.models),
        ("capabilities", "GET", "/v1/capabilities", server.capabilities),
        ("chat_completions", "POST", "/v1/chat/completions", server.chat_completions),
        ("responses", "POST", "/v1/responses", partial(responses.create_response, server)),
        ("response", "GET", "/v1/responses/{response_id}", partial(responses.get_response, server)),
        ("response_delete", "DELETE", "/v1/responses/{response_id}", partial(responses.delete_response, server)),
        ("sessions", "GET", "/api/sessions", partial(sessions.list_sessions, server)),
        ("session_create", "POST", "/api/sessions", partial(sessions.create_session, server)),
        ("session", "GET", "/api/sessions/{session_id}", partial(sessions.get_session, server)),
        ("session_update", "PATCH", "/api/sessions/{session_id}", partial(sessions.patch_session, server)),
        ("session_delete", "DELETE", "/api/sessions/{session_id}", partial(sessions.delete_session, server)),
        ("session_messages", "GET", "/api/sessions/{session_id}/messages",
         partial(sessions.session_messages, server)),
        ("session_fork", "POST", "/api/sessions/{session_id}/fork", partial(sessions.fork_session, server)),
        ("session_chat", "POST", "/api/sessions/{session_id}/chat", partial(sessions.chat, server)),
        ("session_chat_stream", "POST", "/api/sessions/{session_id}/chat/stream",
         partial(sessions.chat, server, stream=True)),
        ("jobs", "GET", "/api/jobs", partial(jobs.list_jobs, server)),
        ("job_create", "POST", "/api/jobs", partial(jobs.create_job, server)),
        ("job", "GET", "/api/jobs/{job_id}", partial(jobs.get_job, server)),
        ("job_update", "PATCH", "/api/jobs/{job_id}", partial(jobs.update_job, server)),
        ("job_delete", "DELETE", "/api/jobs/{job_id}", partial(jobs.delete_job, server)),
        ("job_pause", "POST", "/api/jobs/{job_id}/pause", partial(jobs.pause_job, server)),
        ("job_resume", "POST", "/api/jobs/{job_id}/resume", partial(jobs.resume_job, server)),
        ("job_run", "POST", "/api/jobs/{job_id}/run", partial(jobs.run_job, server)),
        ("runs", "POST", "/v1/runs", partial(runs.start_run, server)),
        ("run_list", "GET", "/v1/runs", partial(runs.list_runs, server)),
        ("run_status", "GET", "/v1/runs/{run_id}", partial(runs.get_run, server)),
        ("run_events", "GET", "/v1/runs/{run_id}/events", partial(runs.run_events, server)),
        ("run_trace", "GET", "/v1/runs/{run_id}/trace", partial(runs.run_trace, server)),
        ("run_approval", "POST", "/v1/runs/{run_id}/approval", partial(runs.run_approval, server)),
        ("run_stop", "POST", "/v1/runs/{run_id}/stop", partial(runs.stop_run, server)),
    ]
    server.endpoints = {name: {"method": method, "path": path} for name, method, path, _ in table}
    middleware = []
    if server.cors_origins:  # a browser page of another origin (a web chat client) may call it, with its key
        from starlette.middleware import Middleware
        from starlette.middleware.cors import CORSMiddleware

        middleware.append(Middleware(CORSMiddleware, allow_origins=server.cors_origins, max_age=600,
                                     allow_methods=["GET", "POST", "PATCH", "DELETE"],
                                     allow_headers=["Authorization", "Content-Type", SESSION_HEADER, "Idempotency-Key"],
                                     expose_headers=[SESSION_HEADER, REPLAYED]))
    return Starlette(routes=[
        Route(path, handler if name in ("page", "health", "health_v1") else guarded(handler), methods=[method])
        for name, method, path, handler in table
    ], exception_handlers={404: not_found, 405: not_allowed}, middleware=middleware)
