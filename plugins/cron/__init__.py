"""Built-in plugin cron: prompts that run on a schedule, each as its own run.

``hermes cron add 'every 1h' 'check the build and say what broke'`` adds a job; ``hermes cron daemon`` runs the
jobs as they come due, or the system's cron runs ``hermes cron tick`` every minute. Each run is an agent of its own
(platform ``cron``, a session of its own, nobody there to approve: what needs approval is refused) and what it
answered is kept in the data folder's ``cron/output``. The model can schedule, list, pause, resume and remove jobs
with the ``cronjob`` tool (toolset ``cronjob``; hermes-agent's name), and only there: a cron run cannot add jobs.
Schedules: :mod:`plugins.cron.schedule`; the jobs' file and runs: :mod:`plugins.cron.jobs`.
"""

from __future__ import annotations

from kernel import hookimpl
from kernel.types import Tool, ToolError

ACTIONS = ("create", "list", "update", "pause", "resume", "remove")


@hookimpl
def register_config(declare):
    declare("cron.with_serve", bool, True, "hermes serve and hermes gateway run the due cron jobs too (as hermes "
            "cron daemon does)")
    declare("cron.tick_seconds", float, 60, "how often hermes serve and hermes cron daemon look for due jobs",
            minimum=1)
    declare("cron.max_parallel_jobs", int, None, "jobs due together that run side by side (empty: all of them)",
            minimum=1)
    declare("cron.wrap_response", bool, True, "a job's answer sent to a chat starts with the job's name "
            "(hermes-agent's; false: the answer alone)")
    declare("cron.output_retention", int, 50, "the answers kept of each job's runs (the oldest go)", minimum=1)
    declare("cron.script_timeout_seconds", float, 3600, "seconds a job's script may run before it is stopped "
            "(hermes-agent's)", minimum=1)


@hookimpl
def register_commands(cli):
    from plugins.cron.cli import cron

    cli.add_command(cron)


def _target(deliver: str, ctx) -> str:
    """Where a job's answers go: 'origin' is the chat of this gateway conversation (none: kept for the user, who reads
    them with `hermes cron show`, as 'local' says), else the platform's target as given."""
    from plugins.tool_args import ORIGIN

    deliver = deliver.strip()
    return {"origin": ctx.agent.state.get(ORIGIN, ""), "local": ""}.get(deliver, deliver)


def cronjob(args, ctx):
    from plugins.cron import jobs
    from plugins.cron.schedule import local_now
    from plugins.tool_args import arg, check_args

    args = check_args(args, "cronjob")
    action = arg(args, "action", str, tool="cronjob").strip().lower()
    if action not in ACTIONS:
        raise ToolError(f"cronjob: unknown action {action!r}; use {', '.join(ACTIONS)}")
    if getattr(ctx.agent, "platform", "") == "cron" and action != "list":
        raise ToolError("cronjob: a scheduled run cannot change the schedule (ask the user)")
    try:
        if action == "create":
            skills = arg(args, "skills", list, tool="cronjob", default=[])
            job = jobs.add(arg(args, "prompt", str, tool="cronjob", default=""),  # (a script's job needs none)
                           arg(args, "schedule", str, tool="cronjob"),
                           arg(args, "name", str, tool="cronjob", default=""), skills=[str(s) for s in skills],
                           deliver=_target(arg(args, "deliver", str, tool="cronjob", default="origin"), ctx),
                           workdir=arg(args, "workdir", str, tool="cronjob", default=""),
                           script=arg(args, "script", str, tool="cronjob", default=""),
                           no_agent=arg(args, "no_agent", bool, tool="cronjob", default=False),
                           context_from=arg(args, "context_from", list, tool="cronjob", default=[]),
                           repeat=arg(args, "repeat", int, tool="cronjob", default=None))
            found = {"created": job.row()}
        elif action == "list":
            found = {"jobs": [{k: job.row()[k] for k in ("id", "name", "schedule", "status", "next_run", "last_run",
                                                            "last_status", "last_output")} for job in jobs.load().jobs]}
        elif action == "update":  # what is given changes (hermes-agent's)
            kinds = {"skills": list, "no_agent": bool, "context_from": list, "repeat": int}
            given = {key: arg(args, key, kinds.get(key, str), tool="cronjob") for key in jobs.EDITABLE
                     if args.get(key) is not None}
            if "deliver" in given:
                given["deliver"] = _target(given["deliver"], ctx)
            found = {"updated": jobs.edit(arg(args, "job_id", str, tool="cronjob").strip(), **given).row()}
        else:
            job = jobs.change(arg(args, "job_id", str, tool="cronjob").strip(), action)
            found = {action + "d": job.id}  # paused, resumed, removed
        if jobs.load().nothing_ticks(local_now()):
            found["note"] = "no process runs the jobs yet: tell the user to start `hermes cron daemon`"
        return found
    except (ValueError, LookupError) as exc:
        raise ToolError(f"cronjob: {exc}") from None


CRONJOB = Tool(
    name="cronjob",
    description=("Schedule a prompt to run later or repeatedly, as its own run with your tools (nobody will be "
                 "there to approve anything), its answer kept for the user; only when the user asks for it. "
                 "action 'create' (schedule, prompt, name), 'list', 'update' (job_id and what changes), 'pause', "
                 "'resume', 'remove' (job_id). "
                 "schedule: '30m' (once, in 30 minutes), 'every 2h', '0 9 * * 1-5' (cron, the user's time) or "
                 "'2026-12-24T09:00' (once). The prompt must say everything: the run does not see this "
                 "conversation."),
    parameters={"type": "object", "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "schedule": {"type": "string", "description": "When it runs (for create, update)"},
        "prompt": {"type": "string", "description": "What the run is asked, whole (for create, update)"},
        "name": {"type": "string", "description": "A short name (for create, update)"},
        "skills": {"type": "array", "items": {"type": "string"},
                   "description": "Skills loaded with the prompt at each run (for create, update)"},
        "deliver": {"type": "string", "description": "Where each answer goes (create, update): 'origin' (default: this "
                                                     "chat, on a messaging platform), 'local' (kept for the user to "
                                                     "read), 'telegram:CHAT_ID' or 'discord:CHANNEL_ID'"},
        "workdir": {"type": "string", "description": "An absolute path: the runs work in that folder, its "
                                                     "AGENTS.md read (for create, update: '' for none; default: "
                                                     "where the runs start)"},
        "script": {"type": "string", "description": "The name of a script in the data folder's scripts/ run before "
                                                    "each run: what it prints goes before the prompt, nothing printed "
                                                    "skips the run (create, update: '' for none)"},
        "no_agent": {"type": "boolean", "description": "The script is the whole job: what it prints is sent as it "
                                                       "is, no model (create, update)"},
        "context_from": {"type": "array", "items": {"type": "string"}, "description": "Ids of jobs whose last "
                         "answer goes before the prompt at each run: a chain (create, update)"},
        "repeat": {"type": "integer", "description": "How many times it runs in all, then stops (create, update; "
                                                     "default and 0: as long as its schedule goes)"},
        "job_id": {"type": "string", "description": "The job's id (update, pause, resume, remove)"}},
        "required": ["action"]},
    handler=cronjob, toolset="cronjob")


@hookimpl
def register_tools(register, config):
    register(CRONJOB)


def _slash_cron(raw_args: str, agent) -> str:
    from plugins.cron.jobs import load, when

    try:
        jobs = load().jobs
    except ValueError as exc:
        return str(exc)
    if not jobs:
        return "No cron jobs (hermes cron add SCHEDULE PROMPT, or ask for one)."
    return "\n".join(f"{j.id}  {j.status():<9} {j.schedule:<16} next {when(j.next_run)}  "
                     f"{j.name}" + (f"  (last: {j.last_status})" if j.last_status else "") for j in jobs)


@hookimpl
def register_slash_commands(register):
    register("cron", _slash_cron, description="the scheduled jobs (hermes cron)")


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    from plugins.cron.jobs import load
    from plugins.cron.schedule import local_now
    from plugins.doctor.hookspecs import FAIL, OK, WARN, Check

    try:
        state = load()
    except ValueError as exc:
        return [Check("cron", FAIL, str(exc))]
    if not state.jobs:
        return None
    if state.nothing_ticks(local_now()):
        from plugins.cron.cli import NOTHING_TICKS

        return [Check("cron", WARN, f"{len(state.jobs)} job(s), and {NOTHING_TICKS}")]
    return [Check("cron", OK, f"{len(state.jobs)} job(s); the last tick was {state.last_tick[:19]}")]
