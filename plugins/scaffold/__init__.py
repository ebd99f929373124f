"""Built-in plugin scaffold: ``hermes plugins new NAME``, a plugin package to start from.

It writes what CONTRIBUTING.md's five-minute plugin and docs/plugins.md describe, as files that work as written:
``pyproject.toml`` with the ``hermes.plugins`` entry point, a module with a tool that reads a config key at call
time, and tests (in-process with the scripted provider, and the ``hermes`` command through the ``hermes_cli``
fixture) that pass once the package is installed: ``pip install -e hermes-NAME && pytest hermes-NAME``."""

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    import click

    from plugins.scaffold.command import new

    group = cli.commands.get("plugins")
    if isinstance(group, click.Group) and "new" not in group.commands:
        group.add_command(new)
