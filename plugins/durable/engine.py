"""The DBOS engine behind the kernel's ``durable_step`` hook.

A turn is a DBOS workflow (``hermes.turn``, its id ``turn-<turn id>``); its model calls, tool handlers and
approval questions are the workflow's steps, checkpointed in the DBOS system database as they finish (store
writes are not: see :func:`take_step`). The workflow's input is what it takes to build the agent again (provider,
tools, budget, session, the history's length and the stored messages at the turn's start, the ids), so a turn cut
short by kill -9, a crash or a deploy (:func:`stopped_by_signal`) is finished by ``hermes runs resume`` in any
process that reaches the same database: DBOS answers the finished steps from their checkpoints (no model asked
again, no tool run again, nothing stored twice) and the turn goes on from there.

Each process launches DBOS once, with an executor id of its own: DBOS recovers only its own executor's workflows
when it starts, so one command never takes over another's turns; resuming is always asked for.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sqlite3
import threading
import uuid
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Optional

from dbos import DBOS, SetWorkflowID

from kernel import __version__
from kernel.exceptions import describe
from kernel.types import ModelResponse, ProviderConfig, ToolOutcome, TurnResult
from plugins.durable import refused
from plugins.sessions_postgres import shown

WORKFLOW = "hermes.turn"
_launched: Optional[str] = None  # the system database this process launched DBOS on
_launching = threading.Lock()
_live: dict = {}  # workflow id -> the Live turn, of the turns this process runs
_resuming: dict = {}  # what ``hermes runs resume`` lends the turn it resumes: app, callbacks


@dataclass
class Live:
    """A turn this process started: its work, the agent, and the TurnResult once the work ended."""

    work: Callable
    agent: Any
    result: Optional[TurnResult] = None


class EngineError(Exception):
    """The engine cannot be used as configured (one line)."""


def database_url(config) -> str:
    """``durable.database_url`` (``${VAR}`` taken from the environment), else SQLite in the data folder."""
    from plugins.sessions_postgres import expand

    url = expand(str(config.get("durable.database_url") or "").strip(), "durable.database_url")
    if not url:
        return f"sqlite:///{config.data_dir / 'durable.sqlite'}"
    if not url.startswith(("postgresql://", "postgres://", "sqlite:///")):
        raise EngineError(f"durable.database_url must be postgresql://user@host/db or sqlite:///path "
                          f"(it is {shown(url)!r})")
    return url


def launch(config, queues: Optional[list] = None, executor_id: Optional[str] = None) -> str:
    """DBOS on the configured system database, launched once per process; the database's URL. ``queues``: the
    DBOS queues this process takes work from (``hermes batch``'s; none by default); ``executor_id``: a name
    that outlives the process (DBOS recovers what a process of that name left PENDING when it starts)."""
    global _launched
    url = database_url(config)
    with _launching:
        if _launched is None:
            logging.getLogger("dbos").setLevel(logging.ERROR)  # its start-up notices are not the user's business
            DBOS(config={"name": "hermes", "system_database_url": url, "application_version": __version__,
                         "executor_id": executor_id or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}",
                         "log_level": "ERROR", "system_database_engine": sqlite_engine(url)})
            DBOS.listen_queues(queues or [])
            dbos_log = logging.getLogger("dbos")
            try:
                dbos_log.disabled = True  # "DBOS failed to launch:" and a traceback: the one line below says it
                DBOS.launch()
            except Exception as exc:
                DBOS.destroy()
                raise EngineError(f"the durable engine cannot use {shown(url)}: {first_line(exc)}") from None
            finally:
                dbos_log.disabled = False
            _launched = url
        elif _launched != url:
            raise EngineError(f"this process runs durable turns on {shown(_launched)}, not {shown(url)}")
    return url


def sqlite_engine(url: str):
    """For a SQLite system database, the engine DBOS would make, in WAL mode with ``synchronous=NORMAL``: a
    checkpoint is an append to the log, not a journal file written, synced and deleted (a few ms a step), and
    it still survives kill -9 and crashes of the process (a power cut may lose the last ones). ``None``: DBOS's."""
    if not url.startswith("sqlite:"):
        return None
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)

    @sqlalchemy.event.listens_for(engine, "connect")
    def configure(connection, _record) -> None:
        connection.isolation_level = "IMMEDIATE"  # as DBOS's own: writers take turns from the start
        for pragma in ("busy_timeout=30000", "foreign_keys=ON", "journal_mode=WAL", "synchronous=NORMAL"):
            connection.execute(f"PRAGMA {pragma}")
        if sqlite3.sqlite_version_info < (3, 42):
            connection.create_function("unixepoch", 1, _unixepoch)

    return engine


def _unixepoch(value: Any) -> Any:
    """SQLite's ``unixepoch(value)`` on a library older than 3.42, which answers NULL to ``unixepoch('subsec')``:
    DBOS asks for that on Python >= 3.12 (its timestamps, in milliseconds; Debian 12's SQLite is 3.40) and could
    not launch. Any other value is SQLite's own answer."""
    import time

    if value == "subsec":
        return time.time()
    with contextlib.closing(sqlite3.connect(":memory:")) as builtin:
        return builtin.execute("SELECT unixepoch(?)", (value,)).fetchone()[0]


def running_here(host: Optional[str], pid: Any) -> Optional[bool]:
    """Is process ``pid`` of ``host`` running? ``None``: this host cannot tell (another host's, no pid)."""
    if host != socket.gethostname() or not str(pid or "").isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def first_line(exc: BaseException) -> str:
    return describe(exc).splitlines()[0]


# ---------------------------------------------------------------------------------------------------- the turn
def take_turn(agent, turn) -> Optional[Callable]:
    """The runner of a turn: inside its workflow when it is being resumed, else the workflow started now."""
    if DBOS.workflow_id is not None:  # ``hermes runs resume`` rebuilt the agent inside the turn's workflow
        spec = agent.state.pop("durable.spec", None)

        def go_on(work):
            if spec is not None:
                del agent.messages[spec["before"]:]  # the history as the turn found it: its steps replay from there
                agent.state["durable.stored"] = stored(agent) - spec["stored"]  # what the turn wrote before it stopped
            return work()

        return go_on
    try:
        launch(agent.config)
    except EngineError as exc:
        why = str(exc)
        return lambda work: refused(agent, turn, why)
    workflow_id = f"turn-{turn.turn_id}"
    spec = spec_of(agent, turn)

    def run(work):
        _live[workflow_id] = live = Live(work, agent)
        try:
            with SetWorkflowID(workflow_id), stopped_by_signal(agent):
                hermes_turn(spec)
        except CutShort:  # stopped by a signal: the workflow stays unfinished
            pass
        except Exception as exc:  # DBOS failed around the turn (its database went away ...)
            if live.result is None:
                return refused(agent, turn, f"the durable engine failed: {first_line(exc)}")
        finally:
            _live.pop(workflow_id, None)
        return live.result

    return run


def stored(agent) -> int:
    """How many messages the session store holds of the agent's session (0 with no store)."""
    if not agent.hook.append_messages.get_hookimpls():
        return 0
    from plugins.sessions import get_store

    return get_store(agent.config, agent.host).message_count(agent.session_id)


def spec_of(agent, turn) -> dict:
    """The workflow's input: enough to build the agent again and replay the turn in another process."""
    from hermes.cli.app import App

    provider = agent.provider_config
    return {
        "version": 1, "session_id": agent.session_id, "user_message": turn.content, "task_id": turn.task_id,
        "turn_id": turn.turn_id, "before": len(agent.messages), "platform": agent.platform,
        "provider": {"model": provider.model, "provider": provider.provider, "base_url": provider.base_url,
                     "api_mode": provider.api_mode, "api_key_env": provider.api_key_env, "extra": provider.extra},
        "tools": sorted(agent.tools), "toolsets": agent.toolsets, "budget": agent.budget.max_total,
        "stored": stored(agent),
        "overrides": dict(getattr(agent.config, "overrides", {}) or {}),
        "distro": App.current.distro_path if App.current is not None else None,
        "cwd": os.getcwd(), "pid": os.getpid(), "host": socket.gethostname(),
    }


@DBOS.workflow(name=WORKFLOW)
def hermes_turn(spec: dict) -> dict:
    live = _live.get(DBOS.workflow_id)
    if live is not None:
        live.result = result = live.work()
        if live.agent.state.get("durable.stopping"):
            raise CutShort(result)
    else:
        result = replay(spec)
    return {key: value for key, value in result.to_dict().items() if key != "messages"}  # those are in the store


def replay(spec: dict) -> TurnResult:
    """Build the agent the turn ran in again and run the turn: its finished steps answer from their checkpoints."""
    from kernel.agent import Agent

    app = _resuming.get("app")
    if app is None or app.distro_path != spec["distro"]:
        from hermes.cli.app import App

        app = App(spec["distro"])
    app.config.overrides.update(spec["overrides"])
    host = app.host
    if os.path.isdir(spec["cwd"]):
        os.chdir(spec["cwd"])  # the tools' relative paths mean what they meant
    provider = ProviderConfig(**{**spec["provider"], "extra": tuple(tuple(p) for p in spec["provider"]["extra"])})
    # its toolsets choose its plugins' run-time tools (an MCP server's) as they did; the blocked names, the rest
    agent = Agent(host, provider, toolsets=spec.get("toolsets"), budget=spec["budget"], platform=spec["platform"],
                  blocked_tools=set(host.registry.tools) - set(spec["tools"]), callbacks=_resuming.get("callbacks", ()))
    try:
        agent.new_session(resume=spec["session_id"])
        agent.state["durable.spec"] = spec
        return agent.run_conversation(spec["user_message"], task_id=spec["task_id"], turn_id=spec["turn_id"])
    finally:
        agent.close()


# ---------------------------------------------------------------------------------------------------- the steps
def take_step(step, agent) -> Optional[Callable]:
    """A step's runner: its place in the workflow drawn now (on the agent's thread, in the turn's order), run
    wherever the step runs. A step inside a step (a tool asking the model beside the conversation) is part of
    the outer one: it runs as it is.

    Store writes are not checkpointed (a checkpoint costs about what a write does): the store is the record of
    them. A resumed turn counts what its session holds beyond what it held when the turn started, and its
    replayed writes skip as many messages (a write is one transaction: all of it is there, or none)."""
    if step.kind == "store":
        return partial(_write, agent, len(step.record))
    if DBOS.workflow_id is None or DBOS.step_id is not None:
        return None
    place = DBOS.reserve_step()
    options: Any = {"name": f"hermes.{step.kind}"}

    def run(work):
        try:
            return place.run(options, partial(_unless_stopping, agent, work))
        except CutShort as cut:
            return cut.result

    return run


class CutShort(BaseException):
    """What a step or a turn that SIGTERM or SIGHUP cut short came to. Not an ``Exception``: DBOS records
    neither the step nor the workflow, so the turn stays resumable where it was stopped."""

    def __init__(self, result: Any):
        super().__init__()
        self.result = result


def _unless_stopping(agent, work: Callable) -> Any:
    result = _masked(agent, work())
    if agent.state.get("durable.stopping"):  # a tool's "interrupted" is not what it would have done
        raise CutShort(result)
    return result


def _masked(agent, result: Any) -> Any:
    """A step's result with the agent's known key values masked before DBOS keeps it (the kernel masks them next
    anyway, so a first run and a replay go on alike): a tool's output, the model's text and reasoning. A tool
    call's arguments stay as the model wrote them: a resumed turn runs them."""
    mask = getattr(getattr(agent, "secrets", None), "mask", None)
    found = result[0] if isinstance(result, tuple) and result else result  # a model step: (answer, times)
    if mask is not None and isinstance(found, ToolOutcome):
        found.result, found.error_message = mask(found.result), mask(found.error_message)
    elif mask is not None and isinstance(found, ModelResponse):
        found.content, found.reasoning = mask(found.content), mask(found.reasoning)
    return result


def _write(agent, batch: int, work: Callable) -> Any:
    """A store write: skipped while a resumed turn replays what it had stored, and once the process is being
    stopped (the store then holds what kill -9 would have left, and the resumed turn writes the rest)."""
    if agent.state.get("durable.stopping"):
        return None
    if agent.state.get("durable.stored", 0) >= batch:
        agent.state["durable.stored"] -= batch
        return None
    agent.state["durable.stored"] = 0
    return work()


@contextlib.contextmanager
def stopped_by_signal(agent):
    """While a turn runs on the main thread, SIGTERM and SIGHUP (a deploy, a closed terminal) mark it as being
    stopped before the handler they had runs (``hermes run`` interrupts the agent): its cut-short steps are not
    checkpointed and its workflow is left unfinished, for ``hermes runs resume``."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGHUP)}

    def mark(signum, frame):
        agent.state["durable.stopping"] = signal.Signals(signum).name
        handler = previous[signum]
        if callable(handler):
            handler(signum, frame)
        else:  # the default: end the process, as kill -9 would (the turn is resumable either way)
            os._exit(128 + signum)

    for signum in previous:
        signal.signal(signum, mark)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
