"""The essential ``hermes config`` commands: show, get, set, unset, path and check."""

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    from plugins.config_command.cli import add_commands

    add_commands(cli)
