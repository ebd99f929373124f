"""The hook memory backends register through (added by the ``memory``
plugin through ``register_hookspecs``)."""

from __future__ import annotations

from typing import Any, Callable

from kernel import hookspec
from kernel.hookspecs import Table

MEMORY_BACKENDS = Table("register_memory_backends", callable=True)  # registry[MEMORY_BACKENDS]: name -> factory


@hookspec
def register_memory_backends(register: Callable[..., None], config: Any) -> None:
    """Register memory backends by name, once per plugin host.

    :param register: ``register(name, factory, description="")``;
        ``factory(config)`` returns a :class:`MemoryBackend`. The memory
        plugin builds the one ``memory.provider`` names.
    :param config: the loaded :class:`hermes.host.config.Config`.
    """
