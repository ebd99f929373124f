"""The spans themselves, through the OpenTelemetry SDK (imported only once tracing is on): a tracer provider of this
process's own (an embedding application's global one is left alone), its spans batched to one OTLP/HTTP exporter.

A model call's and a tool call's span is made when it has ended, with its real start and end: the hooks after a call
carry both (``ApiCall.started_at``/``ended_at``, ``ToolOutcome.duration_ms``), so no hook before one is needed and a
tool's policy hook (``pre_tool_call``, which fails closed) is never this plugin's. Each is a child of its turn's span,
found by the turn's id: parallel tools and the model call's own thread need no context of the caller's."""

from __future__ import annotations

import json
import logging
import os
import threading
import time

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode

from kernel import __version__

EXPORT_SECONDS = 5.0  # an unreachable endpoint holds a command's end this long at most (the SDK's default: 10)
log = logging.getLogger("hermes.tracing")


class Spans:
    """One endpoint's spans: the turns open now, and the provider that batches and sends them."""

    def __init__(self, endpoint: str, headers: dict, capture: bool, max_chars: int):
        self.capture, self.max_chars = capture, max_chars
        resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "hermes",
                                    "service.version": __version__})
        self.provider = TracerProvider(resource=resource)
        exporter = _Exporter(endpoint=endpoint or None, headers=headers or None, timeout=EXPORT_SECONDS)
        exporter.where = endpoint or "the OTEL_EXPORTER_OTLP_ endpoint"
        self.provider.add_span_processor(BatchSpanProcessor(exporter, export_timeout_millis=EXPORT_SECONDS * 1000))
        self.tracer = self.provider.get_tracer("hermes", __version__)
        self.turns: dict = {}  # turn id -> its open span
        self.parents: dict = {}  # a delegate_task child's session id -> the parent's turn id
        self.lock = threading.Lock()
        _listen()

    def turn_started(self, session_id: str, turn_id: str, user_message: str, model: str, platform: str, agent) -> None:
        span = self.tracer.start_span("invoke_agent hermes", self._turn(self.parents.get(session_id, "")),
                                      kind=SpanKind.INTERNAL, attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "hermes", "gen_ai.request.model": model,
            "gen_ai.conversation.id": session_id, "session.id": session_id, "hermes.platform": platform,
            "hermes.turn.id": turn_id, **self._content("input.value", user_message, agent)})
        with self.lock:
            self.turns[turn_id] = span

    def turn_answered(self, turn_id: str, answer: str, agent) -> None:
        with self.lock:
            span = self.turns.get(turn_id)
        if span is not None:
            span.set_attributes(self._content("output.value", answer, agent))

    def turn_ended(self, turn_id: str, exit_reason: str, usage: dict) -> None:
        with self.lock:
            span = self.turns.pop(turn_id, None)
        if span is None:
            return
        span.set_attributes({"hermes.exit_reason": exit_reason, **_usage(usage)})
        if exit_reason == "error":
            span.set_status(Status(StatusCode.ERROR, "the turn failed"))
        span.end()

    def model_call(self, call, response, error, agent) -> None:
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": call.provider,
                      "gen_ai.request.model": call.model, "server.address": call.base_url,
                      "hermes.turn.id": call.turn_id,
                      "hermes.api_request.number": call.number}
        if call.request.max_tokens:
            attributes["gen_ai.request.max_tokens"] = call.request.max_tokens
        if call.aux_task:
            attributes["hermes.aux_task"] = call.aux_task
        if call.replayed:  # a durable engine's record answered: the provider was not called again
            attributes["hermes.replayed"] = True
        if response is not None:
            attributes.update(_usage(response.usage))
            attributes["gen_ai.response.finish_reasons"] = [response.finish_reason or "stop"]
            if response.model:
                attributes["gen_ai.response.model"] = response.model
            calls = [c.get("function", {}).get("name", "") for c in response.tool_calls or []]
            attributes.update({"hermes.tool_calls": calls} if calls else {})
            attributes.update(self._content("output.value", response.content or "", agent))
        span = self.tracer.start_span(f"chat {call.model}", context=self._turn(call.turn_id), kind=SpanKind.CLIENT,
                                      start_time=int(call.started_at * 1e9), attributes=attributes)
        if error is not None:
            span.set_attributes({"error.type": error.reason, **({"http.response.status_code": error.status_code}
                                                                 if error.status_code else {})})
            span.set_status(Status(StatusCode.ERROR, error.message[:500]))
        span.end(end_time=int((call.ended_at or time.time()) * 1e9))

    def tool_call(self, call, outcome, agent) -> None:
        ended = time.time_ns()
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name,
                      "gen_ai.tool.call.id": call.id, "gen_ai.tool.type": "function",
                      "hermes.tool.status": outcome.status}
        if self.capture:
            arguments = json.dumps(call.args, ensure_ascii=False, default=str)
            attributes.update({**self._content("gen_ai.tool.call.arguments", arguments, agent),
                               **self._content("input.value", arguments, agent),
                               **self._content("gen_ai.tool.call.result", outcome.result, agent),
                               **self._content("output.value", outcome.result, agent)})
        span = self.tracer.start_span(f"execute_tool {call.name}", context=self._turn(call.turn_id),
                                      kind=SpanKind.INTERNAL, start_time=ended - int(outcome.duration_ms * 1e6),
                                      attributes=attributes)
        if outcome.status == "error":
            span.set_attribute("error.type", outcome.error_type or "tool_error")
            span.set_status(Status(StatusCode.ERROR, (outcome.error_message or "")[:500]))
        span.end(end_time=ended)

    def flush(self) -> None:
        self.provider.force_flush(int(EXPORT_SECONDS * 1000))

    def _turn(self, turn_id: str):
        with self.lock:
            span = self.turns.get(turn_id)
        return trace.set_span_in_context(span) if span is not None else None

    def _content(self, key: str, text: str, agent) -> dict:
        """``{key: text}`` under ``tracing.capture_content``, known key values masked and cut; else nothing."""
        if not self.capture or not text:
            return {}
        text = agent.secrets.mask(str(text))
        return {key: text if len(text) <= self.max_chars else text[:self.max_chars] + " [cut]"}


def _usage(usage: dict) -> dict:
    """The GenAI conventions' token counts (their input counts what was read from a cache too)."""
    if not usage:
        return {}
    counts = {"gen_ai.usage.input_tokens": usage.get("prompt_tokens", usage.get("input_tokens", 0)),
              "gen_ai.usage.output_tokens": usage.get("output_tokens", 0),
              "gen_ai.usage.cache_read.input_tokens": usage.get("cache_read_tokens", 0),
              "gen_ai.usage.cache_creation.input_tokens": usage.get("cache_write_tokens", 0)}
    return {key: int(value) for key, value in counts.items() if value or ".cache_" not in key}


def probe(endpoint: str, headers: dict) -> str:
    """Why the endpoint does not take an (empty) export, ``""`` when it does: ``hermes doctor``'s online check."""
    _listen()
    _Exporter.why = ""
    exporter = OTLPSpanExporter(endpoint=endpoint or None, headers=headers or None, timeout=EXPORT_SECONDS)
    try:
        taken = exporter.export([]) is SpanExportResult.SUCCESS
    finally:
        exporter.shutdown()
    return "" if taken else _Exporter.why or "it did not take them"


def _listen() -> None:
    """The exporter's own lines for every retry and failure kept back, their reason kept for one line of ours."""
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("opentelemetry.exporter"):
            logging.getLogger(name).addFilter(_Exporter.heard)


class _Exporter(OTLPSpanExporter):
    """The SDK's exporter, spans it could not deliver said once a process in one line: where and why (its own line
    for every retry and failure is kept back)."""

    where, why, said = "", "", False

    def export(self, spans):
        result = super().export(spans)
        if result is not SpanExportResult.SUCCESS and not _Exporter.said:
            _Exporter.said = True
            log.warning("tracing: spans not sent to %s: %s", self.where, _Exporter.why or "it did not take them")
        return result

    @staticmethod
    def heard(record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        if "Transient error" in str(record.msg) and record.args:  # the attempt's reason: the refused connection
            why = str(record.args[0])
            _Exporter.why = "nothing listens there (connection refused)" if "refused" in why else why[:200]
        elif "code:" in str(record.msg) and len(record.args or ()) >= 3:  # an answer that is not a success
            _Exporter.why = f"HTTP {record.args[1]}: {str(record.args[2])[:200]}"
        return False
