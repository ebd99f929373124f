"""The ``compressor`` context engine: summarise the middle of a long history.

Pre-flight (before each turn's model call) the kernel asks
:meth:`Compressor.should_compress`: is the context (the larger of a chars/4
estimate of the history and the last real ``prompt_tokens``) past
``compression.threshold`` (0.50) of the model's context window? When a call
fails with a context overflow, the fallback policy asks for a forced
compression (``reason="overflow"``).

:meth:`Compressor.compress` keeps the first ``compression.protect_first_n`` (3)
and the last ``compression.protect_last_n`` (20) messages, moves both
boundaries so that an assistant's tool calls always stay with their results,
and replaces the middle with one user message holding a summary written by the
auxiliary model when ``auxiliary.compression`` names one (``model``, and
optionally ``provider``, ``base_url``, ``api_mode``, ``api_key_env``,
``timeout``; a cheaper model than the one in the conversation), else by the
agent's current model (``agent.complete_once``). If that call fails the
summary is a deterministic list of the compressed messages, so compression
never fails for want of a model. The kernel does the rest: ``on_pre_compress``
first, then a new session whose parent is the old one.

In ``hermes chat``: ``/compress`` compresses now, ``/context`` shows how full
the window is.

Config: ``compression.enabled`` (pre-flight only; a forced compression after
an overflow always runs), ``compression.threshold``,
``compression.protect_first_n``, ``compression.protect_last_n``, ``compression.target_ratio`` (0.2: recent
messages kept whole take at most that share of the threshold; fewer are kept when they are big), and
``model_context_length`` to override the window of the table below.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Optional

from kernel import hookimpl
from kernel.keys import Key
from kernel.protocols import ContextEngine
from kernel.messages import problems, repair
from plugins import auxiliary

CONFIG_KEYS = [
    Key("compression.enabled", bool, True, "compress before a call once the history passes the threshold"),
    Key("compression.threshold", float, 0.5, "the share of the context window that triggers compression", minimum=0.01),
    Key("compression.protect_first_n", int, 3, "messages at the start that are never summarised", minimum=0),
    Key("compression.protect_last_n", int, 20, "recent messages that are never summarised, unless they alone pass "
        "target_ratio", minimum=0),
    Key("compression.target_ratio", float, 0.2, "the most of the threshold the recent messages kept whole may take "
        "(fewer are kept)", minimum=0.01),
    Key("compression.abort_on_summary_failure", bool, False, "when the summary model fails, leave the history as "
        "it is (a call past the window then fails) instead of keeping a plain list of the messages"),
    Key("model_context_length", int, None, "the model's context window in tokens, when the built-in table is wrong", minimum=1024),
    Key("auxiliary.compression", dict, None, "a cheaper model for summaries: {model, provider, base_url, ...}"),
]
DEFAULTS = {k.name: k.default for k in CONFIG_KEYS}

log = logging.getLogger(__name__)

NAME = "compressor"
DEFAULT_CONTEXT_LENGTH = 128_000
CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600  # a rough cost of one image part
SUMMARY_PREFIX = "[Summary of earlier conversation"
SUMMARY_END = "[End of summary]"
MAX_ASKED = 4_000  # characters of the user's latest message a summary keeps word for word
PREVIOUS_SUMMARY_CHARS = 6_000  # of an earlier summary kept in a fallback summary
MAX_MESSAGE_CHARS = 2_000  # per message in the transcript given to the summariser
FALLBACK_LINE_CHARS = 160

# Context windows (tokens) by model-name prefix; the longest matching prefix wins.
CONTEXT_WINDOWS = {
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude": 200_000,
    "gemini": 1_048_576,
    "deepseek": 128_000,
    "llama-3.1": 128_000,
    "llama-3.3": 128_000,
    "mistral-large": 128_000,
}

SUMMARY_INSTRUCTIONS = (
    "You compress the middle of a conversation between a user and an AI assistant that uses "
    "tools, so the assistant can continue the work with less context. Write a faithful, dense "
    "summary in the conversation's language: the user's goals and requests (quote exact "
    "requirements), decisions made, what was done with which tools and their important results "
    "(file paths, commands, numbers, errors), what is still open. Keep any earlier summary's "
    "facts. Do not invent anything. Write only the summary."
)


def context_window(model: str, override: Any = None) -> int:
    """The context window of ``model`` in tokens (``override`` wins when set)."""
    if override is not None:
        return int(override)
    name = (model or "").lower().rsplit("/", 1)[-1]
    best = ""
    for prefix in CONTEXT_WINDOWS:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return CONTEXT_WINDOWS[best] if best else DEFAULT_CONTEXT_LENGTH


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(part.get("text") if isinstance(part.get("text"), str) else f"[{part.get('type', 'part')}]")
        return "\n".join(parts)
    return "" if content is None else str(content)


def message_chars(msg: dict) -> int:
    content = msg.get("content")
    size = len(_content_text(content))
    if isinstance(content, list):  # an image costs far more than its placeholder text
        size += sum(IMAGE_TOKENS * CHARS_PER_TOKEN for p in content if isinstance(p, dict) and p.get("type") not in (None, "text"))
    for call in msg.get("tool_calls") or []:
        fn = (call.get("function") or {}) if isinstance(call, dict) else {}
        size += len(str(fn.get("name") or "")) + len(str(fn.get("arguments") or ""))
    if isinstance(msg.get("reasoning"), str):
        size += len(msg["reasoning"])
    return size


def estimate_tokens(messages: list) -> int:
    """A rough token count: characters / 4, plus a few tokens per message."""
    return sum(message_chars(m) // CHARS_PER_TOKEN + 4 for m in messages if isinstance(m, dict))


def plan(messages: list, first_n: int, last_n: int) -> Optional[tuple]:
    """``(head_end, tail_start)`` of the part to summarise, or None.

    The head is the first ``first_n`` messages, extended over the results of
    a tool call it ends with; the tail is the last ``last_n`` messages,
    extended back to the assistant message whose results it starts with. So a
    tool call and its results are always on the same side.
    """
    n = len(messages)
    head_end = min(max(first_n, 0), n)
    while head_end < n and messages[head_end].get("role") == "tool":
        head_end += 1
    tail_start = max(n - max(last_n, 0), head_end)
    while head_end < tail_start < n and messages[tail_start].get("role") == "tool":
        tail_start -= 1
    if tail_start <= head_end:
        return None
    return head_end, tail_start


def usage_tokens(usage: Optional[dict]) -> tuple:
    """``(prompt, completion, total)`` tokens of a response's usage, in either
    spelling (the kernel's ``input_tokens`` and cache counts, or ``prompt_tokens``)."""
    usage = usage or {}
    prompt = usage.get("prompt_tokens")
    if prompt is None:
        prompt = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens"))
    completion = int(usage.get("output_tokens") or usage.get("completion_tokens") or 0)
    return int(prompt or 0), completion, int(usage.get("total_tokens") or int(prompt or 0) + completion)


def _tool_names(messages: list) -> dict:
    names = {}
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            if isinstance(call, dict):
                names[call.get("id")] = (call.get("function") or {}).get("name", "?")
    return names


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    keep = limit - 30
    return f"{text[: keep * 3 // 4]} [... {len(text) - keep} chars cut ...] {text[-(keep // 4):]}"


def transcript(messages: list, names: dict, per_message: int = MAX_MESSAGE_CHARS) -> str:
    """The messages as plain text for the summariser."""
    lines = []
    for msg in messages:
        role = msg.get("role")
        text = _content_text(msg.get("content"))
        if role == "tool":
            lines.append(f"[tool result of {names.get(msg.get('tool_call_id'), '?')}]: {_clip(text, per_message)}")
            continue
        entry = f"[{role}]: {_clip(text, per_message)}" if text.strip() else f"[{role}]:"
        for call in msg.get("tool_calls") or []:
            fn = (call.get("function") or {}) if isinstance(call, dict) else {}
            entry += f"\n  -> calls {fn.get('name', '?')}({_clip(str(fn.get('arguments') or ''), 300)})"
        lines.append(entry)
    return "\n".join(lines)


def fallback_summary(messages: list, names: dict, notes: str = "", max_lines: int = 120) -> str:
    """A summary made without a model: one line per compressed message."""
    lines = []
    for msg in messages:
        role = msg.get("role")
        text = " ".join(_content_text(msg.get("content")).split())
        text = text if len(text) <= FALLBACK_LINE_CHARS else text[: FALLBACK_LINE_CHARS - 3] + "..."
        if role == "tool":
            lines.append(f"- tool {names.get(msg.get('tool_call_id'), '?')} returned: {text or '(empty)'}")
            continue
        calls = [((c.get("function") or {}).get("name", "?")) for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
        line = f"- {role}: {text}" if text else f"- {role}"
        if calls:
            line += f" (called {', '.join(calls)})"
        lines.append(line)
    if len(lines) > max_lines:
        half = max_lines // 2
        lines = lines[:half] + [f"- ... {len(lines) - 2 * half} more messages ..."] + lines[-half:]
    head = "The model that writes summaries was unavailable; this is a list of the compressed messages:"
    body = "\n".join([head, *lines])
    return f"{body}\n\nNotes saved before compression:\n{notes}" if notes else body


def _merge(a: Any, b: Any) -> Any:
    """Join two user contents (str or lists of parts), ``a`` first."""
    if isinstance(a, list) or isinstance(b, list):
        parts = lambda c: c if isinstance(c, list) else ([{"type": "text", "text": c}] if c else [])  # noqa: E731
        return parts(a) + parts(b)
    return "\n\n".join(x for x in (a, b) if x)


def join(head: list, summary: dict, tail: list) -> list:
    """``head + [summary] + tail`` with user messages merged where they meet,
    so user and assistant messages still alternate."""
    out = [dict(m) for m in head]
    last_speaker = next((m for m in reversed(out) if m.get("role") in ("user", "assistant")), None)
    if last_speaker is not None and last_speaker.get("role") == "user" and out[-1] is last_speaker:
        last_speaker["content"] = _merge(last_speaker.get("content"), summary["content"])
    else:
        out.append(dict(summary))
    rest = [dict(m) for m in tail]
    if rest and rest[0].get("role") == "user" and out[-1].get("role") == "user":
        out[-1]["content"] = _merge(out[-1].get("content"), rest.pop(0).get("content"))
    return out + rest


class Compressor(ContextEngine):
    """One per agent (``factory(agent)``); counters follow hermes-agent's names."""

    name = NAME

    def __init__(
        self,
        config: Any,
        *,
        model: str = "",
        summarize: Optional[Callable[[str], str]] = None,
        agent: Any = None,
    ):
        self.config = config
        self.agent = agent  # read for the current model (fallbacks change it)
        self.model = model
        self.summarize = summarize  # tests inject one; else the agent's complete_once
        self.focus = ""  # /compress focus TOPIC: what the next summary keeps in detail
        setting = lambda name: config.get(name, DEFAULTS[name])  # noqa: E731
        self.enabled = bool(setting("compression.enabled"))
        self.threshold_percent = _fraction(setting("compression.threshold"), "compression.threshold")
        self.protect_first_n = _count(setting("compression.protect_first_n"), "compression.protect_first_n")
        self.protect_last_n = _count(setting("compression.protect_last_n"), "compression.protect_last_n")
        self.target_ratio = _fraction(setting("compression.target_ratio"), "compression.target_ratio")
        override = config.get("model_context_length")
        if override is not None and (not isinstance(override, int) or isinstance(override, bool) or override < 1024):
            from hermes.host.config import ConfigError

            raise ConfigError(f"model_context_length: expected an integer of at least 1024 tokens, got {override!r}")
        self.context_override = override
        self.auxiliary = auxiliary.provider_config(config, "compression")  # None: the agent's own model
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.compression_count = 0
        self.fallback_count = 0  # compressions that used the deterministic summary
        self._ineffective = 0  # consecutive compressions that barely shrank the history
        self.context_length = 0
        self.threshold_tokens = 0
        self.update_model(model)

    @classmethod
    def for_agent(cls, agent: Any) -> "Compressor":
        model = getattr(getattr(agent, "provider_config", None), "model", "") or ""
        return cls(agent.config, model=model, agent=agent)

    # -- model and usage
    def update_model(self, model: str) -> None:
        self.model = model or ""
        self.context_length = context_window(self.model, self.context_override)
        self.threshold_tokens = int(self.context_length * self.threshold_percent)

    def update_from_response(self, usage: dict) -> None:
        self.last_prompt_tokens, self.last_completion_tokens, self.last_total_tokens = usage_tokens(usage)

    def current_tokens(self, messages: list) -> int:
        return max(estimate_tokens(messages), self.last_prompt_tokens)

    def get_status(self) -> dict:
        return {
            "last_prompt_tokens": self.last_prompt_tokens,
            "threshold_tokens": self.threshold_tokens,
            "context_length": self.context_length,
            "usage_percent": round(100 * self.last_prompt_tokens / self.context_length, 1) if self.context_length else 0,
            "compression_count": self.compression_count,
        }

    # -- the pre-flight check
    def should_compress(self, messages: list) -> bool:
        if not self.enabled or self._ineffective >= 2:
            return False
        model = getattr(getattr(self.agent, "provider_config", None), "model", None)
        if model is not None and model != self.model:
            self.update_model(model)
        if self.current_tokens(messages) < self.threshold_tokens:
            return False
        return self._bounds(_without_system(messages)[1], forced=False) is not None

    def _bounds(self, history: list, forced: bool) -> Optional[tuple]:
        """:func:`plan`'s bounds, the tail made shorter (halved, down to the latest message) while it alone takes
        more than ``compression.target_ratio`` of the threshold (hermes-agent's key): big tool results kept whole in
        it would make every compression ineffective. After an overflow something must shrink: the tail takes a
        quarter of the window at most."""
        last_n = self.protect_last_n
        limit = self.context_length // 4 if forced else int(self.threshold_tokens * self.target_ratio)
        bounds = plan(history, self.protect_first_n, last_n)
        while last_n > 1 and ((forced and bounds is None) or estimate_tokens(
                history[bounds[1] if bounds else min(self.protect_first_n, len(history)):]) > limit):
            last_n //= 2
            bounds = plan(history, self.protect_first_n, last_n)
        return bounds

    # -- compression
    def compress(self, messages: list, *, agent: Any = None, reason: str = "preflight", notes: list = ()) -> list:
        agent = agent if agent is not None else self.agent
        system, history = _without_system(messages)
        bounds = self._bounds(history, forced=reason != "preflight")
        if bounds is None:
            return list(messages)
        head_end, tail_start = bounds
        head, previous, later = _lift_summaries(history[:head_end])
        middle, tail = later + history[head_end:tail_start], history[tail_start:]
        names = _tool_names(history)
        try:
            text = self._summary(middle, names, "\n".join(n for n in notes if n), agent, previous)
        except _NoSummary as failed:
            log.warning("not compressed: the summary model %s, and compression.abort_on_summary_failure keeps the "
                        "history as it is", failed)
            return list(messages)
        # a tail cut short may leave the request in hand to the summary: it stays word for word
        asked = "" if any(m.get("role") == "user" for m in tail) else next(
            (t for m in reversed(middle) if m.get("role") == "user"
             and not (t := _content_text(m.get("content"))).startswith(SUMMARY_PREFIX)), "")
        summary = {
            "role": "user",
            "content": (
                f"{SUMMARY_PREFIX}: {len(middle)} messages were compressed to save context. "
                "Continue from the messages after this summary; do not reply to the summary itself.]\n\n"
                f"{text}\n"
                + (f"\nThe user's latest message, word for word (the task in hand):\n{_clip(asked, MAX_ASKED)}\n"
                   if asked.strip() else "")
                + SUMMARY_END
            ),
        }
        out = join(head, summary, tail)
        if problems(out):  # only when a lifted summary left a gap inside the head
            out = repair(out)
        before, after = estimate_tokens(history), estimate_tokens(out)
        self._ineffective = self._ineffective + 1 if after > before * 0.9 else 0
        self.compression_count += 1
        self.last_prompt_tokens = 0  # stale until the next real response
        log.info("compressed %d messages (%s): ~%d -> ~%d tokens", len(middle), reason, before, after)
        return system + out

    def _fitting_transcript(self, middle: list, names: dict) -> str:
        """The transcript, cut to half the window so the summary call itself fits."""
        budget = self.context_length * CHARS_PER_TOKEN // 2
        per_message = MAX_MESSAGE_CHARS
        text = transcript(middle, names, per_message)
        while len(text) > budget and per_message > 200:
            per_message //= 2
            text = transcript(middle, names, per_message)
        return _clip(text, budget) if len(text) > budget else text

    def _summary(self, middle: list, names: dict, notes: str, agent: Any, previous: list = ()) -> str:
        summarize = self.summarize or _summarizer(agent, self.auxiliary, self.context_length)
        earlier = "\n\n".join(previous)
        if summarize is not None:
            prompt = "Conversation to summarise:\n\n" + self._fitting_transcript(middle, names)
            if earlier:
                prompt = f"Summary of what came before (fold it into your summary):\n{earlier}\n\n{prompt}"
            if notes:
                prompt += "\n\nNotes the memory saved before compression (keep what matters):\n" + notes
            if self.focus:
                prompt += f"\n\nThe user asks the summary to keep in detail what concerns: {self.focus}"
            try:
                text = summarize(prompt)
                if isinstance(text, str) and text.strip():
                    return text.strip()
                failed = "returned nothing"
            except Exception as exc:
                failed = f"call failed ({exc})"
            if self.config.get("compression.abort_on_summary_failure") is True:
                raise _NoSummary(failed)
            log.warning("the summary model %s; using the list of messages", failed)
        self.fallback_count += 1
        text = fallback_summary(middle, names, notes)
        if earlier:
            text = f"Earlier summary:\n{_clip(earlier, PREVIOUS_SUMMARY_CHARS)}\n\n{text}"
        return text


class _NoSummary(Exception):
    """The summary model failed, and config says to compress nothing then."""


def split_summary(content: Any) -> Optional[tuple]:
    """``(before, summary block, after)`` of a content holding a summary, else
    None. For a list of parts, ``before``/``after`` are lists of parts."""
    if isinstance(content, list):
        for i, part in enumerate(content):
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and text.startswith(SUMMARY_PREFIX):
                return content[:i], text, content[i + 1 :]
        return None
    if not isinstance(content, str):
        return None
    start = content.find(SUMMARY_PREFIX)
    if start == -1:
        return None
    end = content.find(SUMMARY_END, start)
    end = len(content) if end == -1 else end + len(SUMMARY_END)
    return content[:start].strip(), content[start:end], content[end:].strip()


def _lift_summaries(head: list) -> tuple:
    """Take an earlier summary out of the protected head so it is folded into
    the new one instead of piling up. A merged summary message reads
    ``<head text> <summary> <later user text>``: the head text stays; the
    later text is newer than the head, so it joins the part to summarise.
    Returns ``(head, earlier summaries, messages to summarise first)``."""
    out, blocks, later = [], [], []
    for msg in head:
        parts = split_summary(msg.get("content")) if msg.get("role") == "user" else None
        if parts is None:
            out.append(msg)
            continue
        before, block, after = parts
        blocks.append(block)
        if after:
            later.append({"role": "user", "content": after})
        if before:
            out.append({**msg, "content": before})
    return out, blocks, later


def _summary_max_tokens(context_length: int) -> int:
    return max(1024, min(context_length // 20, 8_000))


def _summarizer(agent: Any, aux: Any, context_length: int) -> Optional[Callable[[str], str]]:
    """A summariser on the auxiliary model (or the conversation's when
    ``aux`` is None), through the agent's one model-call path: the API hooks
    see it, an interrupt stops it, and a failure means the deterministic
    summary."""
    call = auxiliary.caller(agent, aux, "compression")
    if call is None:
        return None
    max_tokens = _summary_max_tokens(context_length)

    def summarize(prompt: str) -> str:
        messages = [{"role": "system", "content": SUMMARY_INSTRUCTIONS}, {"role": "user", "content": prompt}]
        return call(messages, max_tokens=max_tokens)

    return summarize


def _without_system(messages: list) -> tuple:
    messages = [m for m in messages or [] if isinstance(m, dict)]
    if messages and messages[0].get("role") == "system":
        return messages[:1], messages[1:]
    return [], messages


def _fraction(value: Any, key: str) -> float:
    from hermes.host.config import ConfigError

    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value <= 1:
        raise ConfigError(f"{key}: expected a number above 0 and at most 1 (a share of the context window), got {value!r}")
    return float(value)


def _count(value: Any, key: str) -> int:
    from hermes.host.config import ConfigError

    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{key}: expected a whole number of messages (0 or more), got {value!r}")
    return value



@hookimpl
def register_config(declare):
    for key in CONFIG_KEYS:
        declare(key)

@hookimpl
def register_context_engines(register, config):
    register(NAME, Compressor.for_agent, description="summarises the middle of long conversations")


@hookimpl
def on_session_start(agent):
    if _summarizes(agent):
        auxiliary.check(agent, "compression")


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent, online):
    return auxiliary.doctor_lines(agent, "compression", online) if _summarizes(agent) else None


def _summarizes(agent) -> bool:
    return agent.config.get("context.engine", NAME) == NAME and agent.config.get("compression.enabled", True)


def _command(name: str):
    """One of :mod:`plugins.compress_commands`, imported when it runs (every start registers it: hermes run too)."""
    def run(raw_args: str, agent: Any) -> str:
        from plugins import compress_commands

        return getattr(compress_commands, name)(raw_args, agent)

    return run


@hookimpl
def register_slash_commands(register):
    register("compress", _command("compress_command"), description="summarise the middle of the conversation now: "
             "/compress [here N | focus TOPIC | --preview]")
    register("context", _command("context_command"), description="how full the model's context window is")
