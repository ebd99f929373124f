"""Hook specs: callbacks and questions (see :mod:`kernel.hookspecs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from kernel import hookspec

if TYPE_CHECKING:  # annotations only: importing the specs stays cheap
    from kernel.agent import Agent


# ==========================================================================
# Callbacks (what a front end or a test probe implements)


@hookspec
def on_stream_delta(text: str, agent: Agent) -> None:
    """A piece of the answer streamed from the model, on the agent's thread.

    :param text: the new text.
    """


@hookspec
def on_reasoning(text: str, agent: Agent) -> None:
    """A piece of the model's reasoning (extended thinking) streamed.

    :param text: the new reasoning text.
    """


@hookspec
def on_thinking(active: bool, agent: Agent) -> None:
    """The agent started or stopped waiting on the model.

    :param active: ``True`` when the wait starts, ``False`` when it ends.
    """


@hookspec
def on_status(status: str, detail: str, agent: Agent) -> None:
    """The loop changed state (a front end shows it as a status line).

    :param status: ``thinking``, ``tools``, ``retrying``, ``fallback``, ``compressing``, ``budget``, ``interrupted``.
    :param detail: a short sentence for a person.
    """


@hookspec
def on_step(step: int, messages: list, agent: Agent) -> None:
    """One iteration ended (a model call and the tool calls it asked for).

    :param step: the iteration's number in this turn, from 1.
    :param messages: the messages this step added.
    """


@hookspec
def on_tool_start(tool_name: str, args: dict, tool_call_id: str, agent: Agent) -> None:
    """A tool is about to run (``pre_tool_call`` allowed it).

    :param args: its final arguments.
    """


@hookspec
def on_tool_progress(tool_name: str, tool_call_id: str, message: str, agent: Agent) -> None:
    """A running tool reported progress (``ToolContext.progress``).

    :param message: what the tool said.
    """


@hookspec
def on_tool_complete(tool_name: str, tool_call_id: str, result: str, duration_ms: int, status: str,
                     agent: Agent) -> None:
    """A tool call finished, whatever the outcome.

    :param result: the result the model reads.
    :param duration_ms: how long it ran.
    :param status: ``ok``, ``error``, ``blocked`` or ``interrupted``.
    """


@hookspec
def on_tool_call_generated(tool_name: str, tool_call_id: str, agent: Agent) -> None:
    """A tool call was parsed from the model's stream, before it runs.

    """


# ==========================================================================
# Questions


@hookspec(firstresult=True)
def approve_tool_call(tool_name: str, args: dict, message: str, rule_key: str,
                      agent: Agent) -> Union[bool, str, None]:
    """May a tool call that ``pre_tool_call`` flagged run? Waiting for the person does not count against
    ``plugins.hook_timeout``. Nobody answering means no (fails closed).

    :param args: its arguments.
    :param message: why it was flagged, for a person.
    :param rule_key: the rule that flagged it (``inline_code``, ...).
    :return: ``True``/``"once"`` (this call), ``"session"`` (this rule for the rest of the session), ``"always"``
        (saved in ``command_allowlist``), ``False``/``"deny"``, or ``None`` when you cannot ask.
    """
