"""The compressor's chat commands: ``/compress [here N | focus TOPIC | --preview]`` and ``/context``."""

from __future__ import annotations

from typing import Any

from plugins.compressor import Compressor, _without_system, estimate_tokens


COMPRESS_USAGE = "usage: /compress [here N | focus TOPIC | --preview]"


def compress_command(raw_args: str, agent: Any) -> str:
    """``/compress``: compress the conversation now, whatever its size; ``here N`` keeps the last N exchanges whole
    (hermes-agent's), ``focus TOPIC`` asks the summary to keep TOPIC in detail, ``--preview`` (``--dry-run``) says
    what would be summarised and changes nothing."""
    engine, words = agent.context_engine, raw_args.split()
    if words and not isinstance(engine, Compressor):
        return "the compressor is not this agent's context engine: /compress takes no arguments here"
    kept, focus = engine and engine.protect_last_n, ""
    if words[:1] == ["here"]:
        if len(words) > 2 or (len(words) == 2 and not words[1].isdigit()):
            return COMPRESS_USAGE
        engine.protect_last_n = _last_exchanges(agent.messages, int(words[1]) if len(words) == 2 else 1)
    elif words[:1] == ["focus"] and len(words) > 1:
        focus = " ".join(words[1:])
    elif words in (["--preview"], ["--dry-run"]):
        return _preview(engine, agent.messages)
    elif words:
        return COMPRESS_USAGE
    before, old = len(agent.messages), agent.session_id
    engine_focus = engine.focus if engine else ""
    try:
        if engine:
            engine.focus = focus
        done = agent.compress("manual")
    finally:
        if engine:
            engine.protect_last_n, engine.focus = kept, engine_focus
    if not done:
        return "nothing to compress (the conversation fits in the protected head and tail)"
    return f"compressed {before} messages to {len(agent.messages)}; continuing in session {agent.session_id} (parent {old})"


def _last_exchanges(messages: list, count: int) -> int:
    """How many messages the last ``count`` exchanges (a user's message and all after it) take."""
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    return len(messages) - starts[-count] if 0 < count <= len(starts) else len(messages) if count else 0


def _preview(engine: "Compressor", messages: list) -> str:
    history = _without_system(messages)[1]
    bounds = engine._bounds(history, forced=True)
    if bounds is None:
        return "nothing to compress (the conversation fits in the protected head and tail)"
    head_end, tail_start = bounds
    return (f"/compress would summarise messages {head_end + 1} to {tail_start} of {len(history)} "
            f"(~{estimate_tokens(history[head_end:tail_start])} tokens), keeping the first {head_end} and the last "
            f"{len(history) - tail_start} as they are; nothing is changed")


def context_command(raw_args: str, agent: Any) -> str:
    """``/context``: how full the context window is."""
    engine = getattr(agent, "context_engine", None)
    if not isinstance(engine, Compressor):
        return "the compressor is not this agent's context engine"
    status = engine.get_status()
    estimate = estimate_tokens(agent.messages)
    return (
        f"~{max(estimate, status['last_prompt_tokens'])} of {status['context_length']} tokens "
        f"(compresses at {status['threshold_tokens']}); compressions so far: {status['compression_count']}"
    )
