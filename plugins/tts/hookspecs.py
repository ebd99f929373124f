"""The hook the speech tool asks (added through ``register_hookspecs``): the text-to-speech backends plugins
provide. A plugin that implements it without the tts plugin loaded marks it ``optionalhook=True``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from kernel import hookspec

if TYPE_CHECKING:  # annotations only
    from kernel.agent import Agent


@hookspec
def tts_backends(agent: Agent) -> Optional[dict]:
    """The model called ``text_to_speech``: which speech backends do you provide? The one ``tts.provider`` names is
    called, outside this hook, as a tool handler is (a :class:`kernel.types.ToolError` it raises is what the model
    reads: the service refused, the voice is unknown).

    :param agent: the :class:`~kernel.agent.Agent` whose tool runs: its ``config`` holds the backend's settings
        (``tts.NAME.*`` by hermes-agent's custom).
    :return: ``{name: speak}``, where ``speak(text: str, path: pathlib.Path)`` writes the audio of ``text`` to
        ``path`` (its suffix is the format asked: ``.mp3`` unless the model named another) and returns the path it
        wrote, which may differ in its suffix when the backend makes one format only; or ``None``.
    """
