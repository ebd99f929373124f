"""Hook specs: fallback policy, persistence and durable steps (see :mod:`kernel.hookspecs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from kernel import hookspec

if TYPE_CHECKING:  # annotations only: importing the specs stays cheap
    from kernel.agent import Agent
    from kernel.types import ProviderConfig, ProviderFailure, Step


# ==========================================================================
# Fallback policy (the kernel executes, plugins decide)


@hookspec(firstresult=True)
def choose_provider(primary: ProviderConfig, agent: Agent) -> Optional[ProviderConfig]:
    """At the start of every turn: which provider to start on (the built-in
    fallback plugin picks a fallback while the primary cools down).

    :param primary: the configured primary provider.
    :return: a provider config, or ``None`` for the primary.
    """


@hookspec(firstresult=True)
def on_provider_error(failure: ProviderFailure, agent: Agent) -> Optional[Any]:
    """A model call failed: decide what happens next.

    :param failure: the error, the provider, the attempt and the turn's history of failures.
    :return: ``Retry(delay)``, ``SwitchProvider(config)``, ``RefreshCredentials()``, ``Compress()`` or
        ``GiveUp(message)``; ``None`` from every plugin means give up.
    """


# ==========================================================================
# Persistence


@hookspec
def append_messages(session_id: str, messages: list, agent: Agent) -> None:
    """New messages entered the history, one call per step: the user message, then each step's assistant
    message (stored before its tools run) with the step before's results; the last results come with the
    answer or at the turn's end. Append them; never rewrite what was stored.

    :param session_id: the session they belong to.
    :param messages: the new message dicts.
    """


@hookspec(firstresult=True)
def load_session(session_id: str, agent: Agent) -> Optional[list]:
    """Load a stored history to resume it. The kernel repairs what it gets.

    :param session_id: the full session id.
    :return: the stored message dicts, or ``None`` if you do not know the session.
    """


@hookspec(firstresult=True)
def claim_session(session_id: str, agent: Agent) -> Optional[str]:
    """Before a stored session is resumed, so that one process at a time
    writes it (a store takes a writer lock held until the session ends).

    :param session_id: the session to resume.
    :return: ``None`` when this process may write it, or a one-line reason
        when another process is writing it (the turn is then refused).
    """


# ==========================================================================
# Durable execution


@hookspec(firstresult=True)
def durable_step(step: Step, agent: Agent) -> Optional[Callable[[Callable[[], Any]], Any]]:
    """A step of a turn is about to run; a durable engine may record it, replay it after a crash, or run it
    elsewhere. First the turn itself (``step.kind == "turn"``, its history loaded); only a turn an engine takes
    asks about its steps: each model call, tool handler, approval question and store write (``model``, ``tool``,
    ``approval``, ``store``), on the agent's thread, in the order the turn takes them (a replay takes the same
    order), before each runs (parallel tools then run on threads of their own). With no implementation the loop
    runs as it would without this hook.

    :param step: what runs (``kind``) and the kernel's record of it (``record``, see :class:`kernel.types.Step`).
    :return: a runner ``run(work)``: it returns ``work()`` (a callable without arguments), or the result recorded
        the first time without calling it (the kernel then sets ``record.replayed``, which observers read); or
        ``None`` to let the step run as it is.
    """
