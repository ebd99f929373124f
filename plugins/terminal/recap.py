"""The recap a resumed chat starts with (hermes-agent's ``display.resume_*`` keys), and the one-line quotes of what was
said that chat's ``/history`` and other commands show."""

from __future__ import annotations

from typing import Optional

from kernel.messages import text_of


def one_line(content) -> str:
    return " ".join(text_of(content).split())


def clip(text: str, width: int) -> str:
    return text[:width] + ("..." if len(text) > width else "")


def spoken(history: list) -> list:
    """``(role, text)`` of what the user and the model said (tool calls and results left out)."""
    return [(m["role"], one_line(m.get("content"))) for m in history
             if m.get("role") in ("user", "assistant") and one_line(m.get("content"))]


def last_exchanges(said: list, exchanges: int, widths: tuple = (200, 200)) -> list:
    """The last ``exchanges`` of ``said`` (from a user's message on), a line each clipped at ``widths`` (the user's,
    the model's)."""
    return [f"  {'you' if role == 'user' else 'hermes'}: {clip(text, widths[role != 'user'])}"
            for role, text in _tail(said, exchanges)]


def _tail(entries: list, exchanges: int) -> list:
    """The entries (``(role, ...)``) from the ``exchanges``-th last user's on."""
    starts = [i for i, entry in enumerate(entries) if entry[0] == "user"]
    return entries[starts[-exchanges] if len(starts) >= exchanges else 0:] if exchanges else []


def recap(history: list, exchanges: int = 2, title: Optional[str] = None, widths: tuple = (200, 200),
          answer_lines: int = 3, tool_only: bool = False) -> list:
    """What a resumed chat shows first: its title (or first prompt), its size, and the last exchanges, so the user
    knows where they are: each message clipped (an answer at ``answer_lines`` lines and ``widths[1]`` characters),
    but the last answer whole, which is where they left off; ``tool_only``: also the answers that only called tools,
    as ``[2 tool calls: NAMES]``."""
    said = spoken(history)
    if not said:
        return ["(resuming an empty session)"]
    first = next((text for role, text in said if role == "user"), said[0][1])
    head = f"resuming: {clip(title, 70) if title else clip(first, 70)} ({len(history)} messages)"
    shown = []
    for message in history:
        role, text = message.get("role"), text_of(message.get("content")).strip()
        calls = _calls(message) if role == "assistant" else ""
        if role == "user" and text or role == "assistant" and (text or calls and tool_only):
            shown.append((role, text, calls))
    tail = _tail(shown, exchanges)
    last = max((i for i, (role, text, _) in enumerate(tail) if role == "assistant" and text), default=None)
    lines = []
    for i, (role, text, calls) in enumerate(tail):
        if role == "user":
            lines.append(f"  you: {clip(' '.join(text.split()), widths[0])}")
            continue
        if i != last:
            kept = text.splitlines()
            text = clip("\n".join(kept[:answer_lines]) + (" ..." if len(kept) > answer_lines else ""), widths[1])
        first_line, *rest = (f"{text} {calls}".strip()).splitlines() or [""]
        lines += [f"  hermes: {first_line}", *(f"          {line}" for line in rest)]
    return [head, *lines]


def _calls(message: dict) -> str:
    """An answer's tool calls as a recap shows them: ``[2 tool calls: terminal, read_file]``."""
    calls = message.get("tool_calls") or []
    names = list(dict.fromkeys(str((c.get("function") or {}).get("name", "?")) for c in calls if isinstance(c, dict)))
    if not calls:
        return ""
    listed = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    return f"[{len(calls)} tool call{'s' if len(calls) > 1 else ''}: {listed}]"


def recap_of(app, session_id: str, agent=None) -> list:
    """The recap of a stored session, with its title when the store has one; with the chat's ``agent``
    (``/resume``), a note when the session was started with another model or other toolsets, which the chat keeps."""
    from plugins.front import ask_store

    info = ask_store(app, "session_info", needed=False, session_id=session_id)
    info = info if isinstance(info, dict) else {}
    get = app.config.get  # hermes-agent's display.resume_* keys
    exchanges = 0 if get("display.resume_display") == "minimal" else int(get("display.resume_exchanges"))
    lines = recap(ask_store(app, "load_session", session_id=session_id) or [], exchanges, info.get("title"),
                  (int(get("display.resume_max_user_chars")), int(get("display.resume_max_assistant_chars"))),
                  int(get("display.resume_max_assistant_lines")), not get("display.resume_skip_tool_only"))
    return lines + (_kept(agent, info, session_id) if agent is not None else [])


def _kept(agent, started: dict, session_id: str) -> list:
    from hermes.cli.app import program

    def toolsets(names) -> str:
        return "every toolset" if names is None or "all" in names else f"toolsets {','.join(names) or '(none)'}"

    model = agent.provider_config.model
    differ = [(theirs, mine) for theirs, mine in ((f"model {started.get('model', model)}", f"model {model}"),
                                                  (toolsets(started.get("toolsets")), toolsets(agent.toolsets)))
              if theirs != mine]
    return [f"note: that session was started with {' and '.join(t for t, _ in differ)}; this chat keeps "
            f"{' and '.join(m for _, m in differ)} (`{program()} chat --resume {session_id}` starts with the "
            "session's)"] if differ else []
