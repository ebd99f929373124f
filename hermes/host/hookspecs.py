"""The plugin host's own hooks: how plugins bring specs and config keys, offer other plugins, and adapt foreign
plugin shapes. pluggy reads them with the kernel's (:mod:`kernel.hookspecs`) on every host; they fire while plugins
load, before any agent exists."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from kernel import hookspec

if TYPE_CHECKING:  # annotations only: importing the specs stays cheap
    from hermes.host.config import Config
    from hermes.host.plugins import Candidate


@hookspec(historic=True)
def register_hookspecs(add: Callable[[Any], None]) -> None:
    """Add hook specifications of your own (as pytest's ``pytest_addhooks``).

    Fires for each plugin as it registers, before the other plugins' implementations are checked, so they may
    implement the new hooks. Fire them with ``agent.emit(name, ...)`` or ``agent.ask(name, ...)``. A plugin
    implementing a hook whose owner may not be loaded marks it ``@hookimpl(optionalhook=True)``.

    :param add: ``add(namespace)`` takes a module whose functions are marked ``@kernel.hookspec``.
    """


@hookspec
def register_config(declare: Callable[..., None], config: Config) -> None:
    """Declare the config keys your plugin reads; once per plugin host. ``hermes config`` shows, checks and sets
    them; a value of the wrong type in config.yaml is a one-line error naming the file and key, and a key no plugin
    declares is a warning with a did-you-mean. A key named ``*api_key_env`` names a variable that holds a secret:
    tools never see it.

    :param declare: ``declare(key, type, default=None, help="", minimum=None, choices=())``: a dotted key, its type
        (``int``, ``float``, ``str``, ``bool``, ``list``, ``list[str]`` (names, paths), ``dict``, or a tuple of them;
        below a ``dict`` key anything goes), the default ``config.get`` returns, one line of help, for a number the
        least value that makes sense, and the only values it takes; or ``declare(hermes.host.config.Key(...))``.
    :param config: the loaded configuration (keys below a mapping of names, as ``mcp_servers``, are declared per name).
    """


@hookspec
def discover_plugins(config: Config) -> list:
    """Offer plugin candidates from other sources (folders, other entry-point groups). Fires after the
    ``hermes.plugins`` entry points were loaded; the candidates go through the same resolver (enabled / disabled /
    not enabled) and ``hermes plugins list`` shows them. Must not import them.

    :param config: the loaded configuration.
    :return: a list of :class:`hermes.host.plugins.Candidate` (may be empty).
    """


@hookspec(firstresult=True)
def adapt_plugin(candidate: Candidate, error: str, config: Config) -> Optional[Any]:
    """A third-party ``hermes.plugins`` entry point cannot be used as it is: its import failed, or it implements no
    hook but has another host's plugin shape (a ``register`` function). Asked once every source was loaded; the
    built-in ``hermes-compat`` adapts hermes-agent plugins.

    :param candidate: the entry point as found.
    :param error: why it cannot be used as it is.
    :param config: the loaded configuration.
    :return: an object to register in its place, or ``None``.
    """
