"""Isolation: plugin code runs behind a guard on our side of pluggy.

A plugin object is never registered as it is. :func:`guard_plugin` builds a
stand-in object whose hook implementations are the plugin's, each wrapped by
``functools.wraps`` (so pluggy reads the real signature and passes positional,
defaulted, keyword-only and ``**kwargs`` parameters exactly as it documents)
and by a guard that:

* contains anything the implementation raises, ``SystemExit`` and other
  ``BaseException``\\ s included, and attributes it to the plugin; a guarding
  hook (``pre_tool_call``) that fails blocks the call instead (fails closed);
* lets the user's interrupt (:class:`Interrupted`) through, and re-raises it
  when the plugin swallowed it;
* gives the implementation a deadline (``plugins.hook_timeout``): past it the
  watchdog abandons the call (a signal on the main thread, an asynchronous
  exception elsewhere), the answer is ignored and that hook of that plugin is
  not called again in this process;
* awaits an implementation that is a coroutine function, under the same
  deadline.

The guard costs a few dictionary operations per call: deadlines are kept by
one watchdog thread that wakes a few times a second, not by a thread per call.
"""

from __future__ import annotations

import functools
import signal
import threading
import time
from typing import Any, Callable, Optional

FAIL_CLOSED = frozenset({"pre_tool_call"})


class Interrupted(KeyboardInterrupt):
    """The user's interrupt. Not an ``Exception``: a plugin's ``except
    Exception`` cannot swallow it, and the guard never contains it."""


class HookTimeout(BaseException):
    """Raised into a hook implementation that overran its deadline."""


def is_user_interrupt(exc: BaseException) -> bool:
    """Is ``exc`` the user's interrupt (not a plugin raising KeyboardInterrupt)?

    Under the ``hermes`` command a real Ctrl+C arrives as :class:`Interrupted`.
    Embedded with Python's own SIGINT handler, a KeyboardInterrupt can only be
    taken as real."""
    if isinstance(exc, Interrupted):
        return True
    if isinstance(exc, KeyboardInterrupt):
        try:
            return signal.getsignal(signal.SIGINT) is signal.default_int_handler
        except (ValueError, TypeError):
            return True
    return False


def describe(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}): the plugin tried to end the process"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Slot:
    """What one thread is running now: the innermost guarded call."""

    __slots__ = ("deadline", "plugin", "hook", "outer", "failures", "fired", "interrupt")

    def __init__(self, deadline: float, plugin: str, hook: str, outer: Optional["_Slot"], failures):
        self.deadline, self.plugin, self.hook, self.outer, self.failures = deadline, plugin, hook, outer, failures
        self.fired = False  # the deadline passed
        self.interrupt = False  # the user interrupted while it ran


class Watchdog:
    """Deadlines for plugin code, per thread. One per process."""

    def __init__(self):
        self.slots: dict = {}  # thread ident -> innermost _Slot
        self.timeout = 30.0
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self._main = threading.main_thread().ident
        self._alarm_ours = False
        self.abandoned = False  # some plugin code overran its deadline in this process

    # -- entering and leaving plugin code
    def enter(self, plugin: str, hook: str, failures: Optional["Failures"] = None) -> _Slot:
        ident = threading.get_ident()
        timeout = self.timeout
        slot = _Slot(time.monotonic() + timeout if timeout > 0 else float("inf"), plugin, hook, self.slots.get(ident),
                     failures)
        self.slots[ident] = slot
        if timeout > 0 and self._thread is None:
            self._start()
        return slot

    def leave(self, slot: _Slot) -> None:
        """Forget ``slot`` (idempotent). A slot the watchdog fired at leaves
        under its lock, and an abandonment still pending for this thread is
        cancelled, so it can never land in the kernel's own code."""
        ident = threading.get_ident()
        if self.slots.get(ident) is not slot:
            return
        if not slot.fired and not slot.interrupt:
            self._restore(ident, slot)
            return
        with self._lock:
            self._restore(ident, slot)
            if ident != self._main or not self._alarm_ours:
                import ctypes

                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)

    def _restore(self, ident: int, slot: _Slot) -> None:
        if slot.outer is None:
            self.slots.pop(ident, None)
        else:
            self.slots[ident] = slot.outer

    def _holds(self, ident: int, slot: _Slot) -> bool:
        current = self.slots.get(ident)
        while current is not None:
            if current is slot:
                return True
            current = current.outer
        return False

    def current(self, ident: Optional[int] = None) -> Optional[_Slot]:
        return self.slots.get(threading.get_ident() if ident is None else ident)

    def current_plugin(self) -> str:
        slot = self.slots.get(threading.get_ident())
        return slot.plugin if slot is not None else ""

    # -- abandoning
    def interrupt_thread(self, ident: int) -> bool:
        """The user interrupted: if thread ``ident`` is inside plugin code, get
        it out now. True when it was (the caller need not wait for it)."""
        slot = self.slots.get(ident)
        if slot is None:
            return False
        slot.interrupt = True
        if ident == threading.get_ident():
            raise Interrupted()  # a signal handler on that very thread
        with self._lock:
            if self._holds(ident, slot):
                self._raise_in(ident, Interrupted)
        return True

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            if threading.get_ident() == self._main:
                self._install_alarm()
            self._thread = threading.Thread(target=self._watch, name="hermes-hook-watchdog", daemon=True)
            self._thread.start()

    def _install_alarm(self) -> None:
        try:
            if signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None):
                signal.signal(signal.SIGALRM, self._alarm)
                self._alarm_ours = True
        except (ValueError, AttributeError, OSError):  # not the main thread, or no SIGALRM here
            pass

    def _alarm(self, signum, frame) -> None:
        slot = self.slots.get(self._main)
        if slot is None:
            return
        if slot.interrupt:
            raise Interrupted()
        while slot is not None:
            if slot.fired:
                raise HookTimeout(f"{slot.hook} of plugin '{slot.plugin}' ran past {self.timeout:g}s")
            slot = slot.outer

    def _raise_in(self, ident: int, exc_type: type) -> None:
        if ident == self._main and self._alarm_ours:
            try:
                signal.pthread_kill(ident, signal.SIGALRM)  # wakes a sleep, a read or a lock wait
                return
            except (OSError, ValueError):
                pass
        import ctypes  # elsewhere an asynchronous exception: it lands at the next Python line

        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc_type))

    def _watch(self) -> None:
        while True:
            timeout = self.timeout
            time.sleep(min(0.25, timeout / 5) if timeout > 0 else 0.25)
            if timeout <= 0:
                continue
            now = time.monotonic()
            for ident, slot in list(self.slots.items()):
                while slot is not None:  # the outermost overdue call is the one to abandon
                    if now > slot.deadline:
                        first = not slot.fired
                        slot.fired = self.abandoned = True
                        if first and slot.failures is not None:  # marked now, though its thread may never return
                            slot.failures.timed_out(slot.plugin, slot.hook, timeout)
                        with self._lock:  # again each round if it swallowed it
                            if self._holds(ident, slot):
                                self._raise_in(ident, HookTimeout)
                        break
                    slot = slot.outer


WATCHDOG = Watchdog()


def _run_awaitable(awaitable) -> Any:
    """Await a coroutine from a synchronous hook call: ``asyncio.run`` when this
    thread has no running loop, otherwise on a helper thread."""
    import asyncio

    async def wait():
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    box: dict = {}

    def helper():
        try:
            box["value"] = asyncio.run(wait())
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=helper, name="hermes-async-hook", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


class Failures:
    """Where a guard reports: ``record(plugin, hook, exc)`` and the set of
    (plugin, hook) pairs that timed out and are not called again."""

    def __init__(self, record: Callable[[str, str, BaseException], None]):
        self.record = record
        self.abandoned: set = set()

    def timed_out(self, plugin: str, hook: str, seconds: float) -> None:
        if (plugin, hook) not in self.abandoned:
            self.abandoned.add((plugin, hook))
            self.record(plugin, hook, HookTimeout(f"timed out after {seconds:g}s"))


def _blocked(plugin: str, hook: str, why: str) -> dict:
    return {"action": "block", "message": f"blocked: the {hook} hook of plugin '{plugin}' failed ({why})"}


def guard_function(fn: Callable, plugin: str, hook: str, failures: Failures, watchdog: Watchdog = WATCHDOG) -> Callable:
    """``fn`` behind the guard, with ``fn``'s signature for pluggy."""
    fail_closed = hook in FAIL_CLOSED
    key = (plugin, hook)

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        if key in failures.abandoned:
            return _blocked(plugin, hook, "it timed out earlier") if fail_closed else None
        slot = watchdog.enter(plugin, hook, failures)
        try:
            try:
                result = fn(*args, **kwargs)
                if hasattr(result, "__await__"):  # an async def implementation
                    result = _run_awaitable(result)
            finally:
                watchdog.leave(slot)
        except BaseException as exc:
            watchdog.leave(slot)
            if slot.interrupt or is_user_interrupt(exc):
                raise Interrupted() from None
            if isinstance(exc, HookTimeout) and not slot.fired:
                raise  # an outer call's deadline: it is that call's to handle
            return _failed(exc, timed_out=slot.fired or isinstance(exc, HookTimeout))
        if slot.interrupt:  # it caught the interrupt and went on
            raise Interrupted()
        if slot.fired:  # it caught the timeout, or finished too late: the answer is ignored
            return _failed(HookTimeout(), timed_out=True)
        return result

    def _failed(exc: BaseException, timed_out: bool):
        if timed_out:  # abandoned: not called again in this process (its thread may still hang)
            failures.timed_out(plugin, hook, watchdog.timeout)
            exc = HookTimeout(f"timed out after {watchdog.timeout:g}s")
        else:
            failures.record(plugin, hook, exc)
        return _blocked(plugin, hook, describe(exc)) if fail_closed else None

    return guarded


def guard_wrapper(fn: Callable, plugin: str, hook: str, failures: Failures, old_style: bool) -> Callable:
    """A hook wrapper (a generator) behind the guard: an error in the wrapper's
    own code is contained and the wrapped call goes on as if it had no
    wrapper; what the inner implementations raise still reaches it."""

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        gen = None
        try:
            gen = fn(*args, **kwargs)
            first = next(gen)
        except BaseException as exc:
            if is_user_interrupt(exc):
                raise
            failures.record(plugin, hook, exc if not isinstance(exc, StopIteration) else RuntimeError("did not yield"))
            return (yield)
        try:
            sent = yield first
        except BaseException as inner:
            try:
                gen.throw(inner)
            except StopIteration as stop:
                return stop.value
            except BaseException as exc:
                if exc is not inner and not is_user_interrupt(exc):
                    failures.record(plugin, hook, exc)
                    raise inner from None
                raise
            failures.record(plugin, hook, RuntimeError("the wrapper yielded twice"))
            raise inner from None
        try:
            gen.send(sent)
        except StopIteration as stop:
            return None if old_style else stop.value
        except BaseException as exc:
            if is_user_interrupt(exc):
                raise
            failures.record(plugin, hook, exc)
        else:
            failures.record(plugin, hook, RuntimeError("the wrapper yielded twice"))
        if old_style:
            return None
        return sent

    return guarded


class Guarded:
    """Registered with pluggy in place of a plugin object: its hook
    implementations, each behind the guard."""

    def __init__(self, plugin: Any, name: str):
        self.__wrapped_plugin__ = plugin
        self.__name__ = name
        self.__doc__ = getattr(plugin, "__doc__", None)

    def __repr__(self) -> str:
        return f"<guarded plugin {self.__name__!r}: {self.__wrapped_plugin__!r}>"


def guard_plugin(pm, plugin: Any, name: str, failures: Failures) -> Guarded:
    """The object to register with ``pm`` for ``plugin``: every attribute that
    ``pm`` takes for a hook implementation, behind the guard."""
    proxy = Guarded(plugin, name)
    for attr in dir(plugin):
        try:
            opts = pm.parse_hookimpl_opts(plugin, attr)
        except Exception:
            opts = None
        if opts is None:
            continue
        fn = getattr(plugin, attr)
        hook = opts.get("specname") or attr
        if opts.get("wrapper") or opts.get("hookwrapper"):
            guarded = guard_wrapper(fn, name, hook, failures, old_style=bool(opts.get("hookwrapper")))
        else:
            guarded = guard_function(fn, name, hook, failures)
        setattr(proxy, attr, guarded)
    return proxy


def contain(failures: Failures, plugin: str, what: str, fn: Callable, *args, default: Any = None, **kwargs) -> Any:
    """Call plugin code that is not a hook (a context engine's method, a
    factory) under the same rules: contained, attributed, interrupts pass."""
    slot = WATCHDOG.enter(plugin, what, failures)
    try:
        return fn(*args, **kwargs)
    except BaseException as exc:
        WATCHDOG.leave(slot)
        if slot.interrupt or is_user_interrupt(exc):
            raise Interrupted() from None
        if slot.fired or isinstance(exc, HookTimeout):
            failures.timed_out(plugin, what, WATCHDOG.timeout)
        else:
            failures.record(plugin, what, exc)
        return default
    finally:
        WATCHDOG.leave(slot)


# ---------------------------------------------------------------- machine output

_document: list = []  # the real stdout while it is reserved


def document_stream():
    """Where a machine-readable document goes: the real stdout."""
    import sys

    return _document[-1] if _document else sys.stdout


class reserved_stdout:
    """While this holds, stdout belongs to the document alone: whatever else
    writes to it (a plugin's ``print``, a library, a child process sharing
    file descriptor 1) goes to stderr. :func:`document_stream` is the real
    stdout."""

    def __enter__(self):
        import os
        import sys

        self._saved = None
        try:
            fd = sys.stdout.fileno()
        except (AttributeError, OSError, ValueError):
            fd = -1
        sys.stdout.flush()
        if fd == 1:
            self._saved = os.dup(1)
            os.dup2(2, 1)
            stream = open(self._saved, "w", encoding="utf-8", closefd=False)
        else:  # not a real descriptor (embedded, captured): swap the objects only
            stream = sys.stdout
            self._swapped = sys.stdout
            sys.stdout = sys.stderr
        _document.append(stream)
        return stream

    def __exit__(self, *exc):
        import os
        import sys

        stream = _document.pop()
        stream.flush()
        if self._saved is not None:
            sys.stdout.flush()
            os.dup2(self._saved, 1)
            os.close(self._saved)
        else:
            sys.stdout = self._swapped
        return False
