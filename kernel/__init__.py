"""hermes: a plugin-first microkernel for tool-using LLM agents.

The kernel owns the agent loop, the iteration budget and the message schema;
everything else is a pluggy plugin. Plugin authors need::

    from kernel import hookimpl          # mark hook implementations
    from kernel import hookspec          # mark hooks a plugin brings (register_hookspecs)
    from kernel.types import Tool, ...   # data types

Names resolve lazily: ``import kernel`` (and ``hermes --help``) stays cheap."""

__version__ = "0.1.0"

__all__ = ["hookimpl", "hookspec", "Agent", "__version__"]


def __getattr__(name):
    if name in ("hookimpl", "hookspec"):
        import pluggy

        value = (pluggy.HookimplMarker if name == "hookimpl" else pluggy.HookspecMarker)("hermes")
    elif name == "Agent":
        from kernel.agent import Agent as value
    else:
        raise AttributeError(f"module 'kernel' has no attribute {name!r}")
    globals()[name] = value
    return value
