"""The Protocols of the kernel: what plugins implement for the loop (a model provider, a context engine) and what
the plugin host gives it (settings, the registrations, the services that run plugin code). Plain typing: nothing
here runs."""

from __future__ import annotations

from typing import Any, Callable, ContextManager, Iterable, Protocol

from kernel.types import ModelRequest, ModelResponse

class Emitter(Protocol):
    """Given to ``Provider.complete``; forwards streaming events to the hooks."""

    def delta(self, text: str) -> None: ...
    def reasoning(self, text: str) -> None: ...
    def tool_call(self, name: str, call_id: str) -> None: ...


class Provider(Protocol):
    """A model provider, built by the factory registered through ``register_model_providers``. Subclass it for the
    optional methods' defaults (the kernel calls them all)."""

    def complete(self, request: ModelRequest, emit: Emitter) -> ModelResponse: ...

    def refresh_credentials(self) -> bool:
        """Re-read the key (the fallback policy asked): True if it changed."""
        return False

    def close(self) -> None:
        """The agent is done with this provider."""


class ContextEngine(Protocol):
    """What manages the history's size, built by the factory registered through ``register_context_engines``
    (``factory(agent)``). Every call is contained: an engine that raises never breaks a turn. Subclass it for the
    default of ``tools``."""

    def update_from_response(self, usage: dict) -> None:
        """The normalized usage of each successful model call."""

    def should_compress(self, messages: list) -> bool:
        """Before each model call: is the history too big?"""

    def compress(self, messages: list, *, agent: Any, reason: str, notes: list) -> list:
        """The history to continue with (``reason``: ``preflight``, ``overflow``, ``manual``; ``notes``: what
        ``on_pre_compress`` implementations asked to keep, such as memory's notes)."""

    def tools(self) -> list:
        """Tools the model may call (``kernel.types.Tool``), e.g. to search the history."""
        return []


# What the loop is given by the plugin host (hermes.host implements these)
class Settings(Protocol):
    """The configuration the loop reads: values by dotted key
    (``agent.max_turns``), with their declared defaults."""

    def get(self, dotted: str, default: Any = ...) -> Any: ...
    def section(self, name: str) -> dict: ...

    def key_envs(self) -> set:
        """Every variable that holds a key: each a provider setting names (``api_key_env`` at any depth: the
        primary, fallbacks, auxiliary models, a plugin's own) and the environment's secret-looking ones, so
        tools never see one and it is masked."""


class Registrations(Protocol):
    """What the loaded plugins registered: tools by name, toolsets, and each
    table (``registry[MODEL_PROVIDERS]``: name -> entry with ``value`` and ``plugin``)."""

    tools: dict

    def __getitem__(self, table: Any) -> dict: ...
    def expand_toolsets(self, names: Iterable[str], reached: bool = False) -> set: ...


class Host(Protocol):
    """The plugin host an :class:`~kernel.agent.Agent` runs in: its settings,
    what the plugins registered, a pluggy manager per agent, and the services
    that run plugin code safely (the loop never runs plugin code any other way)."""

    config: Settings
    registry: Registrations

    def manager_with(self, callbacks: Iterable[Any]) -> Any:
        """The hook caller of one agent: the plugins plus that agent's callbacks."""

    def contain(self, plugin: str, what: str, fn: Callable[..., Any], *args: Any, default: Any = None,
                **kwargs: Any) -> Any:
        """Call plugin code that is not a hook (a factory, a context engine's method) contained and attributed to
        ``plugin``, under the hook deadline; ``default`` when it failed. The user's interrupt passes."""

    def waiting(self) -> ContextManager[None]:
        """While this holds, the thread waits for a model on the kernel's
        behalf: the deadline of the plugin code around it stands still."""

    def interrupt_thread(self, ident: int) -> bool:
        """The user interrupted: get thread ``ident`` out of plugin code now.
        True when it was inside plugin code."""

    def run_awaitable(self, awaitable: Any) -> Any:
        """Await plugin code's coroutine (an async tool) here, also on a thread that runs an event loop (a notebook)."""
