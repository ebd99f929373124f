"""Hook specs: fallback policy and persistence (see :mod:`kernel.hookspecs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from kernel import hookspec

if TYPE_CHECKING:  # annotations only: importing the specs stays cheap
    from kernel.agent import Agent
    from kernel.types import ProviderConfig, ProviderFailure


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
    :return: ``Retry(delay)``, ``SwitchProvider(config)``,
        ``RefreshCredentials()``, ``Compress()`` or ``GiveUp(message)``;
        ``None`` from every plugin means give up.
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
