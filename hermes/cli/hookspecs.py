"""The program's hook: the ``hermes`` command asks plugins for its
subcommands. The plugin host adds this spec to every manager with its own,
so a plugin that adds a command stays valid in a host the program does not
drive (a server's, a worker's); the module imports nothing of the program."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernel import hookspec

if TYPE_CHECKING:  # annotations only: importing the specs stays cheap
    import click

    from hermes.host.config import Config


# ==========================================================================
# The hermes program


@hookspec
def register_commands(cli: click.Group, config: Config) -> None:
    """Add subcommands to the ``hermes`` command line. Fires when the command
    line names a command the kernel does not know, and when help is shown, so
    keep heavy imports inside the command functions. While config.yaml holds
    a value of the wrong type, only commands added with
    ``cli.add_command(command, repairs_config=True)`` (a command that
    inspects or fixes config) run; every other one stops with that problem
    before its function is called.

    :param cli: the ``hermes`` click group.
    :param config: the loaded configuration (its values may still have a
        wrong type here: read them in the command, not at registration).
    """
