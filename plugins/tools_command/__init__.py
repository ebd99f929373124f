"""Built-in plugin tools-command: ``hermes tools`` lists the tools the model is offered, and turns them off or on.

The list is what a session started here would offer, each tool with its toolset, its plugin and, when it is left
out, why; ``hermes tools disable|enable NAME...`` turns a tool or a whole toolset off or on in config.yaml
(``agent.disabled_tools``, and ``toolsets`` when it is set)."""

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    from plugins.tools_command.cli import tools

    cli.add_command(tools)
