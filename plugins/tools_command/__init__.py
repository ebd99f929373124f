"""Built-in plugin tools-command: ``hermes tools``, the tools a session started here would offer the model, each
with its toolset, its plugin and, when it is left out, why; ``hermes tools disable|enable NAME...`` turns a tool or
a whole toolset off or on in config.yaml (``agent.disabled_tools``, and ``toolsets`` when it is set)."""

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    from plugins.tools_command.cli import tools

    cli.add_command(tools)
