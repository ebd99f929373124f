"""The kernel's records: what flows between the loop and its plugins, the decisions hooks answer with, and the
exceptions (:class:`Interrupted`, :class:`ProviderError`, :class:`ToolError`). The Protocols plugins implement are
in :mod:`kernel.protocols`."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Optional

from kernel.exceptions import Interrupted, describe, is_user_interrupt  # noqa: F401 - exported here too

@dataclass(frozen=True)
class ProviderConfig:
    """One way to reach a model: the primary from config, or a fallback entry. ``api_mode`` names a registered model
    provider (``chat_completions``, ``anthropic_messages``, ...; empty: the ``resolve_api_mode`` hook picks).
    ``api_key_env`` names the variable that holds the key: keys never live here."""

    model: str = ""
    provider: str = ""
    base_url: str = ""
    api_mode: str = ""
    api_key_env: str = ""
    extra: tuple = field(default=(), hash=False)  # sorted (key, value) pairs of provider options (a mapping too)

    def with_(self, **changes: Any) -> "ProviderConfig":
        return replace(self, **changes)

    def options(self) -> dict:
        return dict(self.extra)

    def label(self) -> str:
        """A short human name: ``provider:model``, ``api_mode:model``, or the model alone (``ollama/llama3``)."""
        who = self.provider or self.api_mode
        return f"{who}:{self.model}" if who and self.model else self.model or who or "provider"

    @classmethod
    def configured(cls, settings: Any, **given: Optional[str]) -> "ProviderConfig":
        """The primary provider: each field from ``given`` (a front end's ``-m``, ``--provider`` ...) unless it is
        None, else from the config key of its name; ``provider_options`` become the provider's options."""
        fields = {key: str(given.get(key) if given.get(key) is not None else settings.get(key) or "")
                  for key in ("model", "provider", "base_url", "api_mode", "api_key_env")}
        options = settings.section("provider_options")  # timeout, prompt_cache, thinking budget ...
        return cls(extra=tuple(sorted(options.items())), **fields)


@dataclass
class ModelRequest:
    """What the loop asks a provider for. ``messages`` are internal OpenAI-style dicts (system first), converted by
    the provider at its edge; ``tools`` are neutral schemas ``{"name", "description", "parameters"}``;
    ``tool_choice`` is ``"auto"`` or ``"none"`` (the grace call offers tools but forbids them)."""

    model: str
    messages: list
    tools: list = field(default_factory=list)
    tool_choice: str = "auto"
    stream: bool = True
    max_tokens: Optional[int] = None
    session_id: str = ""
    extra: dict = field(default_factory=dict)
    cancel_event: threading.Event = field(default_factory=threading.Event)

    @property
    def cancelled(self) -> bool:
        """True once the loop abandoned this call (interrupt or timeout).
        Streaming providers check it between chunks and stop reading."""
        return self.cancel_event.is_set()


@dataclass
class ModelResponse:
    """One assistant turn, in internal form: ``tool_calls`` in the OpenAI shape ``{"id", "type": "function",
    "function": {"name", "arguments": <str>}}``; ``extra`` holds keys to keep on the stored message (reasoning items
    a provider must echo back next time)."""

    content: Optional[str] = None
    tool_calls: list = field(default_factory=list)
    reasoning: Optional[str] = None
    usage: dict = field(default_factory=dict)
    finish_reason: Optional[str] = None
    model: Optional[str] = None
    extra: dict = field(default_factory=dict)

    def to_message(self) -> dict:
        msg: dict = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = self.tool_calls
        if self.reasoning:
            msg["reasoning"] = self.reasoning
        msg.update(self.extra)
        return msg


@dataclass
class ApiCall:
    """One model call as the API hooks see it: who made it, where it goes, and the request as sent (never a
    credential). ``number`` counts the turn's calls from 1 (retries, fallbacks, the grace call too); ``ended_at`` is
    set before ``post_api_request`` or ``api_request_error``; ``aux_task`` names the work of a call beside the
    conversation (``Agent.complete_once``: ``compression``, ``approval``, ...)."""

    request: ModelRequest
    session_id: str
    task_id: str
    turn_id: str
    api_request_id: str
    platform: str
    provider: str  # the provider's name, else the API mode it resolved to
    api_mode: str
    base_url: str
    number: int
    user_message: str = ""
    started_at: float = 0.0
    ended_at: float = 0.0
    aux_task: str = ""
    replayed: bool = False  # a durable engine answered from its record: the provider was not called again

    @property
    def model(self) -> str:
        return self.request.model

    @property
    def duration(self) -> float:
        """Seconds from sending to the answer or the failure (0 before either)."""
        return max(0.0, self.ended_at - self.started_at) if self.ended_at else 0.0


@dataclass
class Turn:
    """Per-turn state the loop and the tools share."""

    task_id: str
    turn_id: str
    user_message: str  # its text, as hooks get it
    content: Any = None  # the user's message as sent: its text, or content parts (text and ``image_url``)
    api_request_id: str = ""
    api_calls: int = 0
    usage: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    turn_state: dict = field(default_factory=dict)  # the fallback policy's, as ProviderFailure.turn_state
    durable: bool = False  # a durable engine took the turn: its steps go through ``durable_step``
    cut: bool = False  # the latest answer stopped at the model's output limit (finish_reason "length")
    parts: list = field(default_factory=list)  # the parts of an answer so stopped, which the model is going on with


@dataclass
class Step:
    """One step of a turn as a durable engine sees it (the ``durable_step`` hook): ``kind`` says what runs,
    ``record`` is the kernel's record of it: ``turn`` (the :class:`Turn`), ``model`` (one model call, its
    :class:`ApiCall`), ``tool`` (one handler run, its :class:`ToolCall`), ``approval`` (asking
    ``approve_tool_call``, the ToolCall), ``store`` (one ``append_messages``, the messages), or a plugin's kind."""

    kind: str
    record: Any


class ExitReason:
    """Why a turn ended (``TurnResult.exit_reason``)."""

    COMPLETED = "completed"  # the model answered
    INTERRUPTED = "interrupted_by_user"
    BUDGET = "budget_exhausted"  # the iteration budget ran out (the grace call's answer, if any, is final)
    ERROR = "error"  # the providers failed, or a bug in the loop or a plugin


@dataclass
class TurnResult:
    """What one turn produced: ``exit_reason`` (an :class:`ExitReason`), the answer (``final_response``, None without
    one) and the whole history. ``to_dict()`` is the ``--json`` document; ``result["key"]`` reads the same keys, as
    hermes-agent's ``run_conversation`` returns them."""

    final_response: Optional[str]
    messages: list
    exit_reason: str
    error: Optional[str]
    interrupt_message: Optional[str]
    api_calls: int
    usage: dict
    session_id: str
    task_id: str
    model: str
    provider: str

    @property
    def interrupted(self) -> bool:
        return self.exit_reason == ExitReason.INTERRUPTED

    def to_dict(self) -> dict:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "interrupted": self.interrupted}

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_dict().get(key, default)


USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


def normalize_usage(input_tokens: int = 0, output_tokens: int = 0, cache_read_tokens: int = 0,
                    cache_write_tokens: int = 0, reasoning_tokens: int = 0, request_count: int = 1) -> dict:
    """The one usage shape of the kernel, with the ecosystem's two extra spellings: ``prompt_tokens`` (input + cache
    read + cache write) and ``total_tokens`` (prompt + output)."""
    vals = [int(v or 0) for v in (input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens)]
    usage = dict(zip(USAGE_KEYS, vals))
    usage["request_count"] = int(request_count or 0)
    usage["prompt_tokens"] = vals[0] + vals[2] + vals[3]
    usage["total_tokens"] = usage["prompt_tokens"] + vals[1]
    return usage


def add_usage(total: dict, more: dict) -> dict:
    """Sum two usage dicts key by key (missing keys count as 0)."""
    out = dict(total)
    for key, value in (more or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = out.get(key, 0) + value
    return out


# Provider failures (``ProviderError.reason``) and the decisions of ``on_provider_error``
RATE_LIMIT = "rate_limit"
BILLING = "billing"
AUTH = "auth"
SERVER = "server"  # overloaded or 5xx
TRANSPORT = "transport"  # timeout, dropped connection, cut stream
CONTEXT_OVERFLOW = "context_overflow"
BAD_REQUEST = "bad_request"
CONFIG = "config"  # it cannot work as configured: missing key, unknown mode, no server listening locally


class ProviderError(Exception):
    """A classified provider failure: providers raise it, the loop hands it to
    ``on_provider_error`` and executes the decision."""

    def __init__(self, message: str, *, reason: str = TRANSPORT, status_code: Optional[int] = None,
                 retry_after: Optional[float] = None, provider: str = "", silent: bool = False):
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.status_code = status_code
        self.retry_after = retry_after
        self.provider = provider
        self.silent = silent  # a timeout: the provider sent nothing for too long

    @property
    def retryable(self) -> bool:
        """A failure that may pass on its own (rate limit, server, transport)."""
        return self.reason in (RATE_LIMIT, SERVER, TRANSPORT)

    def __str__(self) -> str:  # "rate_limit (429): too many requests"
        code = f" ({self.status_code})" if self.status_code else ""
        return f"{self.reason}{code}: {self.message}"


@dataclass
class ProviderFailure:
    """Everything the fallback policy needs to decide what happens next."""

    error: ProviderError
    config: ProviderConfig  # the provider that failed
    primary: ProviderConfig
    attempt: int  # consecutive failed attempts on ``config`` in this call
    delta_shown: bool  # a streamed delta of this attempt already reached an on_stream_delta listener
    history: list  # (label, str(error)) of every failure this turn
    turn_state: dict  # scratch space for the policy, reset every turn


@dataclass(frozen=True)
class Retry:
    """Call the same provider again after ``delay`` seconds."""

    delay: float = 0.0


@dataclass(frozen=True)
class SwitchProvider:
    """Continue this turn on another provider (a fallback entry)."""

    config: ProviderConfig


@dataclass(frozen=True)
class RefreshCredentials:
    """Ask the provider to re-read its key, then call it again."""


@dataclass(frozen=True)
class Compress:
    """Hand the history to the context engine, then call again."""


@dataclass(frozen=True)
class GiveUp:
    """End the turn with exit reason ``error`` and this message."""

    message: str = ""


class ToolError(Exception):
    """Raise from a tool handler for an error the model should read and act
    on; the result becomes ``{"error": message}``."""


@dataclass
class Tool:
    """A tool offered to the model. ``handler(args: dict, ctx: ToolContext)`` returns a str (usually JSON) or a
    JSON-able value, and may be ``async``. ``parallel_safe`` tools run in a pool beside others, ``interactive`` ones
    (they ask the user) alone; a ``path_arg`` tool runs in parallel only when its path overlaps no other in the batch.
    ``check`` hides the tool when it returns False (missing binary, no key). A tool the providers cannot offer is a
    ``ValueError`` here: offered, it would fail every model call."""

    name: str
    description: str
    parameters: dict
    handler: Callable[..., Any]
    toolset: str = "default"
    parallel_safe: bool = False
    interactive: bool = False
    path_arg: Optional[str] = None
    check: Optional[Callable[[], bool]] = None
    plugin: str = ""

    def __post_init__(self):
        import json
        import re

        if not isinstance(self.name, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            why = "its name must be 1-64 letters, digits, '_' or '-' (what the providers accept)"
        elif not isinstance(self.description, str):
            why = f"its description must be a string, not {type(self.description).__name__}"
        elif not isinstance(self.parameters, dict):
            why = f"its parameters must be a JSON Schema mapping, not {type(self.parameters).__name__}"
        elif not callable(self.handler):
            why = "its handler is not callable"
        else:
            try:
                json.dumps(self.parameters)
            except (TypeError, ValueError) as exc:
                why = f"its parameters are not JSON ({exc})"
            else:
                return
        raise ValueError(f"tool {self.name!r}: {why}")

    def schema(self) -> dict:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass
class ToolCall:
    """One call of a tool by the model, as the tool hooks see it: what it calls (``name``, ``args``: the very dict the
    handler gets, so changing it in place rewrites the call), who asked (the ids), and the tool that runs it (``None``
    for a name no tool has)."""

    name: str
    args: dict
    id: str  # the call's id from the model
    session_id: str = ""
    task_id: str = ""
    turn_id: str = ""
    api_request_id: str = ""  # the model call that asked for the tool
    tool: Optional[Tool] = None
    index: int = 0  # its place in the model's batch
    raw_arguments: str = ""
    parse_error: str = ""  # why the arguments could not be read (``args`` is then ``{}``)
    replayed: bool = False  # a durable engine answered from its record: the handler did not run again


@dataclass
class ToolOutcome:
    """What became of one tool call: the result the model reads (secrets masked) and how it ended."""

    result: str
    status: str = "ok"  # ok / error / blocked / interrupted
    error_type: Optional[str] = None  # plugin_block, unknown_tool, invalid_arguments, tool_error, exception ...
    error_message: Optional[str] = None
    duration_ms: float = 0.0  # how long the handler ran (0 when it did not)


@dataclass(frozen=True)
class Block:  # the decisions of ``pre_tool_call``
    """Do not run the call; the model reads ``message``. The first block wins."""

    message: str = ""


@dataclass(frozen=True)
class Approve:
    """Run the call only if ``approve_tool_call`` says yes (nobody answering is no)."""

    message: str = ""
    rule_key: str = ""  # the rule that flagged it (``inline_code``, ...)


@dataclass(frozen=True)
class Rewrite:
    """Run the call with these arguments instead (the guards then judge them again)."""

    args: dict = field(default_factory=dict)


@dataclass
class ToolContext:
    """Passed to every tool handler: who is calling and a way to report progress."""

    agent: Any
    tool_name: str
    tool_call_id: str
    task_id: str
    session_id: str
    turn_id: str
    api_request_id: str = ""

    def progress(self, message: str) -> None:
        """Report progress of a long-running tool (spinner text, gateway updates)."""
        self.agent.emit(
            "on_tool_progress",
            tool_name=self.tool_name,
            tool_call_id=self.tool_call_id,
            message=str(message),
        )
