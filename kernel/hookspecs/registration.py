"""Hook specs: registration (see :mod:`kernel.hookspecs`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional

from kernel import hookspec

if TYPE_CHECKING:  # annotations only: importing the specs stays cheap
    from kernel.agent import Agent
    from kernel.protocols import Settings
    from kernel.types import ProviderConfig


@dataclass(frozen=True)
class Table:
    """What a named registration hook fills (``register_X(register, config)`` with ``register(name, value,
    description="")``), exported beside its spec: ``host.registry[TABLE]`` is ``{name: Entry}``, so a misspelt table
    is an ImportError, never an empty dict."""

    hook: str
    callable: bool = False  # the registered value must be callable (a factory)

    @property
    def name(self) -> str:
        return self.hook[len("register_"):]


MODEL_PROVIDERS = Table("register_model_providers", callable=True)  # name -> factory(ProviderConfig) -> Provider
CONTEXT_ENGINES = Table("register_context_engines", callable=True)  # name -> factory(agent) -> ContextEngine


@hookspec
def register_tools(register: Callable[[Any], None], config: Settings) -> None:
    """Register tools the model may call; once per plugin host.

    On a name clash the plugin loaded first keeps the name (built-ins load
    first), with one warning; ``tools.prefer`` in config.yaml chooses.

    :param register: ``register(tool)`` takes a :class:`kernel.types.Tool`.
    :param config: the loaded configuration.
    """


@hookspec
def register_toolsets(register: Callable[..., None], config: Settings) -> None:
    """Register named groups of tools; once per plugin host.

    Every tool also belongs to the toolset named by its ``Tool.toolset``. The agent offers the tools of the toolsets
    chosen by ``toolsets`` in config or ``-t`` (all tools when neither is set; none for an empty list).

    :param register: ``register(name, tools, description="")``; ``tools``
        lists tool names and/or other toolset names.
    :param config: the loaded configuration.
    """


@hookspec
def agent_tools(agent: Agent, starting: bool) -> Optional[list]:
    """Tools known only at run time (an MCP server's), offered to this agent
    beside the registry's when its toolsets include theirs (or toolsets are left unset).

    :param agent: ``agent.offers(toolset)`` says whether its toolsets take in a toolset's tools; what none of them
        takes in need not be started.
    :param starting: asked while the agent is built: answer at once and start what is slow in the background, then
        call ``agent.tools_changed()`` (from any thread); the next model call asks again (``False``).
    :return: a list of :class:`kernel.types.Tool`, or ``None``.
    """


@hookspec
def register_model_providers(register: Callable[..., None], config: Settings) -> None:
    """Register model providers (one per API mode, or custom ones); once per
    plugin host. Import SDKs inside the factory, not at module level.

    :param register: ``register(name, factory, description="")``; ``factory(ProviderConfig)`` returns a
        :class:`kernel.protocols.Provider` and may raise :class:`kernel.types.ProviderError` with reason ``config``
        (a missing key, say).
    :param config: the loaded configuration.
    """


@hookspec
def register_context_engines(register: Callable[..., None], config: Settings) -> None:
    """Register context engines by name; once per plugin host. The agent uses
    the one ``context.engine`` names (default ``compressor``).

    :param register: ``register(name, factory, description="")``;
        ``factory(agent)`` returns a :class:`kernel.protocols.ContextEngine`.
    :param config: the loaded configuration.
    """


@hookspec(firstresult=True)
def resolve_api_mode(config: ProviderConfig) -> Optional[str]:
    """Pick the provider (API mode) for a provider config whose ``api_mode`` is empty. Fires when an agent is built
    and whenever the loop switches provider.

    :param config: the provider config to resolve (not the whole configuration).
    :return: a registered provider name, or ``None`` to let another plugin answer.
    """
