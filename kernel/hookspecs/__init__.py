"""The kernel's hooks: the contract between the loop and its plugins.

A plugin is any object (usually a module) with functions marked ``@kernel.hookimpl`` whose names match these specs.
pluggy passes an implementation only the arguments it names, so declare just what you use. Plugins add hooks of
their own with ``register_hookspecs``; the built-ins do (``clarify`` and the subagent hooks come with
``agent-tools``, ``transform_terminal_output`` with ``core-tools``, ``register_memory_backends`` with ``memory``).
``python scripts/hook_reference.py`` writes ``docs/hooks.md`` from them all.

Order: plugins load built-ins first, then installed packages by distribution name; implementations run LIFO by load
order within a tier (an installed plugin's before a built-in's); ``tryfirst``/``trylast`` move them between tiers.
For ``firstresult`` hooks the first non-``None`` answer wins.

Every spec takes ``agent`` where the kernel has one: the :class:`kernel.agent.Agent` the event belongs to (read
``agent.session_id``, ``agent.config``, ``agent.state``, ``agent.turn`` ...). Callbacks registered on one Agent
never fire for another Agent. ``agent``, ``session_id``, ``task_id``, ``turn_id``, ``platform``, ``tool_name`` and
``tool_call_id`` mean the same in every spec: ``SHARED`` in ``scripts/hook_reference.py`` documents them once."""

from kernel.hookspecs import callbacks, lifecycle, policy, registration

hookspec = registration.hookspec
Table, MODEL_PROVIDERS, CONTEXT_ENGINES = registration.Table, registration.MODEL_PROVIDERS, registration.CONTEXT_ENGINES

#: the spec modules, in the order the reference lists them
MODULES = (registration, lifecycle, callbacks, policy)

# one namespace for pluggy's add_hookspecs: every spec of the modules above
globals().update({name: fn for module in MODULES for name, fn in vars(module).items() if hasattr(fn, "hermes_spec")})
