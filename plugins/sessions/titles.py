"""A conversation's title, from its first exchange (hermes-agent's ``auxiliary.title_generation``): after the first
answer, a model call beside the conversation names it in a few words, so ``hermes sessions list`` and ``/resume``
show what each was about. It runs on a thread of its own (the conversation goes on at once) on a child agent (a call
on the conversation's own agent would change its provider under the next turn). The session store keeps it, through
its ``/title`` command; a title set meanwhile (``/title``) stays. The front ends with a person there ask for it
(``hermes chat``, its background tasks, the gateway's chats): ``hermes run`` and embedded agents make no call of
their own."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

KEY = "auxiliary.title_generation"
PROMPT = ("Name the conversation below in three to seven words: its topic or aim, in the language the user writes in"
          "{language}. Answer with the title alone: no quotes, no full stop, no \"Title:\".")
SHOWN = 500  # characters of the question and of the answer the call sees
WAIT = 5.0  # seconds the chat's end waits for a title still coming

log = logging.getLogger("hermes.sessions")


def wanted(agent: Any) -> bool:
    """The first exchange of a chat whose session is stored, titling not turned off."""
    block = agent.config.get(KEY) or {}
    if isinstance(block, dict) and block.get("enabled") is False:
        return False
    if getattr(agent.provider_config, "api_mode", "") == "scripted":  # a call beside it would take the next turn's step
        return False
    if not agent.hook.append_messages.get_hookimpls() or _title_command(agent) is None:  # --no-save, or no store
        return False
    return sum(1 for message in agent.messages if message.get("role") == "user") == 1


def start(agent: Any, question: str, answer: str) -> threading.Thread:
    """Name ``agent``'s session on a thread of its own; the thread (the chat's end waits for it a while)."""
    thread = threading.Thread(target=_name, args=(agent, agent.session_id, question, answer), daemon=True,
                              name="session-title")
    thread.start()
    return thread


def _title_command(agent: Any):
    from plugins.commands.hookspecs import SLASH_COMMANDS

    return agent.host.registry[SLASH_COMMANDS].get("title")


def _stored_title(agent: Any, session_id: str) -> str:
    return (agent.host.pm.hook.session_info(session_id=session_id, agent=agent) or {}).get("title") or ""


def _name(agent: Any, session_id: str, question: str, answer: str) -> None:
    from plugins.auxiliary import joined, provider_config

    child = None
    try:
        block = agent.config.get(KEY) or {}
        language = str(block.get("language") or "").strip() if isinstance(block, dict) else ""
        aux = provider_config(agent.config, "title_generation")
        child = agent.spawn_child(provider=joined(agent, aux) if aux is not None else None)
        said = child.complete_once([
            {"role": "system", "content": PROMPT.format(language=f" (in {language})" if language else "")},
            {"role": "user", "content": f"User: {question[:SHOWN]}\n\nAssistant: {answer[:SHOWN]}"}],
            max_tokens=500, task="title_generation")  # room for a reasoning model's thinking
        title = _clean(said)
        if title and not _stored_title(agent, session_id) and agent.session_id == session_id:  # a /title meanwhile wins
            said = _title_command(agent).value(title, agent)
            if not _stored_title(agent, session_id):  # the store's own words say why it could not keep it
                log.warning("no title for session %s: %s", session_id, said)
    except Exception as exc:  # noqa: BLE001 - a title is never worth a chat: one warning
        log.warning("no title for session %s (%s): `/title TEXT` names it", session_id, str(exc).splitlines()[0]
                    if str(exc) else type(exc).__name__)
    finally:
        if child is not None:
            agent.release_child(child)


def _clean(said: str) -> str:
    """The title in a model's answer: its thinking, quotes, a "Title:" and a closing full stop taken off."""
    text = re.sub(r"<think>.*?</think>", "", said or "", flags=re.S).strip()
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = re.sub(r"^(title\s*:\s*)", "", line.strip("*#\"'` "), flags=re.I).strip("\"'` ").rstrip(".")
    return line if len(line) <= 80 else line[:77].rstrip() + "..."
