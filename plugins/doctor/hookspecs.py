"""The hook ``hermes doctor`` asks each plugin (added through ``register_hookspecs``): is your part of this setup
able to work? A plugin that implements it without the doctor plugin loaded marks it ``optionalhook=True``."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional

from kernel import hookspec

if TYPE_CHECKING:  # annotations only
    from kernel.agent import Agent

OK, WARN, FAIL = "ok", "warn", "fail"


class Check(NamedTuple):
    """One line of ``hermes doctor``: what was checked, ``ok``/``warn``/``fail``, and what was found or what to do."""

    name: str
    status: str
    detail: str


@hookspec
def doctor_checks(agent: Agent, online: bool) -> Optional[list]:
    """``hermes doctor`` asks, once per command: can your part of this setup work? Answer from what is here (config,
    files, keys); make a request only when ``online``. A check that raises is the doctor's ``fail`` line for your
    plugin.

    :param agent: an :class:`~kernel.agent.Agent` on the configured provider, built and never run (it stores no
        session): its ``config``, ``host`` and ``provider_for`` are what a check needs.
    :param online: a check may reach the network (a model's one short answer); ``hermes doctor --offline`` says no.
    :return: :class:`Check` lines (``fail``: the command exits 1), or ``None``.
    """
