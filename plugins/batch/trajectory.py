"""A finished run as one line of hermes-agent's batch-runner trajectory file: ``conversations`` (ShareGPT
``from``/``value`` turns in the Hermes function-calling format: ``<tools>`` in the system turn,
``<think>``, ``<tool_call>`` and ``<tool_response>`` blocks), ``tool_stats`` and ``tool_error_counts`` over
every tool offered, ``completed``, ``partial``, ``api_calls``, ``toolsets_used`` and ``metadata``. Ours
adds ``exit_reason``, ``usage``, ``session_id`` and a hash of the prompt's line (a rerun skips the prompts
already written, and notices a dataset changed under it)."""

from __future__ import annotations

import json
import time
from typing import Any

SYSTEM = (
    "You can call functions to answer the user. Their signatures are listed inside <tools></tools> as JSON. "
    "When no function helps, answer in plain language; never guess the value of an argument.\n"
    "<tools>\n{tools}\n</tools>\n"
    "To call a function, write a JSON object with its name and arguments inside <tool_call></tool_call>, e.g.\n"
    "<tool_call>\n{{\"name\": \"<function name>\", \"arguments\": {{\"<argument>\": \"<value>\"}}}}\n</tool_call>\n"
    "Each result comes back inside <tool_response></tool_response>."
)


def tools_json(tools: list) -> str:
    """The offered tools as the system turn lists them (name, description, JSON schema)."""
    return json.dumps([{"name": t.name, "description": t.description, "parameters": t.parameters, "required": None}
                       for t in tools], ensure_ascii=False)


def _think(msg: dict) -> str:
    """Every model turn opens with a ``<think>`` block (empty without reasoning): one shape to train on."""
    reasoning = msg.get("reasoning")
    inner = reasoning.strip() if isinstance(reasoning, str) and reasoning.strip() else ""
    return f"<think>\n{inner}\n</think>\n" if inner else "<think>\n</think>\n"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.replace("<REASONING_SCRATCHPAD>", "<think>").replace("</REASONING_SCRATCHPAD>", "</think>")
    if isinstance(content, list):  # parts: their text (a trajectory is text only)
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw if isinstance(raw, dict) else {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def conversations(messages: list, prompt: str, tools: list) -> list:
    """The run's messages (the first is the prompt) as ``from``/``value`` turns."""
    turns = [{"from": "system", "value": SYSTEM.format(tools=tools_json(tools))}, {"from": "human", "value": prompt}]
    names: dict = {}  # tool call id -> tool name
    pending: list = []  # the tool responses after the last model turn
    for msg in messages[1:]:
        role = msg.get("role")
        if role == "tool":
            try:
                content = json.loads(msg.get("content") or "")
            except (TypeError, ValueError):
                content = _text(msg.get("content"))
            call_id = msg.get("tool_call_id", "")
            body = json.dumps({"tool_call_id": call_id, "name": names.get(call_id, "unknown"), "content": content},
                              ensure_ascii=False)
            pending.append(f"<tool_response>\n{body}\n</tool_response>")
            continue
        if pending:
            turns.append({"from": "tool", "value": "\n".join(pending)})
            pending = []
        if role == "assistant":
            value = _think(msg) + _text(msg.get("content")).strip()
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {} if isinstance(call, dict) else {}
                names[call.get("id", "")] = fn.get("name", "")
                value += "\n<tool_call>\n" + json.dumps({"name": fn.get("name", ""),
                                                        "arguments": _arguments(fn.get("arguments"))},
                                                       ensure_ascii=False) + "\n</tool_call>"
            turns.append({"from": "gpt", "value": value.strip()})
        elif role == "user":
            turns.append({"from": "human", "value": _text(msg.get("content"))})
    if pending:
        turns.append({"from": "tool", "value": "\n".join(pending)})
    return turns


def failed(content: Any) -> bool:
    """Did a tool's result say it failed (an ``error`` that is set, ``success: false``, ``Error:`` text)?"""
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return not content.strip() or content.strip().lower().startswith("error")
    if isinstance(content, dict):
        inner = content.get("content")
        return content.get("error") is not None or content.get("success") is False or (
            isinstance(inner, dict) and inner.get("error") is not None)
    return False


def tool_stats(messages: list, tools: list) -> dict:
    """``{tool: {count, success, failure}}`` for every tool offered (zeros too: one schema per batch)."""
    stats = {t.name: {"count": 0, "success": 0, "failure": 0} for t in tools}
    names: dict = {}
    for msg in messages:
        for call in msg.get("tool_calls") or [] if msg.get("role") == "assistant" else []:
            name = ((call or {}).get("function") or {}).get("name", "")
            names[call.get("id", "")] = name
            stats.setdefault(name, {"count": 0, "success": 0, "failure": 0})["count"] += 1
        if msg.get("role") == "tool" and msg.get("tool_call_id") in names:
            stats[names[msg["tool_call_id"]]]["failure" if failed(msg.get("content")) else "success"] += 1
    return stats


def entry(index: int, prompt: str, line_hash: str, result: dict, tools: list, toolsets: list) -> dict:
    """The trajectory line of one finished run (``result``: ``TurnResult.to_dict()``)."""
    stats = tool_stats(result["messages"], tools)
    return {
        "prompt_index": index,
        "conversations": conversations(result["messages"], prompt, tools),
        "metadata": {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%S"), "model": result.get("model"),
                     "provider": result.get("provider"), "session_id": result.get("session_id"),
                     "prompt_hash": line_hash},
        "completed": result["exit_reason"] == "completed",
        "partial": result["exit_reason"] not in ("completed", "error"),
        "exit_reason": result["exit_reason"],
        "api_calls": result["api_calls"],
        "usage": result.get("usage") or {},
        "toolsets_used": toolsets,
        "tool_stats": stats,
        "tool_error_counts": {name: s["failure"] for name, s in stats.items()},
    }
