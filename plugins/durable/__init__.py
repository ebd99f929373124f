"""Built-in plugin: durable turns (``durable.engine: dbos``).

With the engine on, every turn is a DBOS workflow and its model calls, tool calls and approvals are
checkpointed steps (:mod:`plugins.durable.engine`): after kill -9, a crash or a deploy, ``hermes runs list``
shows the unfinished turns and ``hermes runs resume ID`` finishes one where it stopped, without asking the
model again for what it answered or running a finished tool again. DBOS keeps its records in SQLite in the data
folder, or in PostgreSQL (``durable.database_url``) for processes on several hosts. DBOS is imported only when
the engine is on (``pip install 'hermes-kernel[durable]'``).
"""

from __future__ import annotations

from kernel import hookimpl


@hookimpl
def register_config(declare):
    declare("durable.engine", str, "", "run turns as durable workflows: dbos (empty: off)", choices=("", "dbos"))
    declare("durable.database_url", str, "", "the engine's database: postgresql://... (default: SQLite in the "
                                             "data folder); ${VAR} is taken from the environment")


@hookimpl
def durable_step(step, agent):
    if agent.config.get("durable.engine") != "dbos":
        return None
    try:
        from plugins.durable import engine
    except ImportError as exc:  # dbos is an extra
        if step.kind != "turn":
            return None
        why = f"durable.engine is dbos but {exc.name or 'dbos'} is not installed: pip install 'hermes-kernel[durable]'"
        return lambda work: refused(agent, step.record, why)
    if step.kind == "turn":
        # a child agent's turn runs inside its parent's tool step, checkpointed with it
        return None if agent.parent is not None else engine.take_turn(agent, step.record)
    return engine.take_step(step, agent)


def refused(agent, turn, why: str):
    """The result of a turn the engine could not take: nothing of it ran (one line: ``why``)."""
    from kernel.types import ExitReason, TurnResult

    return TurnResult(final_response=None, messages=list(agent.messages), exit_reason=ExitReason.ERROR, error=why,
                      interrupt_message=None, api_calls=0, usage={}, session_id=agent.session_id,
                      task_id=turn.task_id, model=agent.provider_config.model, provider=agent.provider_config.label())


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """With the engine on: can DBOS be imported and launched on its database?"""
    from plugins.doctor.hookspecs import FAIL, OK, Check

    if agent.config.get("durable.engine") != "dbos":
        return None
    try:
        from plugins.durable import engine
    except ImportError as exc:
        return [Check("durable", FAIL, f"durable.engine is dbos but {exc.name or 'dbos'} is not installed: "
                                       "pip install 'hermes-kernel[durable]'")]
    try:
        return [Check("durable", OK, f"DBOS on {engine.shown(engine.launch(agent.config))}")]
    except engine.EngineError as exc:
        return [Check("durable", FAIL, str(exc))]


@hookimpl
def register_commands(cli):
    from plugins.durable.cli import runs

    cli.add_command(runs)
