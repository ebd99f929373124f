"""What the reference models of a preset are asked, side by side, and how their answers reach the acting model: at
the end of its request, never in the history (the next request of the turn is built again from the history)."""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

ADVICE = "moa.advice"  # agent.state: (turn id, the advice) for a fanout: user_turn preset
ADVISER = ("You advise an AI agent working on the task in the conversation below. The agent has tools and acts; you "
           "cannot call tools, and only the agent reads what you write. Say briefly what is going on, what the agent "
           "should do next, and what could go wrong. Never claim to have run or seen anything the conversation does "
           "not show.")
QUESTION = "What should the agent do next, and what should it watch out for?"
RESULT_CHARS = 2000  # of one tool result in what the references read: its head and tail
MOST_AT_ONCE = 8
log = logging.getLogger("hermes.moa")


def _text(content: Any) -> str:
    if isinstance(content, list):  # parts: the text ones (an image is named, not sent)
        return "\n".join(p.get("text", "") if p.get("type") == "text" else f"[{p.get('type')}]"
                         for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else f"{text[:most // 2]}\n[... {len(text) - most} characters ...]\n" \
                                          f"{text[-most // 2:]}"


def transcript(messages: list) -> str:
    """The conversation as one text: a reference model cannot take tool calls without the tools, and need not."""
    parts = []
    for message in messages:
        role, text = message.get("role"), _text(message.get("content"))
        if role == "user":
            parts.append(f"## User\n{text}")
        elif role == "assistant":
            calls = [f"{c['function'].get('name')}({_clip(str(c['function'].get('arguments') or ''), 300)})"
                     for c in message.get("tool_calls") or () if isinstance(c, dict) and "function" in c]
            parts.append("## Agent\n" + "\n".join(filter(None, [text, f"[calls {', '.join(calls)}]" * bool(calls)])))
        elif role == "tool":
            parts.append(f"## Tool result\n{_clip(text, RESULT_CHARS)}")
    return "\n\n".join(parts)


def consult(agent: Any, preset: Any, messages: list) -> str:
    """Ask each reference model, side by side (each on a child agent of its own), and put their answers together."""
    from plugins.auxiliary import joined

    asked = [{"role": "system", "content": ADVISER},
             {"role": "user", "content": f"{transcript(messages)}\n\n{QUESTION}"}]
    labels = [ref.label() for ref in preset.references]
    agent.emit("on_status", status="moa", detail=f"asking {', '.join(labels)}")

    def ask(ref):
        child = agent.spawn_child(toolsets=[], provider=joined(agent, ref))
        try:
            return child.complete_once(asked, max_tokens=preset.reference_max_tokens, task="moa")
        finally:
            agent.release_child(child)

    with ThreadPoolExecutor(min(MOST_AT_ONCE, len(labels))) as pool:
        futures = [pool.submit(ask, ref) for ref in preset.references]
    answers, failed = [], []
    for label, future in zip(labels, futures):
        try:
            answer = (future.result() or "").strip()
        except Exception as exc:  # one reference's failure: the others still advise
            failed.append(f"{label}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            continue
        if answer:
            answers.append((label, answer))
    if failed:
        agent.emit("on_status", status="moa", detail=f"no advice from {'; '.join(failed)}")
    _trace(agent, preset, asked, answers, failed)
    if not answers:
        return ""
    return ("[Advice from other models on the conversation so far (Mixture of Agents). Weigh it against what you "
            "see; you decide and act.]\n\n" + "\n\n".join(f"### {label}\n{answer}" for label, answer in answers))


def advise(agent: Any, preset: Any, call: Any) -> None:
    """Put the references' advice at the end of ``call``'s request: asked again at every model call of the turn, or
    once a turn with ``fanout: user_turn``."""
    kept = agent.state.get(ADVICE)
    if preset.fanout == "user_turn" and kept and kept[0] == call.turn_id:
        advice = kept[1]
    else:
        advice = consult(agent, preset, call.request.messages)
        agent.state[ADVICE] = (call.turn_id, advice)
    if preset.max_tokens:
        call.request.max_tokens = preset.max_tokens
    if not advice:
        return
    messages = list(call.request.messages)  # a new list and message: the history's own are left as they are
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "user" and isinstance(last.get("content"), (str, list)):
        content = last["content"]
        messages[-1] = {**last, "content": f"{content}\n\n{advice}" if isinstance(content, str)
                        else [*content, {"type": "text", "text": advice}]}
    else:  # after tool results: a user message of its own (the providers merge it with the results where needed)
        messages.append({"role": "user", "content": advice})
    call.request.messages = messages


def _trace(agent: Any, preset: Any, asked: list, answers: list, failed: list) -> None:
    """``moa.save_traces``: one JSON line per consultation, in ``moa-traces/SESSION.jsonl`` (or ``moa.trace_dir``)."""
    if not agent.config.get("moa.save_traces"):
        return
    from pathlib import Path

    from hermes.host.paths import data_dir

    folder = Path(str(agent.config.get("moa.trace_dir") or "")).expanduser() if agent.config.get("moa.trace_dir") \
        else data_dir() / "moa-traces"
    record = {"time": time.time(), "session_id": agent.session_id, "preset": preset.name, "asked": asked,
              "answers": [{"model": label, "text": text} for label, text in answers], "failed": failed}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{agent.session_id}.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    except OSError as exc:
        log.warning("moa.save_traces: cannot write to %s: %s", folder, exc.strerror or exc)
