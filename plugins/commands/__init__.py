"""Built-in plugin commands (essential): ``hermes run`` and ``hermes plugins``.

Essential, as pytest's essential plugins and llm's and datasette's default plugins: it always loads, a distro's
``only:`` need not name it, and it cannot be disabled or blocked. ``run`` builds its agent with
:mod:`plugins.front`, as ``chat``, ``cron`` and ``serve`` do. Its hook implementations are in
:mod:`plugins.commands.plugin` (the entry point), its commands in :mod:`plugins.commands.cli`; ``hermes --help`` adds
those without loading any plugin."""
