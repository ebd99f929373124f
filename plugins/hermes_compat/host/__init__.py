"""Stand-ins for the hermes-agent host modules that plugins import.

Each module here is served under hermes-agent's name (``agent.memory_provider``,
``tools.registry``, ...) by :mod:`plugins.hermes_compat.standins`, only while
hermes plugin code runs and only when hermes-agent itself is not installed.
A stand-in is complete for the names the published plugins use; a name it
lacks fails the plugin's ``from X import name`` with a clean ImportError,
which their try/except fallbacks already handle.
"""
