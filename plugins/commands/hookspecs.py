"""Hooks ``hermes run`` fires (added through ``register_hookspecs``)."""

from __future__ import annotations

from typing import Any, Optional

from kernel import hookspec


@hookspec(firstresult=True)
def terminal_front_end(quiet: bool, config: Any) -> Optional[Any]:
    """``hermes run`` builds the display of its agent (the built-in
    ``terminal`` plugin answers). The object's hook implementations
    (``on_stream_delta``, ``approve_tool_call`` ...) become that agent's
    callbacks, so other agents of the process never see them.

    :param quiet: show nothing but the answer.
    :param config: the loaded configuration.
    :return: an object with hook implementations and ``end_answer(text)``
        (called with the final answer after the turn), or ``None``.
    """
