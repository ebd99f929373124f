"""The DBOS engine behind the kernel's ``durable_step`` hook.

A turn is a DBOS workflow (``hermes.turn``, its id ``turn-<turn id>``); its model calls, tool handlers, approval
questions and store writes are the workflow's steps, checkpointed in the DBOS system database as they finish.
The workflow's input is what it takes to build the agent again (provider, tools, budget, session, the history's
length at the turn's start, the ids), so a turn cut short by kill -9, a crash or a deploy is finished by
``hermes runs resume`` in any process that reaches the same database: DBOS answers the finished steps from their
checkpoints (no model asked again, no tool run again, nothing stored twice) and the turn goes on from there.

Each process launches DBOS once, with an executor id of its own: DBOS recovers only its own executor's workflows
when it starts, so one command never takes over another's turns; resuming is always asked for.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from typing import Any, Callable, Optional

from dbos import DBOS, SetWorkflowID

from kernel import __version__
from kernel.types import ProviderConfig, TurnResult
from plugins.durable import refused

WORKFLOW = "hermes.turn"
_launched: Optional[str] = None  # the system database this process launched DBOS on
_launching = threading.Lock()
_live: dict = {}  # workflow id -> [the turn's work, its TurnResult] of the turns this process runs
_resuming: dict = {}  # what ``hermes runs resume`` lends a turn it resumes in this process: app, callbacks


class EngineError(Exception):
    """The engine cannot be used as configured (one line)."""


def database_url(config) -> str:
    """``durable.database_url`` (``${VAR}`` taken from the environment), else SQLite in the data folder."""
    from plugins.sessions_postgres import expand

    url = expand(str(config.get("durable.database_url") or "").strip(), "durable.database_url")
    if not url:
        return f"sqlite:///{config.data_dir / 'durable.sqlite'}"
    if not url.startswith(("postgresql://", "postgres://", "sqlite:///")):
        raise EngineError(f"durable.database_url must be postgresql://user@host/db or sqlite:///path (it is {url!r})")
    return url


def launch(config) -> str:
    """DBOS on the configured system database, launched once per process; the database's URL."""
    global _launched
    url = database_url(config)
    with _launching:
        if _launched is None:
            logging.getLogger("dbos").setLevel(logging.ERROR)  # its start-up notices are not the user's business
            DBOS(config={"name": "hermes", "system_database_url": url, "application_version": __version__,
                         "executor_id": f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}",
                         "log_level": "ERROR"})
            try:
                DBOS.launch()
            except Exception as exc:
                DBOS.destroy()
                raise EngineError(f"the durable engine cannot use {hidden(url)}: {first_line(exc)}") from None
            _launched = url
        elif _launched != url:
            raise EngineError(f"this process runs durable turns on {hidden(_launched)}, not {hidden(url)}")
    return url


def hidden(url: str) -> str:
    """The URL without its password."""
    import re

    return re.sub(r"://([^:/@]+):[^@/]*@", r"://\1:***@", url)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# ---------------------------------------------------------------------------------------------------- the turn
def take_turn(agent, turn) -> Optional[Callable]:
    """The runner of a turn: inside its workflow when it is being resumed, else the workflow started now."""
    if DBOS.workflow_id is not None:  # ``hermes runs resume`` rebuilt the agent inside the turn's workflow
        before = agent.state.pop("durable.before", None)

        def go_on(work):
            if before is not None:
                del agent.messages[before:]  # the history as the turn found it: its steps replay from there
            return work()

        return go_on
    try:
        launch(agent.config)
    except EngineError as exc:
        why = str(exc)
        return lambda work: refused(agent, turn, why)
    workflow_id = f"turn-{turn.turn_id}"
    spec = describe(agent, turn)

    def run(work):
        _live[workflow_id] = live = [work, None]
        try:
            with SetWorkflowID(workflow_id):
                hermes_turn(spec)
        except Exception as exc:  # DBOS failed around the turn (its database went away ...)
            if live[1] is None:
                return refused(agent, turn, f"the durable engine failed: {first_line(exc)}")
        finally:
            _live.pop(workflow_id, None)
        return live[1]

    return run


def describe(agent, turn) -> dict:
    """The workflow's input: enough to build the agent again and replay the turn in another process."""
    from hermes.cli.app import App

    provider = agent.provider_config
    return {
        "version": 1, "session_id": agent.session_id, "user_message": turn.user_message, "task_id": turn.task_id,
        "turn_id": turn.turn_id, "before": len(agent.messages), "platform": agent.platform,
        "provider": {"model": provider.model, "provider": provider.provider, "base_url": provider.base_url,
                     "api_mode": provider.api_mode, "api_key_env": provider.api_key_env, "extra": provider.extra},
        "tools": sorted(agent.tools), "budget": agent.budget.max_total,
        "overrides": dict(getattr(agent.config, "overrides", {}) or {}),
        "distro": App.current.distro_path if App.current is not None else None,
        "cwd": os.getcwd(), "pid": os.getpid(), "host": socket.gethostname(),
    }


@DBOS.workflow(name=WORKFLOW)
def hermes_turn(spec: dict) -> dict:
    live = _live.get(DBOS.workflow_id)
    if live is not None:
        live[1] = result = live[0]()
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
    agent = Agent(host, provider, blocked_tools=set(host.registry.tools) - set(spec["tools"]), budget=spec["budget"],
                  callbacks=_resuming.get("callbacks", ()), platform=spec["platform"])
    try:
        agent.new_session(resume=spec["session_id"])
        agent.state["durable.before"] = spec["before"]
        return agent.run_conversation(spec["user_message"], task_id=spec["task_id"], turn_id=spec["turn_id"])
    finally:
        agent.close()


# ---------------------------------------------------------------------------------------------------- the steps
def take_step(step) -> Optional[Callable]:
    """A step's runner: its place in the workflow drawn now (on the agent's thread, in the turn's order), run
    wherever the step runs. A step inside a step (a tool asking the model beside the conversation) is part of
    the outer one: it runs as it is."""
    if DBOS.workflow_id is None or DBOS.step_id is not None:
        return None
    place = DBOS.reserve_step()
    options: Any = {"name": f"hermes.{step.kind}"}
    return lambda work: place.run(options, work)
