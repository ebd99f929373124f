"""Hook specs: lifecycle (see :mod:`kernel.hookspecs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

from kernel import hookspec

if TYPE_CHECKING:  # annotations only: importing the specs stays cheap
    from kernel.agent import Agent
    from kernel.types import ApiCall, Approve, Block, ModelResponse, ProviderError, Rewrite, ToolCall, ToolOutcome


@hookspec
def on_session_start(session_id: str, model: str, platform: str, provider: str, parent_session_id: Optional[str],
                     reason: str, agent: Agent) -> None:
    """A session begins: the first turn of a new session, a resumed session's
    first turn in this process, or the continuation after compression.

    :param session_id: the session that begins.
    :param model: the model of the current provider.
    :param platform: where the agent runs (``cli`` for ``hermes chat``, ``run`` for ``hermes run``, a gateway's name).
    :param provider: the current provider's label.
    :param parent_session_id: the session it continues after compression or an undo, else ``None``.
    :param reason: ``new``, ``resume``, ``compression`` or ``undo`` (a continuation without the last exchange).
    """


@hookspec
def on_session_end(session_id: str, task_id: str, turn_id: str, completed: bool, interrupted: bool, model: str,
                   platform: str, exit_reason: str, usage: dict, agent: Agent) -> None:
    """A turn ended (every ``run_conversation`` call), as hermes-agent names it.

    :param completed: the turn produced a final answer.
    :param interrupted: the user interrupted it.
    :param model: the model that answered last.
    :param exit_reason: ``completed``, ``interrupted_by_user``, ``budget_exhausted`` or ``error``.
    :param usage: the turn's summed, normalized usage (:func:`kernel.types.normalize_usage`).
    """


@hookspec
def on_session_finalize(session_id: str, platform: str, reason: str, agent: Agent) -> None:
    """A true session boundary: the agent is closed or the session replaced.

    :param session_id: the session that ends.
    :param reason: ``shutdown``, ``new_session``, ``compression`` or ``undo``.
    """


@hookspec
def pre_llm_call(session_id: str, task_id: str, turn_id: str, user_message: str, conversation_history: list,
                 is_first_turn: bool, model: str, platform: str, agent: Agent) -> Union[dict, str, None]:
    """Once per turn, before the first model call. Context returned here goes into this turn's request only: never
    into the stored history or the system prompt, so prompt caching holds. All answers are joined.

    :param user_message: the text of the user's message of this turn (without its images).
    :param conversation_history: the history before this turn (a copy).
    :param is_first_turn: the session has no earlier turn.
    :param model: the current model.
    :return: ``{"context": str}``, a non-empty ``str``, or ``None``.
    """


@hookspec
def post_llm_call(session_id: str, task_id: str, turn_id: str, user_message: str, assistant_response: str,
                  conversation_history: list, model: str, platform: str, agent: Agent) -> None:
    """Once per turn, after the final answer (not when the turn was interrupted or failed).

    :param user_message: the text of the user's message of this turn (without its images).
    :param assistant_response: the final answer, as stored.
    :param conversation_history: the whole history, this turn included (a copy).
    :param model: the model that answered.
    """


@hookspec
def transform_llm_output(response_text: str, session_id: str, model: str, platform: str,
                         agent: Agent) -> Optional[str]:
    """The final answer is about to be stored and returned; fires before ``post_llm_call``.

    :param response_text: the model's final answer.
    :param model: the model that answered.
    :return: a non-empty ``str`` to replace the answer (the first wins), or ``None``.
    """


@hookspec
def pre_api_request(call: ApiCall, agent: Agent) -> None:
    """Before every model call, on every path (first call, retries,
    fallbacks, the grace call, auxiliary calls of plugins).

    :param call: the call: ids, provider, and the request (``call.request``; its ``extra`` reaches the provider).
    """


@hookspec
def post_api_request(call: ApiCall, response: ModelResponse, agent: Agent) -> None:
    """After every successful model call.

    :param call: the call, with ``ended_at`` and ``duration`` set.
    :param response: the answer (``content``, ``tool_calls``, normalized ``usage``, ``finish_reason``).
    """


@hookspec
def api_request_error(call: ApiCall, error: ProviderError, attempt: int, agent: Agent) -> None:
    """After every failed model call, before the fallback policy decides.

    :param call: the call, with ``ended_at`` and ``duration`` set.
    :param error: the classified failure (``reason``, ``status_code``, ``message``, ``retryable``).
    :param attempt: consecutive failed attempts on this provider, from 1.
    """


@hookspec
def pre_tool_call(call: ToolCall, agent: Agent) -> Union[Block, Approve, Rewrite, None]:
    """Before every tool call runs, exactly once per call, on the agent's thread. When a ``Rewrite`` changed the
    arguments the hook fires once more with the final ones, so guards judge what will run (guards should be
    ``trylast`` to see in-place rewrites too). An implementation that raises or overruns its deadline blocks the
    call (fails closed).

    :param call: the call: ``name``, ``args`` (the very dict the tool will receive: changing it in place rewrites
        the call), the ids, and ``tool`` (the :class:`kernel.types.Tool` that will run it).
    :return: ``Block(message)`` (the model reads the message; the first block wins), ``Approve(message, rule_key)``
        (ask ``approve_tool_call``; nobody answering means no), ``Rewrite(args)``, or ``None`` (all from
        :mod:`kernel.types`).
    """


@hookspec
def post_tool_call(call: ToolCall, outcome: ToolOutcome, agent: Agent) -> None:
    """After every tool call, once, on the agent's thread, on every outcome
    (run, blocked, failed, unknown tool, interrupted).

    :param call: the call, with the arguments it ran with (``{}`` when they did not parse).
    :param outcome: what became of it: ``result`` (what the model will read, secrets masked), ``status`` (``ok``,
        ``error``, ``blocked`` or ``interrupted``), ``error_type`` (``plugin_block``, ``unknown_tool``,
        ``invalid_arguments``, ``tool_error``, ``exception`` ...), ``error_message`` and ``duration_ms`` (0 when the
        handler did not run).
    """


@hookspec
def transform_tool_result(call: ToolCall, outcome: ToolOutcome, agent: Agent) -> Optional[str]:
    """After ``post_tool_call``: the last chance to change what the model reads.

    :param call: the call.
    :param outcome: what became of it (``outcome.result`` is what the model would read).
    :return: a ``str`` to replace the result (the first wins), or ``None``.
    """


@hookspec
def on_pre_compress(session_id: str, messages: list, agent: Agent) -> Optional[str]:
    """The context engine is about to compress the history: flush memories
    now, and hand over what the summary must keep.

    :param session_id: the session about to be compressed.
    :param messages: the history as it is (a copy).
    :return: notes for the summary (every answer goes to the engine's ``compress(..., notes=[...])``), or ``None``.
    """


@hookspec
def system_prompt(agent: Agent, session_id: str, model: str, platform: str) -> Optional[str]:
    """Contribute a part of the system prompt. Fires once per session; the prompt is then kept as it is so provider
    prompt caches hit. Parts are joined with blank lines in hook order, after the configured identity.

    :param session_id: the session the prompt is for.
    :param model: the current model.
    :return: a ``str``, or ``None``.
    """
