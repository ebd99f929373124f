"""The hook the prompt plugin asks when it assembles a session's system
prompt (added through ``register_hookspecs``)."""

from __future__ import annotations

from typing import Any, Optional

from kernel import hookspec


@hookspec
def prompt_layer(agent: Any) -> Optional[dict]:
    """Add a named layer to the system prompt. Asked once per session (the
    prompt then stays byte-identical, so put nothing time-varying in it).

    :param agent: the :class:`kernel.agent.Agent` the prompt is for.
    :return: ``{"name": ..., "text": ..., "source": ..., "after": ...}`` or
        ``None``. ``after`` is the layer it follows (``identity``, ``tools``,
        ``plugins``, ``skills``, ``context``; default ``plugins``, i.e.
        after the memory block). The text is capped like every layer, and
        ``prompt.disabled_layers`` can turn it off by its name.
    """
