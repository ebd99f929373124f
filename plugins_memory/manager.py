"""The ``memory`` plugin: wires memory into the loop through kernel hooks only.

Per agent it keeps (in ``agent.state["memory"]``) the built-in file memory
(``MEMORY.md``/``USER.md``, unless both ``memory.memory_enabled`` and
``memory.user_profile_enabled`` are false) and at most one external backend,
the one named by ``memory.provider`` among those registered through
``register_memory_backends``.

Hooks:

* ``system_prompt``: a snapshot of the memory files taken at session start plus
  the backend's block; frozen for the session so prompt caching holds.
* ``pre_llm_call``: the backend's ``prefetch`` on a daemon thread, waited for
  at most ``memory.prefetch_timeout`` seconds (default 8). A backend that is
  still busy from an earlier turn is skipped. The answer goes into this turn's
  request as ``<memory-context>...</memory-context>``.
* ``post_llm_call``: ``sync_turn`` on a single background worker (writes stay
  in turn order and never delay the answer).
* ``on_pre_compress``: waits for pending writes, then returns the backend's
  notes; the kernel hands them to the context engine. (File memory is written at once, so it is already on disk.)
* ``subagent_start`` / ``subagent_stop``: the backend's ``on_delegation`` with
  the child's goal and summary (on the worker).
* ``on_session_start`` / ``on_session_finalize``: session switch, session end
  and, on ``reason="shutdown"``, shutdown of the backend.
* ``register_tools``: the ``memory`` tool (toolset ``memory``).
* ``register_slash_commands``: ``/memory`` shows the files and the backend.

A backend that raises or hangs is logged and skipped; it never breaks a turn.
Child agents (``agent.parent`` set) get the file memory but no external
backend, so a sub-task's turns do not flow into long-term memory.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Optional

from kernel import hookimpl
from kernel.messages import text_of
from kernel.types import Tool, ToolError
from plugins_memory import settings
from plugins_memory.file_memory import (
    MEMORY_TOOL_SCHEMA,
    FileMemory,
    memory_tool_description,
    render_entries,
    run_memory_tool,
)
from plugins_memory.hookspecs import MEMORY_BACKENDS

log = logging.getLogger(__name__)

STATE_KEY = "memory"
DRAIN_TIMEOUT = 5.0
_create_lock = threading.Lock()


# --------------------------------------------------------------------------
# A single background worker (daemon, so a hung backend never blocks exit)


class _Worker:
    """Runs submitted calls one at a time, in order, on one daemon thread."""

    def __init__(self, name: str):
        self.name = name
        self._jobs: list = []
        self._cond = threading.Condition()
        self._pending = 0
        self._thread: Optional[threading.Thread] = None

    def submit(self, what: str, fn: Callable, *args: Any, **kwargs: Any) -> None:
        with self._cond:
            self._jobs.append((what, fn, args, kwargs))
            self._pending += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda: self._jobs, timeout=30):
                    self._thread = None  # idle: let the thread end; submit starts a new one
                    return
                what, fn, args, kwargs = self._jobs.pop(0)
            try:
                fn(*args, **kwargs)
            except Exception as exc:
                _failed(what, exc)
            finally:
                with self._cond:
                    self._pending -= 1
                    self._cond.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until every submitted call ran; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout=timeout)


def _guard(what: str, fn: Callable, *args: Any, default: Any = None, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        _failed(what, exc)
        return default


def _failed(what: str, exc: Exception) -> None:
    """Log a backend's failure: its own one line when it says what went wrong (a ToolError: a service that refused a
    key, that cannot be reached), else with the traceback (a bug for its author to read)."""
    if isinstance(exc, ToolError):
        log.warning("memory: %s failed: %s", what, exc)
    else:
        log.error("memory: %s failed", what, exc_info=(type(exc), exc, exc.__traceback__))


# --------------------------------------------------------------------------
# Per-agent runtime


def _registered_backends(agent: Any) -> dict:
    """name -> factory of the memory backends the plugin host collected."""
    registry = getattr(getattr(agent, "host", None), "registry", None)
    entries = registry[MEMORY_BACKENDS] if registry is not None else {}
    return {name: entry.value for name, entry in entries.items()}


class MemoryRuntime:
    """Memory of one agent: the file store, the external backend, the
    frozen prompt snapshots and the background worker."""

    def __init__(self, agent: Any):
        self.agent = agent
        config = agent.config
        self.store: Optional[FileMemory] = None
        if settings.get(config, "memory.memory_enabled") or settings.get(config, "memory.user_profile_enabled"):
            self.store = FileMemory.from_config(config)
        timeout = settings.get(config, "memory.prefetch_timeout")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            log.warning("memory.prefetch_timeout: expected a positive number, got %r; using 8", timeout)
            timeout = settings.DEFAULTS["memory.prefetch_timeout"]
        self.prefetch_timeout = float(timeout)
        self.snapshots: dict = {}  # session_id -> system prompt block
        self.worker = _Worker("hermes-memory-sync")
        self._prefetching: Optional[threading.Thread] = None
        self._before_compression: Optional[list] = None  # the ending session's history
        self.goals: dict = {}  # child session id -> the goal delegated to it
        self.session_id = getattr(agent, "session_id", "") or ""
        self.backend = self._make_backend()

    def _make_backend(self) -> Any:
        agent = self.agent
        name = settings.get(agent.config, "memory.provider") or ""
        if not name or getattr(agent, "parent", None) is not None:
            return None
        factories = _guard("listing memory backends", _registered_backends, agent, default={}) or {}
        factory = factories.get(name)
        if factory is None:
            known = ", ".join(sorted(factories)) or "none"
            log.warning("memory.provider %r is not a registered memory backend (known: %s); using file memory only", name, known)
            return None
        backend = _guard(f"building backend {name!r}", factory, agent.config)
        if backend is None:
            return None
        if not _guard(f"{name}.is_available", backend.is_available, default=False):
            log.warning("memory backend %r is not available here; using file memory only", name)
            return None
        kwargs = {
            "hermes_home": str(agent.config.data_dir),
            "platform": getattr(agent, "platform", "cli"),
            "agent": agent,
        }
        try:
            backend.initialize(self.session_id, **kwargs)
        except Exception as exc:
            # one line for the user; the traceback (a plugin author's concern) at debug level
            log.error("memory backend %r failed to initialize (%s: %s); using file memory only",
                      name, type(exc).__name__, exc)
            log.debug("memory backend %r initialize", name, exc_info=True)
            return None
        return backend

    # -- hooks
    def system_prompt(self, session_id: str) -> str:
        if session_id not in self.snapshots:
            parts = []
            if self.store is not None:
                parts.append(_guard("reading memory files", self.store.snapshot_block, default=""))
            if self.backend is not None:
                parts.append(_guard(f"{self.backend.name}.system_prompt_block", self.backend.system_prompt_block, default=""))
            self.snapshots[session_id] = "\n\n".join(p for p in parts if isinstance(p, str) and p.strip())
        return self.snapshots[session_id]

    def prefetch(self, query: str, session_id: str) -> str:
        backend = self.backend
        if backend is None or not query.strip():
            return ""
        if self._prefetching is not None and self._prefetching.is_alive():
            log.warning("memory backend %r is still busy with an earlier prefetch; skipped this turn", backend.name)
            return ""
        box: dict = {}

        def run() -> None:
            try:
                box["text"] = backend.prefetch(query, session_id=session_id)
            except Exception as exc:  # logged below, on the caller's thread
                box["error"] = exc

        thread = threading.Thread(target=run, name="hermes-memory-prefetch", daemon=True)
        thread.start()
        thread.join(self.prefetch_timeout)
        if thread.is_alive():
            self._prefetching = thread
            log.warning("memory backend %r prefetch took longer than %.1fs; skipped", backend.name, self.prefetch_timeout)
            return ""
        if "error" in box:
            _failed(f"{backend.name}.prefetch", box["error"])
            return ""
        text = box.get("text")
        return text if isinstance(text, str) else ""

    def sync(self, user: str, assistant: str, session_id: str, messages: list) -> None:
        backend = self.backend
        if backend is None:
            return
        self.worker.submit(
            f"{backend.name}.sync_turn",
            backend.sync_turn,
            user,
            assistant,
            session_id=session_id,
            messages=messages,
        )

    def pre_compress(self, messages: list) -> str:
        self._before_compression = list(messages)
        if self.backend is None:
            return ""
        if not self.worker.drain(DRAIN_TIMEOUT):
            # a hung backend must not hold the turn twice: go on without its notes
            log.warning("memory backend %r is still busy; compressing without its notes", self.backend.name)
            return ""
        box: dict = {}

        def call() -> None:
            box["notes"] = self.backend.on_pre_compress(list(messages))

        self.worker.submit(f"{self.backend.name}.on_pre_compress", call)
        self.worker.drain(DRAIN_TIMEOUT)
        notes = box.get("notes")
        return notes if isinstance(notes, str) else ""

    def session_switch(self, session_id: str, parent_session_id: str) -> None:
        if session_id == self.session_id:
            return
        self.session_id = session_id
        if self.backend is not None:
            self.worker.submit(
                f"{self.backend.name}.on_session_switch",
                self.backend.on_session_switch,
                session_id,
                parent_session_id=parent_session_id or "",
            )

    def finalize(self, reason: str, messages: list) -> None:
        backend = self.backend
        if reason == "compression" and self._before_compression is not None:
            # the agent already holds the compressed history; the ending session is the old one
            messages, self._before_compression = self._before_compression, None
        if backend is not None:
            self.worker.submit(f"{backend.name}.on_session_end", backend.on_session_end, messages)
            if reason == "shutdown":  # the last chance: wait (bounded) for pending writes
                self.worker.submit(f"{backend.name}.shutdown", backend.shutdown)
                if not self.worker.drain(DRAIN_TIMEOUT):
                    log.warning("memory backend %r did not finish within %.0fs", backend.name, DRAIN_TIMEOUT)
        if reason == "shutdown":
            self.backend = None


def runtime(agent: Any, create: bool = True) -> Optional[MemoryRuntime]:
    """The memory runtime of ``agent`` (created on first use)."""
    state = getattr(agent, "state", None)
    if state is None:
        return None
    rt = state.get(STATE_KEY)
    if rt is None and create:
        with _create_lock:
            rt = state.get(STATE_KEY)
            if rt is None:
                rt = state[STATE_KEY] = MemoryRuntime(agent)
    return rt


def active_backend(agent: Any) -> Any:
    """The external backend serving ``agent``, or None."""
    if agent is None:
        return None
    rt = runtime(agent)
    return rt.backend if rt is not None else None


def memory_context_block(text: str, source: str) -> str:
    """Fence recalled text so the model reads it as background, not as the user."""
    body = text.replace("<memory-context>", "").replace("</memory-context>", "").strip()
    return (
        "<memory-context>\n"
        f"[System note: recalled from long-term memory ({source}) for this turn; background "
        "only, not written by the user. Use it if it is relevant.]\n"
        f"{body}\n"
        "</memory-context>"
    )


# --------------------------------------------------------------------------
# Hook implementations


@hookimpl
def on_session_start(session_id, parent_session_id, agent):
    rt = runtime(agent)
    rt.session_switch(session_id or "", parent_session_id or "")


@hookimpl
def system_prompt(agent, session_id):
    block = runtime(agent).system_prompt(session_id or "")
    return block or None


@hookimpl
def pre_llm_call(session_id, user_message, agent):
    rt = runtime(agent)
    if rt.backend is None:
        return None
    text = rt.prefetch(text_of(user_message), session_id or "")
    if not text.strip():
        return None
    return {"context": memory_context_block(text, rt.backend.name)}


@hookimpl
def post_llm_call(session_id, user_message, assistant_response, conversation_history, agent):
    rt = runtime(agent)
    # shallow copies: the worker reads them while the loop goes on
    history = [dict(m) for m in conversation_history or [] if isinstance(m, dict)]
    rt.sync(text_of(user_message), text_of(assistant_response), session_id or "", history)


@hookimpl
def on_pre_compress(messages, agent):
    """The backend's notes go to the context engine (the kernel passes them)."""
    notes = runtime(agent).pre_compress(list(messages or []))
    return notes.strip() or None




@hookimpl
def register_config(declare):
    for key in settings.CONFIG_KEYS:
        declare(key)


@hookimpl
def register_hookspecs(add):
    from plugins_memory import hookspecs

    add(hookspecs)


@hookimpl(optionalhook=True)  # brought by agent-tools, which may be blocked
def subagent_start(child_session_id, child_goal, agent):
    rt = runtime(agent, create=False)
    if rt is not None and rt.backend is not None:
        with _create_lock:
            rt.goals[child_session_id] = child_goal or ""


@hookimpl(optionalhook=True)
def subagent_stop(child_session_id, child_summary, child_status, agent):
    rt = runtime(agent, create=False)
    backend = rt.backend if rt is not None else None
    hook = getattr(backend, "on_delegation", None)  # a duck-typed backend may not have it
    if hook is None:
        return
    with _create_lock:
        goal = rt.goals.pop(child_session_id, "")
    result = child_summary or ""
    if child_status and child_status != "completed":
        result = f"[{child_status}] {result}"
    rt.worker.submit(f"{backend.name}.on_delegation", hook, goal, result,
                     child_session_id=child_session_id or "")


@hookimpl
def on_session_finalize(reason, agent):
    rt = runtime(agent, create=False)
    if rt is None:
        return
    rt.finalize(reason or "", list(getattr(agent, "messages", None) or []))
    if reason == "shutdown":
        agent.state.pop(STATE_KEY, None)


@hookimpl
def register_tools(register, config):
    if not (settings.get(config, "memory.memory_enabled") or settings.get(config, "memory.user_profile_enabled")):
        return

    def handler(args: dict, ctx: Any) -> dict:
        agent = getattr(ctx, "agent", None)
        rt = runtime(agent) if agent is not None else None
        store = rt.store if rt is not None and rt.store is not None else FileMemory.from_config(config)
        result = run_memory_tool(store, args)
        backend = rt.backend if rt is not None else None
        if backend is not None:
            extra = {}
            if isinstance(args.get("old_text"), str) and _accepts_metadata(backend.on_memory_write):
                extra["metadata"] = {"old_text": args["old_text"]}
            rt.worker.submit(
                f"{backend.name}.on_memory_write",
                backend.on_memory_write,
                args.get("action"),
                args.get("target"),
                args.get("content") or args.get("old_text") or "",
                **extra,
            )
        return result

    register(
        Tool(
            name="memory",
            description=memory_tool_description(FileMemory.from_config(config)),
            parameters=MEMORY_TOOL_SCHEMA,
            handler=handler,
            toolset="memory",
            parallel_safe=False,
        )
    )


def _accepts_metadata(fn: Callable) -> bool:
    """Backends written to the older three-argument ``on_memory_write`` get no metadata."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "metadata" or p.kind is p.VAR_KEYWORD for p in params)


def _memory_command(raw_args: str, agent: Any) -> str:
    """``/memory``: what is in memory now (on disk, including this session's writes)."""
    rt = runtime(agent)
    lines = []
    if rt.store is None:
        lines.append("file memory is disabled (memory.memory_enabled / memory.user_profile_enabled)")
    else:
        for target in ("memory", "user"):
            if not rt.store.enabled[target]:
                continue
            try:
                entries = rt.store.read(target)
            except Exception as exc:
                lines.append(f"{rt.store.path(target)}: {exc}")
                continue
            used = len(render_entries(entries))
            lines.append(f"{rt.store.path(target)} ({len(entries)} entries, {used}/{rt.store.limits[target]} chars)")
            lines.extend(f"  - {entry}" for entry in entries)
    backend = rt.backend
    lines.append(f"external backend: {backend.name if backend is not None else 'none'}")
    return "\n".join(lines)


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent, online):
    """The external backend (memory.provider): whether it can work here and, online, whether it answers a recall."""
    from plugins.doctor.hookspecs import FAIL, OK, WARN, Check
    from plugins_memory.base import availability

    name = str(agent.config.get("memory.provider") or "")
    factory = _registered_backends(agent).get(name)
    if factory is None:  # none chosen, or config's own check says no plugin registers it
        return []
    backend, ready, needs = availability(factory, agent.config)
    if not ready:
        return [Check(f"memory {name}", WARN, f"not available here: it needs {needs}; memory is MEMORY.md and USER.md")]
    if not online:
        return [Check(f"memory {name}", OK, "ready (not asked: --offline)")]
    try:
        backend.initialize("doctor", hermes_home=str(agent.config.data_dir), platform="doctor", agent=agent)
        backend.prefetch("hermes doctor", session_id="doctor")
    except Exception as exc:  # noqa: BLE001 - a plugin's backend may raise anything: its line
        return [Check(f"memory {name}", FAIL, f"a recall failed: {exc}")]
    finally:
        _guard(f"{name}.shutdown", backend.shutdown)
    return [Check(f"memory {name}", OK, "ready: it answered a recall")]


@hookimpl
def register_slash_commands(register):
    register("memory", _memory_command, description="show the memory files and the memory backend")


@hookimpl
def register_commands(cli):
    from plugins_memory.command import memory

    cli.add_command(memory)
