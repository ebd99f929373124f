"""The message schema: OpenAI-style dicts, one validator, one repair function.

Roles: ``system`` (only first), ``user``, ``assistant`` (may carry ``tool_calls`` and ``reasoning``), ``tool``
(carries ``tool_call_id``). The alternation rules (from the original's loop):

* after the system message, user and assistant messages alternate, starting
  with a user message;
* an assistant message with ``tool_calls`` is followed by exactly one tool
  message per call id, before anything else;
* only tool messages repeat; after the results the assistant speaks again
  (or the user, with a message sent while the tools ran).

Providers reject histories that break these rules, so the loop keeps them,
and histories loaded from disk go through :func:`repair` first."""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any, Iterable

ROLES = ("system", "user", "assistant", "tool")

CORRUPT_ARGUMENTS_MARKER = "[hermes: the arguments of this tool call were unreadable and were dropped]"
MISSING_RESULT = "[hermes: no result was recorded for this tool call; it was probably interrupted]"
CONTINUATION = "[hermes: the conversation continues from here]"
UNANSWERED = "[hermes: interrupted by the user before an answer]"  # an unanswered prompt stays a turn of its own
GO_ON = "[hermes: your answer was cut off at the output limit; continue exactly where it stopped, repeating nothing]"


class MessageSchemaError(ValueError):
    """A history breaks the schema; ``problems`` lists every finding."""

    def __init__(self, problems: list):
        super().__init__("; ".join(problems))
        self.problems = problems


def problems(messages: Iterable[Any]) -> list:
    """Every way ``messages`` breaks the schema (an empty list means valid)."""
    found: list = []
    pending: dict = {}  # tool_call_id -> index of its assistant message
    last_speaker = None  # "user" / "assistant", tool messages ignored
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            found.append(f"message {i}: not a dict")
            continue
        role = msg.get("role")
        if role not in ROLES:
            found.append(f"message {i}: unknown role {role!r}")
            continue
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in pending:
                found.append(f"message {i}: tool result {call_id!r} answers no open tool call")
            else:
                del pending[call_id]
            if not isinstance(msg.get("content"), (str, list)):
                found.append(f"message {i}: tool result content must be a string")
            last_speaker = "tool"  # after results, the assistant (or a user) speaks again
            continue
        if pending:
            found.append(f"message {i}: tool call(s) {sorted(pending)} have no result before this {role} message")
            pending.clear()
        if role == "system":
            if i != 0:
                found.append(f"message {i}: a system message is only allowed first")
            continue
        if last_speaker is None and role != "user":
            found.append(f"message {i}: the conversation must start with a user message")
        elif last_speaker == role:
            found.append(f"message {i}: two {role} messages in a row")
        last_speaker = role
        content = msg.get("content")
        if content is not None and not isinstance(content, (str, list)):
            found.append(f"message {i}: content must be a string, a list of parts or null")
        if role == "assistant" and msg.get("tool_calls"):
            for call in msg["tool_calls"]:
                call_id = call.get("id") if isinstance(call, dict) else None
                fn = call.get("function") if isinstance(call, dict) else None
                if not call_id or not isinstance(fn, dict) or not fn.get("name"):
                    found.append(f"message {i}: malformed tool call {call!r:.80}")
                    continue
                if not isinstance(fn.get("arguments"), str):
                    found.append(f"message {i}: tool call {call_id!r} arguments must be a JSON string")
                if call_id in pending:
                    found.append(f"message {i}: duplicate tool call id {call_id!r}")
                pending[call_id] = i
    if pending:
        found.append(f"end: tool call(s) {sorted(pending)} have no result")
    return found


def validate(messages: Iterable[Any]) -> None:
    """Raise :class:`MessageSchemaError` if ``messages`` breaks the schema."""
    if found := problems(messages):
        raise MessageSchemaError(found)


def text_of(content: Any) -> str:
    """The text of a message content: a str, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "" if content is None else str(content)


def valid_text(value: Any) -> Any:
    """``value`` as text any UTF-8 writer takes: a surrogate pair split in two joined, a lone surrogate U+FFFD."""
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace") if isinstance(value, str) else value


def tool_message(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": valid_text(content)}  # a tool's output too


def _merge_content(a: Any, b: Any) -> Any:
    if a in (None, ""):
        return b
    if b in (None, ""):
        return a
    if isinstance(a, list) or isinstance(b, list):
        as_parts = lambda c: c if isinstance(c, list) else [{"type": "text", "text": str(c)}]  # noqa: E731
        return as_parts(a) + as_parts(b)
    return f"{a}\n\n{b}"


def _clean_content(value: Any) -> Any:
    if value is None or isinstance(value, (str, list)):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _clean_tool_calls(calls: Any) -> list:
    cleaned, seen = [], set()
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        fn = call.get("function")
        if not isinstance(fn, dict) or not fn.get("name"):
            continue
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or call_id in seen:
            call_id = f"call_{uuid.uuid4().hex[:12]}"
        seen.add(call_id)
        args = fn.get("arguments")
        if isinstance(args, dict):
            args = json.dumps(args, ensure_ascii=False)
        try:
            if not isinstance(json.loads(args), dict):
                raise ValueError
        except (TypeError, ValueError, RecursionError):
            args = json.dumps({"_invalid_arguments": CORRUPT_ARGUMENTS_MARKER})
        cleaned.append({**call, "id": call_id, "type": "function", "function": {**fn, "arguments": args}})
    return cleaned


def repair(messages: Iterable[Any]) -> list:
    """A valid copy of a history loaded from disk: consecutive user (and plain assistant) messages merged, an error
    result for a call without one, orphan results dropped, unreadable arguments replaced by a marker, a leading system
    message kept. Nothing the user or the model said is lost."""
    out: list = []
    pending: list = []  # call ids of the last assistant message still waiting for results
    spoken = False  # a user or assistant message is in ``out`` already

    def close_pending():
        for call_id in pending:
            out.append(tool_message(call_id, json.dumps({"error": MISSING_RESULT})))
        pending.clear()

    for i, raw in enumerate(messages):
        if not isinstance(raw, dict) or raw.get("role") not in ROLES:
            continue
        msg = copy.deepcopy(raw)
        role = msg["role"]
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id in pending:
                pending.remove(call_id)
                msg["content"] = _clean_content(msg.get("content")) or ""
                out.append(msg)
            continue  # orphan or duplicate result
        close_pending()
        if role == "system":
            if not out:
                out.append(msg)
            continue  # a system message in the middle carries no conversation
        msg["content"] = _clean_content(msg.get("content"))
        if role == "assistant":
            calls = _clean_tool_calls(msg.get("tool_calls"))
            if calls:
                msg["tool_calls"] = calls
            else:
                msg.pop("tool_calls", None)
        prev = out[-1] if out else None
        if not spoken and role == "assistant":  # a history must start with the user
            out.append({"role": "user", "content": CONTINUATION})
            prev = out[-1]
        spoken = True
        if prev is not None and prev["role"] == role and not prev.get("tool_calls"):
            prev["content"] = _merge_content(prev.get("content"), msg.get("content"))
            if role == "assistant":
                if msg.get("reasoning"):
                    prev["reasoning"] = _merge_content(prev.get("reasoning"), msg["reasoning"])
                if msg.get("tool_calls"):
                    prev["tool_calls"] = msg["tool_calls"]
                    pending.extend(c["id"] for c in msg["tool_calls"])
            continue
        out.append(msg)
        if role == "assistant" and msg.get("tool_calls"):
            pending.extend(c["id"] for c in msg["tool_calls"])
    close_pending()
    return out


def append_user(messages: list, content: Any) -> dict:
    """Append a user message, merging into a trailing user message so the
    alternation holds (a redirect after the user's prompt, or a history loaded so)."""
    if messages and messages[-1].get("role") == "user":
        messages[-1]["content"] = _merge_content(messages[-1].get("content"), content)
        return messages[-1]
    msg = {"role": "user", "content": content}
    messages.append(msg)
    return msg
