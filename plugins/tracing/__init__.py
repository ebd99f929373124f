"""Built-in plugin tracing: every turn, model call and tool call as OpenTelemetry spans, sent over OTLP/HTTP.

They go to what a team already reads traces in (Langfuse, Logfire, Phoenix, Jaeger, Honeycomb, a Collector). Off until
somewhere is named: ``tracing.otlp_endpoint`` (with ``tracing.headers``: an API key), else the standard
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT`` (with ``OTEL_EXPORTER_OTLP_HEADERS``), else
hermes-agent's Langfuse keys (``HERMES_LANGFUSE_PUBLIC_KEY``, ``HERMES_LANGFUSE_SECRET_KEY``,
``HERMES_LANGFUSE_BASE_URL``: Langfuse takes OpenTelemetry). It needs ``pip install 'hermes-kernel[tracing]'`` (the
OpenTelemetry SDK and its OTLP exporter). A turn is an ``invoke_agent hermes`` span, and each model call a ``chat
MODEL`` span and each tool call an ``execute_tool NAME`` span in it, with the attributes of OpenTelemetry's GenAI
conventions (model, provider, tokens, finish reason, tool and call id, errors); the prompt, the answer and each tool's
arguments and result only with ``tracing.capture_content`` (known key values masked)."""

from __future__ import annotations

import base64
import importlib
import logging
import os
import threading
from typing import Optional

from kernel import hookimpl

log = logging.getLogger("hermes.tracing")
TRACES_PATH = "/v1/traces"
LANGFUSE_CLOUD = "https://cloud.langfuse.com"
_made: dict = {}  # (endpoint, headers) -> the process's spans there, or None (the SDK is not installed)
_making = threading.Lock()  # hooks fire on tool and model-call threads too


@hookimpl
def register_config(declare):
    declare("tracing.otlp_endpoint", str, "", "where OpenTelemetry spans of every turn, model call and tool call go: "
            "an OTLP/HTTP endpoint (/v1/traces is added unless it ends so); empty: the OTEL_EXPORTER_OTLP_ variables, "
            "hermes-agent's HERMES_LANGFUSE_ keys, else no tracing")
    declare("tracing.headers", dict, {}, "HTTP headers for tracing.otlp_endpoint, {NAME: VALUE} (an API key)")
    declare("tracing.capture_content", bool, False, "spans also carry the prompt, the answer and each tool's "
            "arguments and result (known key values masked), each cut to tracing.max_chars")
    declare("tracing.max_chars", int, 12000, "the most characters of one captured text", minimum=100)


def target(config) -> Optional[tuple]:
    """``(endpoint, headers, named)`` of where spans go, ``None``: no tracing. ``endpoint`` empty: the exporter reads
    the ``OTEL_EXPORTER_OTLP_`` variables itself; ``named``: hermes' own setting or hermes-agent's keys asked for it."""
    endpoint = str(config.get("tracing.otlp_endpoint") or "").strip()
    headers = config.get("tracing.headers") or {}
    if endpoint:
        return traces_url(endpoint), tuple(sorted((str(k), str(v)) for k, v in headers.items())), True
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return "", (), False
    public, secret = (os.environ.get(f"HERMES_LANGFUSE_{k}_KEY", "").strip() for k in ("PUBLIC", "SECRET"))
    if public and secret:
        base = os.environ.get("HERMES_LANGFUSE_BASE_URL", "").strip() or LANGFUSE_CLOUD
        basic = base64.b64encode(f"{public}:{secret}".encode()).decode()
        return traces_url(base.rstrip("/") + "/api/public/otel"), (("Authorization", f"Basic {basic}"),), True
    return None


def traces_url(endpoint: str) -> str:
    return endpoint if endpoint.rstrip("/").endswith(TRACES_PATH) else endpoint.rstrip("/") + TRACES_PATH


def _spans(agent):
    """The process's spans for this agent's setting (made once), or ``None``: no tracing, or no SDK to send them."""
    where = target(agent.config)
    if where is None:
        return None
    with _making:
        if where not in _made:
            try:
                from plugins.tracing.spans import Spans
            except ImportError as exc:  # said once: the setting asked for spans that cannot be sent
                _made[where] = None
                if where[2]:
                    log.warning("tracing: no spans are sent (%s): pip install 'hermes-kernel[tracing]'", exc)
            else:
                _made[where] = Spans(where[0], dict(where[1]), bool(agent.config.get("tracing.capture_content")),
                                     int(agent.config.get("tracing.max_chars") or 12000))
        return _made[where]


@hookimpl
def pre_llm_call(session_id, turn_id, user_message, model, platform, agent):
    if (spans := _spans(agent)) is not None:
        spans.turn_started(session_id, turn_id, user_message, model, platform, agent)


@hookimpl
def post_llm_call(turn_id, assistant_response, agent):
    if (spans := _spans(agent)) is not None:
        spans.turn_answered(turn_id, assistant_response, agent)


@hookimpl
def on_session_end(turn_id, exit_reason, usage, agent):
    if (spans := _spans(agent)) is not None:
        spans.turn_ended(turn_id, exit_reason, usage)


@hookimpl
def post_api_request(call, response, agent):
    if (spans := _spans(agent)) is not None:
        spans.model_call(call, response, None, agent)


@hookimpl
def api_request_error(call, error, agent):
    if (spans := _spans(agent)) is not None:
        spans.model_call(call, None, error, agent)


@hookimpl
def post_tool_call(call, outcome, agent):
    if (spans := _spans(agent)) is not None:
        spans.tool_call(call, outcome, agent)


@hookimpl(optionalhook=True)  # the agent-tools plugin's hook
def subagent_start(parent_turn_id, child_session_id, agent):
    """A ``delegate_task`` child's turns are spans in the parent's turn, so a delegation is one trace."""
    if (spans := _spans(agent)) is not None:
        spans.parents[child_session_id] = parent_turn_id


@hookimpl(optionalhook=True)
def subagent_stop(child_session_id, agent):
    if (spans := _spans(agent)) is not None:
        spans.parents.pop(child_session_id, None)


@hookimpl
def on_session_finalize(agent):
    """An agent closes (``hermes run`` ends): what is batched goes now, before the process may end."""
    if (spans := _spans(agent)) is not None:
        spans.flush()


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent, online):
    from plugins.doctor.hookspecs import FAIL, OK, WARN, Check

    where = target(agent.config)
    if where is None:
        return [Check("tracing", OK, "off (tracing.otlp_endpoint names where OpenTelemetry spans would go)")]
    sent_to = where[0] or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or \
        traces_url(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", ""))
    try:
        spans = importlib.import_module("plugins.tracing.spans")  # the SDK and its exporter
    except ImportError:
        return [Check("tracing", FAIL if where[2] else WARN, f"spans would go to {sent_to}, but the OpenTelemetry SDK "
                      "is not installed: pip install 'hermes-kernel[tracing]'")]
    why = spans.probe(where[0], dict(where[1])) if online else ""
    if why:
        return [Check("tracing", FAIL, f"spans are not taken at {sent_to}: {why}")]
    return [Check("tracing", OK, f"OpenTelemetry spans of every turn go to {sent_to}" + (" (it answered)" if online
                                                                                            else ""))]
