"""What a test scripts: the steps the server answers with, and the requests
it records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"
IMAGES = "/v1/images/generations"  # OpenAI's: a reply's text is the image, base64 (or a 1x1 PNG)
SPEECH = "/v1/audio/speech"  # OpenAI's: a reply's text is the audio, base64 (or a short silent WAV)
TRANSCRIPTIONS = "/v1/audio/transcriptions"  # OpenAI's (multipart): a reply's text is the transcript
PATHS = (CHAT, RESPONSES, MESSAGES, IMAGES, SPEECH, TRANSCRIPTIONS)
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
    bad_bytes_after: Optional[int] = None  # a delta frame whose text is not UTF-8, after N delta frames
    keepalive_for: float = 0.0  # seconds of SSE keep-alive comments (and nothing else) before the first frame
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


def bad_bytes(after: int = 1, text: Union[str, list, None] = "partial answer", **kw: Any) -> Step:
    """A delta frame whose text holds bytes that are not UTF-8, after ``after`` delta frames."""
    return Step(text=text, bad_bytes_after=after, **kw)


def keepalive(seconds: float, **kw: Any) -> Step:
    """SSE keep-alive comments for ``seconds`` (no event at all), then the answer."""
    return Step(keepalive_for=seconds, **kw)


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
