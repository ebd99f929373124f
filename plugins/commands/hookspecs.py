"""The hooks of the front ends (``run``, ``chat``, ``serve``): their display,
in-chat commands, and the questions they ask the session store. Added
through ``register_hookspecs``; the commands plugin is essential, so these
specs are there whenever plugins load."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol, runtime_checkable

from kernel import hookspec
from kernel.hookspecs import Table

if TYPE_CHECKING:  # annotations only: importing the specs stays cheap
    from kernel.agent import Agent
    from kernel.protocols import Settings


@runtime_checkable
class Display(Protocol):
    """What ``terminal_front_end`` answers: its hook implementations
    (``on_stream_delta``, ``approve_tool_call`` ...) become one agent's
    callbacks, so other agents of the process never see them."""

    def end_answer(self, text: Optional[str]) -> None:
        """After the turn, with the final answer (shown, or ended, by the display)."""


@hookspec(firstresult=True)
def terminal_front_end(quiet: bool, config: Any) -> Optional[Display]:
    """``hermes run`` builds the display of its agent (the built-in
    ``terminal-ui`` plugin answers).

    :param quiet: show nothing but the answer.
    :param config: the loaded configuration.
    :return: a :class:`Display`, or ``None``.
    """


SLASH_COMMANDS = Table("register_slash_commands", callable=True)  # host.registry[SLASH_COMMANDS]: name -> its handler


@hookspec
def register_slash_commands(register: Callable[..., None], config: Settings) -> None:
    """Add in-chat commands; once per plugin host. ``hermes chat`` runs the
    handler when the user types ``/name args``; the model is not called,
    unless the handler asks for it.

    :param register: ``register(name, handler, description="")``;
        ``handler(raw_args: str, agent) -> str | dict | None``: a returned
        string is printed; ``{"reply": str, "send": str}`` prints the reply,
        then sends ``send`` to the model as the user's next message.
    :param config: the loaded configuration.
    """


@hookspec(firstresult=True)
def resolve_session(session_id: str, agent: Agent) -> Optional[str]:
    """Turn what the user typed (an id, a unique prefix) into a session id.

    :param session_id: what was typed.
    :return: the full id; when it starts several, a list of some of them; ``None`` if it names none.
    """


@hookspec(firstresult=True)
def latest_session(platform: str, agent: Agent) -> Optional[str]:
    """The most recent session, for ``--continue``.

    :param platform: where the agent runs.
    :return: its id, or ``None``.
    """


@hookspec(firstresult=True)
def session_info(session_id: str, agent: Agent) -> Optional[dict]:
    """What a front end that resumes a stored session needs of it.

    :param session_id: the full session id.
    :return: ``title`` (the session's, or that of the session it continues) and how it was started,
        ``model``, ``provider``, ``api_mode``, ``base_url``, ``api_key_env`` (those you know; never
        a key), ``toolsets`` (a list; absent: every tool), or ``None`` when you know none of them.
    """
