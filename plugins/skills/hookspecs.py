"""The hook plugins ship skills through (added by the ``skills`` plugin
through ``register_hookspecs``)."""

from __future__ import annotations

from typing import Any, Callable

from kernel import hookspec


@hookspec
def register_skills(register: Callable[..., None], config: Any) -> None:
    """Ship skills, once per plugin host.

    :param register: ``register(name, path, description="")``: ``path`` is a
        skill folder holding ``SKILL.md`` (or the file itself); the
        description, when given, wins over the file's front matter. Name them
        ``plugin:skill`` to keep them apart from the user's.
    :param config: the loaded :class:`kernel.config.Config`.
    :return: ignored.
    """
