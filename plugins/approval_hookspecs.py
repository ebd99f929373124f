"""Hooks the approval plugin fires around the approval question (added
through ``register_hookspecs``): observers, for audit logs and dashboards."""

from __future__ import annotations

from typing import Any

from kernel import hookspec


@hookspec
def on_approval_request(tool_name: str, command: str, message: str, rule_key: str, agent: Any) -> None:
    """A flagged call is about to be put to the person (``approve_tool_call``).

    :param tool_name: the tool.
    :param command: the shell command, or ``""`` for a tool without one.
    :param message: why it was flagged, as the person reads it.
    :param rule_key: the rule that flagged it (``inline_code``, ...).
    :param agent: the :class:`kernel.agent.Agent` whose tool it is.
    :return: ignored (an observer: it cannot answer or veto).
    """


@hookspec
def on_approval_response(tool_name: str, command: str, message: str, rule_key: str, choice: str,
                         agent: Any) -> None:
    """The approval question was answered, or nobody could answer it.

    :param tool_name: the tool.
    :param command: the shell command, or ``""``.
    :param message: why it was flagged.
    :param rule_key: the rule that flagged it.
    :param choice: ``once``, ``session``, ``always``, ``deny``, or ``nobody``
        (no front end could ask: the call is refused).
    """
