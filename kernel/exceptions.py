"""The user's interrupt, and how a failure of plugin code is said in one line. Apart from :mod:`kernel.types` so
that the plugin host's guard imports them without building the records (``hermes plugins list`` stays cheap);
``kernel.types`` exports them too."""

from __future__ import annotations


class Interrupted(KeyboardInterrupt):
    """The user's interrupt. Not an ``Exception``: a plugin's ``except
    Exception`` cannot swallow it, and the host's guard never contains it."""


class StopTurn(Exception):
    """Plugin code's reason to end the turn (a store that cannot write): one line, no traceback."""


def is_user_interrupt(exc: BaseException) -> bool:
    """Is ``exc`` the user's interrupt (not a plugin raising KeyboardInterrupt)?

    Under the ``hermes`` command a real Ctrl+C arrives as :class:`Interrupted`. Embedded with Python's own SIGINT
    handler, a KeyboardInterrupt can only be taken as real."""
    if isinstance(exc, Interrupted):
        return True
    if isinstance(exc, KeyboardInterrupt):
        import signal

        try:
            return signal.getsignal(signal.SIGINT) is signal.default_int_handler
        except (ValueError, TypeError):
            return True
    return False


def describe(exc: BaseException) -> str:
    """One line for what plugin code raised."""
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}): the plugin tried to end the process"
    return f"{type(exc).__name__}: {text}" if (text := str(exc)) else type(exc).__name__
