"""Hooks the ``clarify`` and ``delegate_task`` tools of ``agent-tools`` fire
(added through ``register_hookspecs``)."""

from __future__ import annotations

from typing import Any, Optional

from kernel import hookspec


@hookspec(firstresult=True)
def clarify(question: str, choices: list, agent: Any) -> Optional[str]:
    """The ``clarify`` tool asks the user a question. A front end that can
    ask answers; waiting for the person does not count against
    ``plugins.hook_timeout``.

    :param question: the model's question.
    :param choices: up to four suggested answers (may be empty: free text).
    :param agent: the :class:`kernel.agent.Agent` asking.
    :return: the answer, or ``None`` if you cannot ask (the tool then
        tells the model nobody answered).
    """


@hookspec
def subagent_start(parent_session_id: str, parent_turn_id: str, parent_subagent_id: Optional[str],
                   child_session_id: str, child_subagent_id: str, child_role: str, child_goal: str,
                   agent: Any) -> None:
    """``delegate_task`` built a child agent and is about to run it.

    :param parent_session_id: the parent's session.
    :param parent_turn_id: the parent's turn that called ``delegate_task``.
    :param parent_subagent_id: the parent's own subagent id when it is a child itself, else ``None``.
    :param child_session_id: the child's session.
    :param child_subagent_id: ``<tool_call_id>-<n>``, the n-th task of the call.
    :param child_role: ``leaf`` (cannot delegate further) or ``orchestrator``.
    :param child_goal: the task's goal as the parent wrote it.
    :param agent: the parent :class:`kernel.agent.Agent`.
    """


@hookspec
def subagent_stop(parent_session_id: str, parent_turn_id: str, child_session_id: str, child_role: str,
                  child_summary: str, child_status: str, duration_ms: int, agent: Any) -> None:
    """A child agent of ``delegate_task`` finished.

    :param parent_session_id: the parent's session.
    :param parent_turn_id: the parent's turn that called ``delegate_task``.
    :param child_session_id: the child's session.
    :param child_role: ``leaf`` or ``orchestrator``.
    :param child_summary: the child's final answer, clipped (what the parent's model reads).
    :param child_status: ``completed``, ``error``, ``interrupted``, ``timed_out`` or ``budget_exhausted``.
    :param duration_ms: how long the child ran.
    :param agent: the parent :class:`kernel.agent.Agent`.
    """


@hookspec
def on_clarify_request(question: str, choices: list, agent: Any) -> None:
    """The ``clarify`` tool is about to ask the user (through ``clarify``).

    :param question: the model's question.
    :param choices: the answers it offers (may be empty).
    :param agent: the :class:`kernel.agent.Agent` whose tool it is.
    :return: ignored (an observer).
    """


@hookspec
def on_clarify_response(question: str, answered: bool, agent: Any) -> None:
    """The ``clarify`` question ended. What the user typed is not passed.

    :param question: the model's question.
    :param answered: ``False`` when nobody could be asked or the answer was empty.
    """
