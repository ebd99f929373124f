"""Hooks ``hermes chat`` fires (added through ``register_hookspecs``)."""

from __future__ import annotations

from typing import Any

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
