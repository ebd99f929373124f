"""Built-in plugin config-command: ``hermes config show|get|set|unset|path|check``.

Every key it knows is declared: the kernel's own and those the loaded plugins
declare through ``register_config``. ``set`` takes the form hermes-agent's
CLI takes (``hermes config set KEY VALUE``, a dotted key; ``true``/``false``,
numbers and YAML lists are typed), checks the value against the key's type
before it writes, and writes config.yaml atomically. A key nobody declares
needs ``--force`` (below a mapping key such as ``plugins.entries`` anything
goes). Secrets are refused: hermes reads keys from the environment only.

Its hook implementations are in :mod:`plugins.config_command.plugin` (the
entry point), its commands in :mod:`plugins.config_command.cli`."""
