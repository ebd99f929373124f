"""Hook specs: registration (see :mod:`kernel.hookspecs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from kernel import hookspec

if TYPE_CHECKING:  # annotations only: importing the specs stays cheap
    import click

    from kernel.config import Config
    from kernel.plugins import Candidate
    from kernel.types import ProviderConfig


# ==========================================================================
# Registration


@hookspec(historic=True)
def register_hookspecs(add: Callable[[Any], None]) -> None:
    """Add hook specifications of your own (as pytest's ``pytest_addhooks``).

    Fires for each plugin as it registers, before the other plugins'
    implementations are checked, so they may implement the new hooks. Fire
    them with ``agent.emit(name, ...)`` or ``agent.ask(name, ...)``. A plugin
    implementing a hook whose owner may not be loaded marks it
    ``@hookimpl(optionalhook=True)``.

    :param add: ``add(namespace)`` takes a module whose functions are marked
        ``@kernel.hookspec``.
    :return: ignored.
    """


@hookspec
def register_config(declare: Callable[..., None]) -> None:
    """Declare the config keys your plugin reads; once per plugin host.
    ``hermes config`` shows, checks and sets them; a value of the wrong type
    in config.yaml is a one-line error naming the file and key, and a key no
    plugin declares is a warning with a did-you-mean.

    :param declare: ``declare(key, type, default=None, help="",
        minimum=None)``: a dotted key, its type (``int``, ``float``, ``str``,
        ``bool``, ``list``, ``dict``, or a tuple of them; below a ``dict`` key
        anything goes), the default ``config.get`` returns, one line of help,
        and for a number the least value that makes sense; or
        ``declare(kernel.config.Key(...))``.
    :return: ignored.
    """


@hookspec
def register_tools(register: Callable[[Any], None], config: Config) -> None:
    """Register tools the model may call; once per plugin host.

    On a name clash the plugin loaded first keeps the name (built-ins load
    first), with one warning; ``tools.prefer`` in config.yaml chooses.

    :param register: ``register(tool)`` takes a :class:`kernel.types.Tool`.
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def register_toolsets(register: Callable[..., None], config: Config) -> None:
    """Register named groups of tools; once per plugin host.

    Every tool also belongs to the toolset named by its ``Tool.toolset``. The
    agent offers the tools of the toolsets chosen by ``toolsets`` in config or
    ``-t`` (all tools when neither is set).

    :param register: ``register(name, tools, description="")``; ``tools``
        lists tool names and/or other toolset names.
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def register_model_providers(register: Callable[..., None], config: Config) -> None:
    """Register model providers (one per API mode, or custom ones); once per
    plugin host. Import SDKs inside the factory, not at module level.

    :param register: ``register(name, factory, description="")``;
        ``factory(ProviderConfig)`` returns a :class:`kernel.types.Provider`
        and may raise :class:`kernel.types.ProviderError` with reason
        ``config`` (a missing key, say).
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def register_context_engines(register: Callable[..., None], config: Config) -> None:
    """Register context engines by name; once per plugin host. The agent uses
    the one ``context.engine`` names (default ``compressor``).

    :param register: ``register(name, factory, description="")``;
        ``factory(agent)`` returns a :class:`kernel.types.ContextEngine`.
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def register_commands(cli: click.Group, config: Config) -> None:
    """Add subcommands to the ``hermes`` command line. Fires when the command
    line names a command the kernel does not know, and when help is shown, so
    keep heavy imports inside the command functions. While config.yaml holds
    a value of the wrong type, only commands marked ``repairs_config = True``
    (a command that inspects or fixes config) run; every other one stops
    with that problem before its function is called.

    :param cli: the ``hermes`` click group.
    :param config: the loaded configuration (its values may still have a
        wrong type here: read them in the command, not at registration).
    :return: ignored.
    """


@hookspec
def register_slash_commands(register: Callable[..., None], config: Config) -> None:
    """Add in-chat commands; once per plugin host. ``hermes chat`` runs the
    handler when the user types ``/name args``; the model is not called,
    unless the handler asks for it.

    :param register: ``register(name, handler, description="")``;
        ``handler(raw_args: str, agent) -> str | dict | None``: a returned
        string is printed; ``{"reply": str, "send": str}`` prints the reply,
        then sends ``send`` to the model as the user's next message.
    :param config: the loaded configuration.
    :return: ignored.
    """


@hookspec
def discover_plugins(config: Config) -> list:
    """Offer plugin candidates from other sources (folders, other entry-point
    groups). Fires after the ``hermes.plugins`` entry points were loaded; the
    candidates go through the same resolver (enabled / disabled / not
    enabled) and ``hermes plugins list`` shows them. Must not import them.

    :param config: the loaded configuration.
    :return: a list of :class:`kernel.plugins.Candidate` (may be empty).
    """


@hookspec(firstresult=True)
def adapt_plugin(candidate: Candidate, error: str, config: Config) -> Optional[Any]:
    """A third-party ``hermes.plugins`` entry point cannot be used as it is:
    its import failed, or it implements no hook but has another host's plugin
    shape (a ``register`` function). Asked once every source was loaded; the
    built-in ``hermes-compat`` adapts hermes-agent plugins.

    :param candidate: the entry point as found.
    :param error: why it cannot be used as it is.
    :param config: the loaded configuration.
    :return: an object to register in its place, or ``None``.
    """


@hookspec(firstresult=True)
def resolve_api_mode(config: ProviderConfig) -> Optional[str]:
    """Pick the provider (API mode) for a provider config whose ``api_mode``
    is empty. Fires when an agent is built and whenever the loop switches
    provider.

    :param config: the provider config to resolve (not the whole configuration).
    :return: a registered provider name, or ``None`` to let another plugin answer.
    """
