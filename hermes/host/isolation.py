"""Isolation: plugin code runs behind a guard on our side of pluggy.

A plugin is never registered as it is: :func:`guard_plugin` registers a stand-in whose hook implementations are the
plugin's, each behind ``functools.wraps`` (pluggy reads the real signature) and a guard that

* contains what the implementation raises (``SystemExit`` and every other
  ``BaseException``) and blames the plugin; a guarding hook (``pre_tool_call``)
  that fails blocks the call instead (fails closed);
* lets the user's interrupt (:class:`Interrupted`) through, also when the plugin swallowed it;
* gives it a deadline (``plugins.hook_timeout``): past it the watchdog gets
  the thread out (a signal on the main thread, an asynchronous exception elsewhere), the answer is ignored and that
  hook of that plugin is not called again in this process; a coroutine function is awaited under it.

A guarded call puts an entry in its thread's own slot, which the watchdog
thread reads a few times a second; it never reads another thread's frames.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import math
import os
import signal
import threading
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from kernel.exceptions import Interrupted, StopTurn, describe, is_user_interrupt

FAIL_CLOSED = frozenset({"pre_tool_call"})
MUST_SUCCEED = frozenset({"append_messages"})  # failing, they stop the turn: nothing may happen unrecorded
UNTIMED = frozenset({"approve_tool_call", "clarify"})  # they wait for a person, who may take a while
FIRED, INTERRUPT = "fired", "interrupt"


class HookTimeout(BaseException):
    """Raised into a hook implementation that overran its deadline."""


class NotStored(StopTurn):
    """A hook of :data:`MUST_SUCCEED` failed: what the turn did next could not be recorded."""


@dataclass(frozen=True)
class Failure:
    """Plugin code that raised, exited or timed out."""

    plugin: str
    hook: str  # the hook, or what else of the plugin's was called ("import", a method)
    error: str  # one line: the exception's type and message


@dataclass
class Watch:
    """The failures recorded on one thread while a :meth:`Failures.watch` is open."""

    quiet: bool
    failures: list = field(default_factory=list)

    @property
    def plugins(self) -> dict:
        """plugin -> its first failure seen here."""
        return {f.plugin: f for f in reversed(self.failures)}  # reversed: the first one wins


class Failures:
    """Where guards report plugin failures: each is kept in :attr:`seen` and passed to ``report``; a
    caller that needs what failed in its own call opens a :meth:`watch`. Also the timed-out (plugin, hook)s."""

    KEPT = 1000  # a long-lived host (a server) keeps the latest failures, not all of them

    def __init__(self, report: Optional[Callable[[Failure, BaseException], None]] = None):
        self.report = report
        self.seen: collections.deque = collections.deque(maxlen=self.KEPT)
        self.abandoned: set = set()
        self._stand_down: dict = {}  # (plugin, hook) -> [callbacks that stop its guards calling the plugin]
        self._watches: dict = {}  # thread ident -> the watches open on it, innermost last

    def record(self, plugin: str, hook: str, exc: BaseException, thread: Optional[int] = None) -> Failure:
        # thread: the one the call ran on (the watchdog records timeouts for others)
        failure = Failure(plugin, hook, describe(exc))
        self.seen.append(failure)
        watches = self._watches.get(thread or threading.get_ident(), ())
        for watch in watches:
            watch.failures.append(failure)
        if self.report is not None and not any(w.quiet for w in watches):
            self.report(failure, exc)
        return failure

    @contextlib.contextmanager
    def watch(self, quiet: bool = False):
        """``with failures.watch() as seen: hook(...)``, then ``seen.failures``: what failed on this thread
        meanwhile; ``quiet``: the caller says it itself (kept, not reported)."""
        watch, ident = Watch(quiet), threading.get_ident()
        self._watches.setdefault(ident, []).append(watch)
        try:
            yield watch
        finally:
            self._watches[ident].remove(watch)
            if not self._watches[ident]:
                del self._watches[ident]

    def of(self, plugin: str, hook: Optional[str] = None) -> list:
        """The kept failures of a plugin (in one hook), oldest first."""
        return [f for f in self.seen if f.plugin == plugin and hook in (None, f.hook)]

    def on_abandon(self, key: tuple, stand_down: Callable[[], None]) -> None:
        self._stand_down.setdefault(key, []).append(stand_down)
        if key in self.abandoned:
            stand_down()

    def timed_out(self, plugin: str, hook: str, seconds: float, thread: Optional[int] = None) -> None:
        key = (plugin, hook)
        if key not in self.abandoned:
            self.abandoned.add(key)
            for stand_down in self._stand_down.get(key, ()):
                stand_down()
            self.record(plugin, hook, HookTimeout(f"timed out after {seconds:g}s"), thread)


class Watchdog:
    """Deadlines for plugin code and the user's interrupt inside it, one per process. Each thread's slot in
    :attr:`slots` holds the innermost guarded call it is in (an ended thread's holds None, its ident reused) as a
    chain of tuples, each holding the call around it: a call puts a new ``(identity, outer)`` in the slot and puts
    ``outer`` back as it ends, which also drops what an inner call cut short left there (``(identity, outer,
    seconds)`` with a deadline of its own, ``(None, outer)`` a kernel wait); no lock, no list to grow. The watchdog
    thread reads the slots a few times a second, never the frames (``sys._current_frames`` can crash 3.11)."""

    def __init__(self):
        self.timeout = 30.0
        self.abandoned = False  # some plugin code overran its deadline in this process
        self.slots: dict = {}  # thread ident -> [its innermost guarded call]
        self.marks: dict = {}  # id(entry) -> (FIRED | INTERRUPT, entry): read by the guards
        self.local = threading.local()
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._main, self._alarm_ours = threading.main_thread().ident, False  # is SIGALRM's handler ours?

    def slot(self) -> list:
        """This thread's slot (made on its first guarded call)."""
        if not hasattr(self.local, "slot"):
            self.local.slot = self.slots[threading.get_ident()] = [None]
        return self.local.slot

    def start(self) -> None:
        """Start watching, once (from the main thread: with the SIGALRM handler that gets it out of a hook)."""
        if self._thread is not None or self.timeout <= 0:
            return
        with self._lock:
            if self._thread is not None:
                return
            if threading.get_ident() == self._main:
                with contextlib.suppress(ValueError, AttributeError, OSError):  # no SIGALRM here
                    if signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None):
                        signal.signal(signal.SIGALRM, self._alarm)
                        self._alarm_ours = True
            self._thread = threading.Thread(target=self._watch, name="hermes-hook-watchdog", daemon=True)
            self._thread.start()

    # -- what a thread is doing
    def calls(self, ident: int, waits: bool = False) -> list:
        """The entries of thread ``ident``'s guarded calls (and kernel waits), outermost first."""
        calls, entry = [], (self.slots.get(ident) or [None])[0]
        while entry is not None:
            calls += [entry] if waits or entry[0] is not None else []
            entry = entry[1]
        return calls[::-1]

    def current_plugin(self) -> str:
        """The plugin whose guarded code this thread runs (innermost)."""
        calls = self.calls(threading.get_ident())
        return calls[-1][0][0][0] if calls else ""

    @contextlib.contextmanager
    def waiting(self):
        """The kernel waits (a model call) inside plugin code: the clocks of the calls around it stop."""
        slot = self.slot()
        slot[0] = (None, outer := slot[0])
        try:
            yield
        finally:
            slot[0] = outer

    # -- getting a thread out
    def interrupt_thread(self, ident: int) -> bool:
        """The user interrupted: get thread ``ident`` out of plugin code now; True if it was in it."""
        here = ident == threading.get_ident()  # a signal handler on that very thread: no lock (it may be held)
        with contextlib.nullcontext() if here else self._lock:
            calls = self.calls(ident)
            if calls:
                self.marks[id(calls[0])] = (INTERRUPT, calls[0])
                if here:
                    raise Interrupted()
                self._raise_in(ident, Interrupted)
        return bool(calls)

    def _alarm(self, signum, frame) -> None:
        for entry in self.calls(threading.get_ident()):  # the outermost marked call is the one to leave
            mark = self.marks.get(id(entry))
            if mark is not None:
                raise Interrupted() if mark[0] == INTERRUPT else HookTimeout(f"past {self.timeout:g}s")

    def _raise_in(self, ident: int, exc_type: type) -> None:
        """Called under the lock with the thread inside a guarded call."""
        if ident == self._main and self._alarm_ours:
            with contextlib.suppress(OSError, ValueError):
                signal.pthread_kill(ident, signal.SIGALRM)  # wakes a sleep, a read or a lock wait
                return
        import ctypes  # elsewhere an asynchronous exception: it lands at the next Python line

        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc_type))

    def left(self, entry: tuple) -> Optional[str]:
        """A marked guarded call is done: forget (and return) the mark and cancel an abandonment still
        pending for this thread, so it never lands in the kernel's own code."""
        with self._lock:
            mark = self.marks.pop(id(entry), None)
            ident = threading.get_ident()
            if mark is not None and (ident != self._main or not self._alarm_ours):
                import ctypes

                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)
        return mark[0] if mark else None

    def _watch(self) -> None:
        seen: dict = {}  # id(entry) -> (entry: held, so its id is not reused, when the watchdog first saw it)
        while True:
            timeout = self.timeout
            time.sleep(min(0.25, timeout / 5) if timeout > 0 else 0.5)
            try:
                seen = self._sample(seen, timeout) if timeout > 0 else {}
            except Exception:  # never let the watchdog die of one odd entry
                seen = {}

    def _sample(self, seen: dict, timeout: float) -> dict:
        """One look: in each thread, fire at the outermost call past its deadline; return what was seen."""
        now, current = time.monotonic(), {}
        for ident in list(self.slots):
            calls = self.calls(ident, waits=True)
            last_wait = max((i for i, entry in enumerate(calls) if entry[0] is None), default=-1)
            for i, entry in enumerate(calls):
                if entry[0] is None:
                    continue
                # a call around a kernel wait (a model call), or one waiting for a person: its clock stops
                untimed = i < last_wait or entry[0][0][1] in UNTIMED
                first = now if untimed else seen.get(id(entry), (None, now))[1]
                current[id(entry)] = (entry, first)
                if now - first >= (deadline := entry[2] if len(entry) > 2 else timeout):
                    self._fire(ident, entry, deadline)
                    break
        return current

    def _fire(self, ident: int, entry: tuple, timeout: float) -> None:
        with self._lock:
            if not any(e is entry for e in self.calls(ident)):
                return  # it finished meanwhile
            first = id(entry) not in self.marks
            self.marks[id(entry)] = (FIRED, entry)
            self.abandoned = True
            if first:  # marked now, though the thread may never come back
                (plugin, hook), failures = entry[0]
                failures.timed_out(plugin, hook, timeout, ident)
            self._raise_in(ident, HookTimeout)  # again each round if the plugin swallows it


WATCHDOG = Watchdog()


def run_awaitable(awaitable) -> Any:
    """Await from synchronous code (a hook call): ``asyncio.run``, on a helper thread if a loop runs here."""
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


def _must(plugin: str, hook: str, why: str) -> None:
    if hook in MUST_SUCCEED:
        raise NotStored(f"plugin '{plugin}' could not store the session ({why}); the turn stops here, so that "
                        "nothing more happens unrecorded")


def _blocked(plugin: str, hook: str, why: str):
    from kernel.types import Block  # only a guarding hook's failure needs it

    return Block(f"blocked: the {hook} hook of plugin '{plugin}' failed ({why})")


def _outcome(entry: tuple, exc: Optional[BaseException]) -> Optional[BaseException]:
    """After a guarded call that raised or was marked: what stands for it (None: it went well), the plugin's."""
    (plugin, hook), failures = entry[0]
    mark = WATCHDOG.left(entry) if id(entry) in WATCHDOG.marks else None
    if mark == INTERRUPT or (exc is not None and is_user_interrupt(exc)):
        raise Interrupted() from None
    if mark == FIRED or isinstance(exc, HookTimeout):
        if mark is None:
            raise exc  # an outer call's deadline: it is that call's to handle
        failures.timed_out(plugin, hook, WATCHDOG.timeout)
        return HookTimeout(f"timed out after {WATCHDOG.timeout:g}s")
    if exc is not None:
        failures.record(plugin, hook, exc)
    return exc


# The guard, made once per parameter list: pluggy passes a plain implementation its arguments by position (keywords
# only to defaulted parameters), and as many parameters cost less than ``*args`` (no tuple packed and unpacked
# each call). The call is in its thread's slot while it runs; past it, one check: was it marked (late, interrupted)?
_GUARD = """
def make(fn, identity, local, slot_of, marks, failed):
    def stand_down(answer):
        nonlocal fn
        fn = answer
    def guarded({params}):
        try:
            slot = local.slot
        except AttributeError:
            slot = slot_of()
        outer = slot[0]
        entry = (identity, outer)
        try:
            slot[0] = entry
            result = fn({params})
            slot[0] = outer  # also drops what an inner call cut short left (the plugin swallowed that)
        except BaseException as exc:  # also a deadline's exception landing as the call ends
            slot[0] = outer
            return failed(exc, entry)
        if marks:
            return failed(None, entry, result)
        return result
    return guarded, stand_down
"""
_MAKERS: dict = {}  # parameter list -> the make() of _GUARD for it


def guard_function(fn: Callable, plugin: str, hook: str, failures: Failures) -> Callable:
    """``fn`` behind the guard, with ``fn``'s signature for pluggy."""
    import inspect

    original, key = fn, (plugin, hook)
    fallback = _blocked(plugin, hook, "it timed out earlier") if hook in FAIL_CLOSED else None
    if inspect.iscoroutinefunction(fn):  # awaited here, inside the guard and its deadline
        fn = functools.partial(_awaited, fn)

    def failed(exc: Optional[BaseException], entry: tuple, result: Any = None) -> Any:
        why = _outcome(entry, exc)
        if why is None:
            return result
        _must(plugin, hook, describe(why))
        return _blocked(plugin, hook, describe(why)) if fallback else None

    target = getattr(original, "__func__", original)  # a bound method's function: its code counts self
    code, params = getattr(target, "__code__", None), "*args, **kwargs"
    if code and fn is original and not target.__defaults__ and not code.co_kwonlyargcount \
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        params = ", ".join(f"a{i}" for i in range(code.co_argcount - (target is not original)))
    if params not in _MAKERS:
        exec(compile(_GUARD.format(params=params), "<hermes guard>", "exec"), scope := {})  # noqa: S102 - ours
        _MAKERS[params] = scope["make"]
    guarded, stand_down = _MAKERS[params](fn, ((plugin, hook), failures), WATCHDOG.local, WATCHDOG.slot,
                                          WATCHDOG.marks, failed)
    late = lambda *args, **kwargs: _must(plugin, hook, "it timed out earlier") or fallback  # noqa: E731
    failures.on_abandon(key, lambda: stand_down(late))  # abandoned: later calls answer at once, without the plugin
    return functools.wraps(original)(guarded)


def _awaited(coroutine_function: Callable, *args, **kwargs) -> Any:
    return run_awaitable(coroutine_function(*args, **kwargs))


def guard_wrapper(fn: Callable, plugin: str, hook: str, failures: Failures, old_style: bool) -> Callable:
    """A hook wrapper (a generator) behind the guard: an error of its own is contained and the call goes
    on as if it had no wrapper; what the inner implementations raise still reaches it."""

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
    """Registered with pluggy in place of a plugin object: its hook implementations, each behind the guard."""

    def __init__(self, plugin: Any, name: str):
        self.__wrapped_plugin__ = plugin
        self.__name__ = name
        self.__doc__ = getattr(plugin, "__doc__", None)
        self.__hooks__: list = []  # the attribute names of the guarded implementations

    def __dir__(self) -> list:  # pluggy scans dir(): only the hooks, nothing else to look at
        return list(self.__hooks__)

    def __repr__(self) -> str:
        return f"<guarded plugin {self.__name__!r}: {self.__wrapped_plugin__!r}>"


def guard_plugin(pm, plugin: Any, name: str, failures: Failures) -> Guarded:
    """What to register with ``pm`` for ``plugin``: each attribute ``pm`` takes for a hook, guarded."""
    proxy, marker = Guarded(plugin, name), f"{pm.project_name}_impl"
    module = vars(plugin) if isinstance(plugin, types.ModuleType) else {}
    for attr in dir(plugin):
        try:  # a module's attribute without pluggy's marker is no hook: spare pluggy's static lookup of it
            opts = None if attr in module and not hasattr(module[attr], marker) else pm.parse_hookimpl_opts(plugin, attr)
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
        proxy.__hooks__.append(attr)
    return proxy


def contain(failures: Failures, plugin: str, what: str, fn: Callable, *args, default: Any = None,
            seconds: Optional[float] = None, **kwargs) -> Any:
    """Call plugin code that is not a hook (a context engine's method, a factory, an import) under the
    same rules: contained, attributed, given the deadline (or ``seconds``, 0: none); interrupts pass."""
    slot = WATCHDOG.slot()
    outer = slot[0]
    entry = (((plugin, what), failures), outer, *(() if seconds is None else (seconds or math.inf,)))
    try:
        slot[0] = entry
        result = fn(*args, **kwargs)
        slot[0] = outer
    except BaseException as exc:
        slot[0] = outer
        _outcome(entry, exc)
        return default
    if WATCHDOG.marks and _outcome(entry, None) is not None:
        return default
    return result


def signal_handlers() -> dict:
    return {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}


def after_import(name: str, pid: int, handlers: dict) -> None:
    """A plugin's import changes nothing of the process: a child it forked ends (it would run the
    turn a second time), and a signal handler it set (SIGTERM ignored) is hermes' own again."""
    if os.getpid() != pid:
        os._exit(0)
    for sig, handler in handlers.items():
        if signal.getsignal(sig) is not handler and threading.current_thread() is threading.main_thread():
            signal.signal(sig, handler)
            logging.getLogger("hermes.plugins").warning(
                "plugin %s: its import changed how %s is handled; hermes' own handler is back", name, sig.name)
