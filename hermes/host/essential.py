"""The essential built-ins (pytest's essential plugins): they always load, a
selection need not name them and cannot leave them out, so ``hermes run``,
``hermes plugins`` and ``hermes config`` are always there. Entry-point name ->
module (the same as in pyproject.toml; a test holds them equal). Read by the
resolver and, without importing the host, by the program for their commands."""

ESSENTIAL = {"commands": "plugins.commands", "config-command": "plugins.config_command"}
