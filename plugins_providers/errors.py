"""The one table that maps a provider failure to a :class:`ProviderError` reason.

Every provider sends every exception through :func:`classify`; the fallback
policy only ever reads ``ProviderError.reason``/``retry_after``. Exceptions are
recognised by their class names (over the MRO) and attributes, so this module
imports no SDK: it handles openai, anthropic and raw httpx2 errors alike.

| failure                                            | reason            |
|----------------------------------------------------|-------------------|
| HTTP 429 (quota/billing wording -> billing)        | rate_limit        |
| HTTP 402, billing wording on 403/429               | billing           |
| HTTP 401, 403                                      | auth              |
| HTTP 400/404/422 (context wording -> overflow)     | bad_request       |
| HTTP 413, context-length wording on 400/5xx        | context_overflow  |
| HTTP 408                                           | transport         |
| HTTP 409, >= 500, 529, in-stream error events      | server            |
| connection / timeout errors (SDK or raw httpx2),   | transport         |
| socket errors, malformed JSON, missing final event |                   |
| missing credentials; a connection a server on this | config            |
| machine refused (said by ``Provider.complete``)    |                   |
| anything else                                      | bad_request       |

Messages never contain a key: the caller's secrets and anything shaped like
an API key are masked, and messages are shortened.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Iterable, Optional

from kernel.types import (
    AUTH,
    BAD_REQUEST,
    BILLING,
    CONFIG,
    CONTEXT_OVERFLOW,
    RATE_LIMIT,
    SERVER,
    TRANSPORT,
    ProviderError,
)

MAX_MESSAGE = 300

_BILLING_WORDS = re.compile(r"insufficient_quota|billing|credit balance|payment|quota exceeded|exceeded your current quota|spending limit", re.I)
_CONTEXT_WORDS = re.compile(
    r"context[_ ]length|context window|maximum context|prompt is too long|too many tokens|request_too_large|"
    r"reduce the length|input is too long|exceeds the context",
    re.I,
)
_KEYISH = re.compile(r"\b(sk|key|rk|pk|ak)-[A-Za-z0-9_\-]{6,}|\bsk-ant-[A-Za-z0-9_\-]+", re.I)
_SERVER_TYPES = {"overloaded_error", "api_error", "server_error", "timeout_error"}


def _names(exc: BaseException) -> set:
    return {cls.__name__ for cls in type(exc).__mro__}


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask the given secrets and anything that looks like an API key."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _KEYISH.sub("***", text)
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 3] + "..."
    return text


def retry_after(headers: Any) -> Optional[float]:
    """Seconds to wait from ``retry-after-ms``, ``retry-after`` (seconds) or
    ``retry-after`` (an HTTP date); ``None`` when absent or unreadable."""
    if headers is None:
        return None
    get = getattr(headers, "get", None)
    if get is None:
        return None
    ms = get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except (TypeError, ValueError):
            pass
    value = get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    import email.utils  # only for the rare HTTP-date form; keeps plugin loading cheap

    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _body_error(exc: BaseException) -> tuple:
    """(message, type, code) from an SDK error body, either provider's shape."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    if isinstance(body, dict):
        return (str(body.get("message") or ""), str(body.get("type") or ""), str(body.get("code") or ""))
    return (str(getattr(exc, "message", "") or exc), str(getattr(exc, "type", "") or ""), "")


def _status_reason(status: int, text: str) -> str:
    if status == 429:
        return BILLING if _BILLING_WORDS.search(text) else RATE_LIMIT
    if status == 402:
        return BILLING
    if status in (401, 403):
        return BILLING if status == 403 and _BILLING_WORDS.search(text) else AUTH
    if status == 413 or _CONTEXT_WORDS.search(text):
        return CONTEXT_OVERFLOW
    if status == 408:
        return TRANSPORT
    if status == 409 or status >= 500:
        return SERVER
    return BAD_REQUEST


def classify(exc: BaseException, *, provider: str = "", secrets: Iterable[str] = ()) -> ProviderError:
    """Map any exception from a model call to a classified ``ProviderError``."""
    if isinstance(exc, ProviderError):
        return exc
    secrets = tuple(secrets)
    names = _names(exc)

    def make(reason: str, message: str, status: Optional[int] = None, wait: Optional[float] = None) -> ProviderError:
        return ProviderError(redact(message, secrets), reason=reason, status_code=status, retry_after=wait, provider=provider)

    status = getattr(exc, "status_code", None)
    if "APIStatusError" in names and isinstance(status, int):
        message, kind, code = _body_error(exc)
        text = " ".join((message, kind, code))
        headers = getattr(getattr(exc, "response", None), "headers", None)
        wait = retry_after(headers)
        if status == 200:  # an error event inside a stream (Anthropic)
            reason = RATE_LIMIT if kind == "rate_limit_error" else SERVER
            return make(reason, f"error in stream: {message or kind}", None, wait)
        reason = _status_reason(status, text)
        if reason == BAD_REQUEST and "image" in text.lower():  # a user's image the model (or its size) refuses
            message = f"{message or f'HTTP {status}'} (for a model that takes no images: agent.image_input_mode: " \
                      "text gives it where they are kept, for vision_analyze)"
        return make(reason, message or f"HTTP {status}", status, wait)
    if "APITimeoutError" in names or "TimeoutException" in names or isinstance(exc, TimeoutError):
        err = make(TRANSPORT, "no bytes within the stream idle timeout (agent.stream_idle_timeout, --timeout; an "
                              "answer not streamed: agent.api_timeout)")
        err.silent = True
        return err
    if "APIConnectionError" in names or "TransportError" in names or isinstance(exc, (ConnectionError, OSError)):
        detail = getattr(exc, "__cause__", None) or exc
        said = f"connection failed: {type(detail).__name__}: {detail}"
        from plugins.tls import advice

        hint = advice(said, "the provider option ssl_ca_cert",
                      "the provider options ssl_client_cert and ssl_client_key")
        return make(CONFIG, f"{said}; {hint}") if hint else make(TRANSPORT, said)  # a TLS refusal: no retries
    if isinstance(exc, json.JSONDecodeError):
        return make(TRANSPORT, f"malformed JSON from the provider: {exc.msg}")
    if isinstance(exc, UnicodeDecodeError):  # bytes damaged on the way: another attempt may get them whole
        return make(TRANSPORT, f"the provider sent text that is not UTF-8 ({exc.reason} at byte {exc.start})")
    if "APIResponseValidationError" in names:
        return make(BAD_REQUEST, f"response did not match the API schema: {exc}")
    if "APIError" in names:  # an error payload inside a stream (OpenAI), no status
        message, kind, code = _body_error(exc)
        return stream_event_error(message, kind, code, provider=provider, secrets=secrets)
    if "CredentialsError" in names or "Could not resolve authentication" in str(exc) or "Missing credentials" in str(exc):
        return make(CONFIG, f"missing credentials: {exc}")
    return make(BAD_REQUEST, f"{type(exc).__name__}: {exc}")


def stream_event_error(message: str, kind: str = "", code: str = "", *, provider: str = "", secrets: Iterable[str] = ()) -> ProviderError:
    """An error event inside a stream (no HTTP status): classified by its wording."""
    text = " ".join((message or "", kind or "", code or ""))
    if _CONTEXT_WORDS.search(text):
        reason = CONTEXT_OVERFLOW
    elif "rate_limit" in text:
        reason = RATE_LIMIT
    elif _BILLING_WORDS.search(text):
        reason = BILLING
    else:
        reason = SERVER
    detail = message or kind or code or "unknown"
    return ProviderError(redact(f"error in stream: {detail}", secrets), reason=reason, provider=provider)


def truncated(provider: str, what: str) -> ProviderError:
    """A stream that ended without its final event: a failure, not a short answer."""
    return ProviderError(f"stream ended before {what}", reason=TRANSPORT, provider=provider)


def missing_key(provider: str, env_var: str) -> ProviderError:
    return ProviderError(
        f"no API key: set the environment variable {env_var} (`hermes config set {env_var} ...` keeps it in the .env "
        "beside config.yaml; or name another one with api_key_env in config)",
        reason=CONFIG,
        provider=provider,
    )


__all__ = ["classify", "retry_after", "redact", "stream_event_error", "truncated", "missing_key"]
