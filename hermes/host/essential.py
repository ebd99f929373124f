"""The essential built-ins (as pytest's essential plugins): they always load and a selection
cannot leave them out, so ``hermes run``, ``plugins`` and ``config`` are always there.
Entry-point name -> module, as in pyproject.toml (a test holds them equal)."""

ESSENTIAL = {"commands": "plugins.commands.plugin", "config-command": "plugins.config_command.plugin"}


def commands_module(name: str) -> str:
    """Where an essential plugin's ``add_commands(cli)`` is: the ``cli`` module beside its entry point,
    which imports no plugin machinery (not even pluggy), so ``hermes --help`` adds them cheaply."""
    return ESSENTIAL[name].rpartition(".")[0] + ".cli"
