"""Hooks the ``terminal`` tool of ``core-tools`` fires (added through
``register_hookspecs``)."""

from __future__ import annotations

from typing import Any, Optional

from kernel import hookspec


@hookspec
def transform_terminal_output(command: str, output: str, returncode: Optional[int], task_id: str,
                              env_type: str, agent: Any) -> Optional[str]:
    """After the ``terminal`` tool ran a command, before its result is
    built. The first ``str`` returned replaces the output the model reads.

    :param command: the command as it ran.
    :param output: its combined stdout and stderr, clipped to the tool's limit.
    :param returncode: the exit code, or ``None`` when it was killed before it ended.
    :param task_id: the turn's task id.
    :param env_type: where it ran; ``"local"`` (the only environment so far).
    :param agent: the :class:`kernel.agent.Agent` whose tool ran.
    :return: the replacement output, or ``None`` to keep it.
    """
