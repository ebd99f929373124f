"""The commands plugin's commands: ``hermes run`` and ``hermes plugins``."""


def add_commands(cli) -> None:
    from plugins.commands.plugins_group import plugins
    from plugins.commands.run import run

    cli.add_command(run)
    cli.add_command(plugins, repairs_config=True)  # disabling a plugin may fix config.yaml
