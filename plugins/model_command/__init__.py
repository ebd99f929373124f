"""Built-in plugin model-command: ``hermes model``, the model, its provider and the models a provider offers.

``hermes model`` shows the model a conversation here would use, through which provider, URL and key variable, and
the providers there are; ``hermes model list`` asks a provider which models it offers; ``hermes model set MODEL``
saves another in config.yaml (hermes-agent's ``hermes model``, as commands a script can run too)."""

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    from plugins.model_command.cli import model

    cli.add_command(model)
