"""The hook plugins ship skills through (added by the ``skills`` plugin
through ``register_hookspecs``)."""

from __future__ import annotations

from typing import Any, Callable

from kernel import hookspec
from kernel.hookspecs import Table

SKILLS = Table("register_skills")  # registry[SKILLS]: name -> the skill's folder


@hookspec
def register_skills(register: Callable[..., None], config: Any) -> None:
    """Ship skills, once per plugin host.

    :param register: ``register(name, path, description="")``: ``path`` is a
        skill folder holding ``SKILL.md`` (or the file itself); the
        description, when given, wins over the file's front matter. Name them
        ``plugin:skill`` to keep them apart from the user's.
    :param config: the loaded :class:`hermes.host.config.Config`.
    """


@hookspec
def on_skill_event(action: str, name: str, source: str, agent: Any) -> None:
    """A skill was loaded or changed by the agent's tools or by ``/name``.

    :param action: ``loaded`` (``skill_view`` or ``/name``), ``created``,
        ``edited`` or ``deleted`` (``skill_manage``).
    :param name: the skill.
    :param source: where it lives: ``user``, ``project``, a folder, a plugin.
    :param agent: the :class:`kernel.agent.Agent`.
    :return: ignored (an observer).
    """
