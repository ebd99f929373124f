"""Built-in plugin model-command: ``hermes model`` and ``hermes setup``, the model, its provider and its key.

``hermes model`` shows the model a conversation here would use, through which provider, URL and key variable, and
the providers there are; ``hermes model list`` asks a provider which models it offers; ``hermes model set MODEL``
saves another in config.yaml (hermes-agent's ``hermes model``, as commands a script can run too); ``hermes fallback``
lists and changes the providers tried when it fails; ``hermes setup``
asks for the provider, its key and the model at a terminal, saves them and tries the model once."""

from kernel import hookimpl


@hookimpl
def register_commands(cli):
    from plugins.model_command.cli import model
    from plugins.model_command.fallback import fallback
    from plugins.model_command.setup import setup

    cli.add_command(model)
    cli.add_command(fallback)
    cli.add_command(setup)
