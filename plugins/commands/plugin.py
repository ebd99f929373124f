"""The essential commands, ``hermes run`` and ``hermes plugins``, and the hooks the front ends share."""

from kernel import hookimpl


@hookimpl
def register_hookspecs(add):
    from plugins.commands import hookspecs

    add(hookspecs)


@hookimpl(tryfirst=True)  # before other plugins add subcommands to `hermes plugins` (hermes-compat's install)
def register_commands(cli):
    from plugins.commands.cli import add_commands

    add_commands(cli)
