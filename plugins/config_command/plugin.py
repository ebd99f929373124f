"""The config-command plugin's hook implementations (its entry point)."""

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    from plugins.config_command.cli import add_commands

    add_commands(cli)
