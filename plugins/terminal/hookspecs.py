"""Hooks ``hermes chat`` fires (added through ``register_hookspecs``)."""

from __future__ import annotations

from typing import Any, Optional

from kernel import hookspec


@hookspec
def on_slash_command(name: str, args: str, agent: Any) -> None:
    """The user sent a chat command (``/name args``), before it runs: the
    chat's own commands and the plugins' alike, known or not.

    :param name: the command, without the slash.
    :param args: the rest of the line, stripped.
    :param agent: the :class:`kernel.agent.Agent` of the chat.
    :return: ignored (an observer: it cannot stop or change the command).
    """


@hookspec(firstresult=True)
def queue_user_message(content: str, agent: Any) -> Optional[bool]:
    """A plugin asks the chat to send ``content`` as the user's next message
    (hermes-agent's ``ctx.inject_message``); the chat's display answers. It is
    sent when the command or turn now running ends, as if the user typed it.

    :param content: the message.
    :param agent: the :class:`kernel.agent.Agent` whose chat should send it.
    :return: ``True`` when queued; ``None`` when no chat takes messages (``hermes run``).
    """
