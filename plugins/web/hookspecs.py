"""The hooks the web tools ask (added through ``register_hookspecs``): the search and extract backends plugins
provide. A plugin that implements one without the web plugin loaded marks it ``optionalhook=True``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from kernel import hookspec

if TYPE_CHECKING:  # annotations only
    from kernel.agent import Agent


@hookspec
def web_search_backends(agent: Agent) -> Optional[dict]:
    """The model called ``web_search``: which search backends do you provide? The one ``web.search_backend`` names
    is called, outside this hook, as a tool handler is (a :class:`kernel.types.ToolError` it raises is what the
    model reads: the service refused, no answer in time).

    :param agent: the :class:`~kernel.agent.Agent` whose tool runs: its ``config`` holds the backend's settings.
    :return: ``{name: search}``, where ``search(query: str, limit: int)`` returns at most ``limit`` results, each
        ``{"title": ..., "url": ..., "description": ...}``; or ``None``.
    """


@hookspec
def web_extract_backends(agent: Agent) -> Optional[dict]:
    """The model called ``web_extract`` and ``web.extract_backend`` names a backend (a service that reads pages
    for you: one that renders scripts, or passes what blocks a plain request): which do you provide? The one named
    reads each URL, outside this hook, as a tool handler runs; pages are then not fetched here at all.

    :param agent: the :class:`~kernel.agent.Agent` whose tool runs: its ``config`` holds the backend's settings.
    :return: ``{name: extract}``, where ``extract(url: str)`` returns ``{"title": ..., "content": ...}`` (text or
        Markdown, clipped to the model's ``char_limit`` afterwards) or raises :class:`kernel.types.ToolError` for
        that URL; or ``None``.
    """
