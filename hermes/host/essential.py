"""The essential built-ins (pytest's essential plugins): they always load, a
selection need not name them and cannot leave them out, so ``hermes run``,
``hermes plugins`` and ``hermes config`` are always there. Entry-point name ->
module (the same as in pyproject.toml; a test holds them equal). Read by the
resolver and, without importing the host, by the program for their commands."""

ESSENTIAL = {"commands": "plugins.commands.plugin", "config-command": "plugins.config_command.plugin"}


def commands_module(name: str) -> str:
    """Where an essential plugin's commands are: ``add_commands(cli)`` in the
    ``cli`` module beside its entry point, which imports no plugin machinery
    (not even pluggy), so ``hermes --help`` adds them cheaply."""
    return ESSENTIAL[name].rpartition(".")[0] + ".cli"
