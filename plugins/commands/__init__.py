"""Built-in plugin commands (essential): ``hermes run`` and ``hermes plugins``.

Essential, as pytest's essential plugins and llm's and datasette's default
plugins: it always loads, a distro's ``only:`` need not name it, and it cannot
be disabled or blocked. Its helpers (:mod:`plugins.commands.front`) are what
``run``, ``chat`` and ``serve`` share."""

from kernel import hookimpl


@hookimpl
def register_hookspecs(add):
    from plugins.commands import hookspecs

    add(hookspecs)


@hookimpl(tryfirst=True)  # before other plugins add subcommands to `hermes plugins` (hermes-compat's install)
def register_commands(cli):
    from plugins.commands.plugins_group import plugins
    from plugins.commands.run import run

    cli.add_command(run)
    cli.add_command(plugins, repairs_config=True)  # disabling a plugin may fix config.yaml
