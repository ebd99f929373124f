"""The jobs (``<data folder>/cron/schedule.json``; not ``jobs.json``, which is hermes-agent's own in a data folder
it shares) and their runs.

Every change is made under an advisory lock and written whole (a crash leaves the old file or the new one), so
``hermes cron`` commands, the model's ``cronjob`` tool and any number of ticking processes can share the file. A
tick claims the jobs that are due (their next run set before they run, the running process's id noted), so two
ticks never run one job twice; a job whose process died while it ran says so at the next tick. What each run
answered is in ``cron/output/<job>/<time>.md`` (the newest ``cron.output_retention``, 50, a job).
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Iterator, Optional

from plugins.cron.schedule import local_now, parse

FILE = "schedule.json"  # in the data folder's cron/
KEPT_OUTPUTS = 50
STALE_TICK = 300  # seconds without a tick after which `cron list` says nothing runs the jobs


@dataclass
class Job:
    id: str
    name: str
    prompt: str
    schedule: str
    next_run: Optional[str]  # ISO time; None: it will not run again
    enabled: bool = True
    created: str = ""
    toolsets: Optional[list] = None  # None: the configured ones
    model: str = ""
    provider: str = ""  # how its runs reach the model ("": the configured way)
    base_url: str = ""
    skills: list = field(default_factory=list)  # loaded with its prompt (hermes-agent's per-job skills)
    deliver: str = ""  # where each answer is sent too ("telegram:123", "discord:CHANNEL", "telegram": its home chat)
    workdir: str = ""  # the folder its runs work in (hermes-agent's): a process of their own started there
    script: str = ""  # hermes-agent's: a file of the data folder's scripts/ run first (plugins.cron.jobs.run)
    no_agent: bool = False  # hermes-agent's: the script is the job, its output the answer; no model
    context_from: list = field(default_factory=list)  # hermes-agent's: jobs whose last answer goes before its prompt
    repeat: Optional[int] = None  # hermes-agent's: the runs it makes in all (None: as long as its schedule goes)
    runs: int = 0
    last_run: str = ""
    last_status: str = ""  # "ok", "error", "interrupted", "budget_exhausted"
    last_error: str = ""
    last_output: str = ""  # the file of the last run's answer
    last_delivery: str = ""  # "sent", or why the last answer was not (a job that delivers)
    running: int = 0  # the process running it now (0: none)

    def status(self) -> str:
        if self.running:
            return "running"
        if not self.enabled:
            return "paused"
        return "scheduled" if self.next_run else "done"

    def row(self) -> dict:
        return {**asdict(self), "status": self.status()}

    def resume(self) -> None:
        """Let it run again: a repeating job missed while paused from its next time after now (a once job that
        came due meanwhile runs at the next tick)."""
        self.enabled, now = True, local_now()
        if self.next_run and datetime.fromisoformat(self.next_run) < now:
            following = parse(self.schedule).after(datetime.fromisoformat(self.next_run), now)
            self.next_run = following.isoformat() if following else self.next_run


def folder() -> Path:
    from hermes.host.paths import data_dir

    return data_dir() / "cron"


@dataclass
class State:
    jobs: list = field(default_factory=list)
    last_tick: str = ""

    def find(self, job_id: str) -> Job:
        """The job of that id (or unique id prefix, or name); ``LookupError`` saying what there is."""
        for match in ([j for j in self.jobs if j.id == job_id], [j for j in self.jobs if j.name == job_id],
                      [j for j in self.jobs if j.id.startswith(job_id)] if len(job_id) >= 4 else []):
            if len(match) == 1:
                return match[0]
        raise LookupError(f"no cron job '{job_id}' (there are: {', '.join(j.id for j in self.jobs) or 'none'})")

    def nothing_ticks(self, now: datetime) -> bool:
        """Whether jobs wait with nothing running them (no tick for :data:`STALE_TICK` seconds)."""
        waiting = any(j.enabled and j.next_run for j in self.jobs)
        try:
            return waiting and (now - datetime.fromisoformat(self.last_tick)).total_seconds() > STALE_TICK
        except ValueError:  # none yet (or a hand-edited one)
            return waiting


def load() -> State:
    """The jobs as the file holds them (none when there is no file); ``ValueError`` for a damaged one."""
    path = folder() / FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return State()
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} cannot be read ({exc}); fix or remove it") from None
    known = {f.name for f in fields(Job)}
    try:
        jobs = [Job(**{k: v for k, v in entry.items() if k in known}) for entry in data.get("jobs", [])]
    except (TypeError, AttributeError) as exc:
        raise ValueError(f"{path} holds a job hermes cannot read ({exc}); fix or remove it") from None
    return State(jobs, str(data.get("last_tick") or ""))


@contextlib.contextmanager
def editing() -> Iterator[State]:
    """The jobs, locked against every other writer, written back when the block ends without an error."""
    import fcntl

    from hermes.host.files import atomic_write

    path = folder() / FILE
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(path.with_name(f".{FILE}.lock"), "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        state = load()
        yield state
        atomic_write(path, json.dumps({"jobs": [asdict(j) for j in state.jobs], "last_tick": state.last_tick},
                                      indent=2, ensure_ascii=False) + "\n")


def first_run(schedule: str) -> tuple:
    """``(schedule as written, its first run as ISO text)`` for a job scheduled now; ``ValueError`` for one that
    cannot be read or lies in the past."""
    now, schedule = local_now(), parse(schedule)
    first = schedule.first(now)
    if first <= now:
        raise ValueError(f"'{schedule.text}' is in the past")
    return schedule.text, first.isoformat()


def add(prompt: str, schedule: str, name: str = "", toolsets: Optional[list] = None, model: str = "",
        provider: str = "", base_url: str = "", skills: Optional[list] = None, deliver: str = "",
        workdir: str = "", script: str = "", no_agent: bool = False, context_from: Optional[list] = None,
        repeat: Optional[int] = None) -> Job:
    """A new job (``ValueError`` for a schedule that cannot be read, an empty prompt, a workdir that is no folder or
    a script that is no file of ``scripts/``)."""
    script = _script(script)
    if no_agent and not script:
        raise ValueError("a job without the agent runs a script: give one (--script NAME, in the data folder's "
                         "scripts/)")
    if not prompt.strip() and not no_agent:
        raise ValueError("the job's prompt is empty")
    text, first = first_run(schedule)
    job = Job(id=uuid.uuid4().hex[:8], name=name.strip() or " ".join((prompt or script).split())[:40],
              prompt=prompt, schedule=text, next_run=first, created=local_now().isoformat(), toolsets=toolsets,
              model=model, provider=provider, base_url=base_url, skills=list(skills or []), deliver=deliver.strip(),
              workdir=_folder(workdir), script=script, no_agent=bool(no_agent), repeat=_times(repeat))
    with editing() as state:
        try:
            job.context_from = [state.find(str(other)).id for other in context_from or []]
        except LookupError as exc:
            raise ValueError(f"context_from: {exc}") from None
        state.jobs.append(job)
    return job


def _folder(workdir: str) -> str:
    """A job's workdir as kept: absolute and real ("": none); ``ValueError`` for one that is no folder."""
    workdir = os.path.expanduser(workdir.strip())
    if workdir and not (os.path.isabs(workdir) and os.path.isdir(workdir)):
        raise ValueError(f"the job's workdir {workdir!r} is no folder (give one by its absolute path)")
    return os.path.realpath(workdir) if workdir else ""


def _script(script: str) -> str:
    """A job's script as kept, a name in the data folder's ``scripts/`` ("": none); ``ValueError`` for one that is
    no file there (hermes-agent's rule: never a path out of it)."""
    from hermes.host.paths import data_dir
    from plugins.scripts import located

    script = str(script or "").strip().replace("~/.hermes/scripts/", "", 1)
    if script and located(script, data_dir()) is None:
        raise ValueError(f"the job's script {script!r} is no file in {(data_dir() / 'scripts').resolve()} (put it "
                         "there, and give its name)")
    return script


def _times(repeat) -> Optional[int]:
    """A job's ``repeat`` as kept: a count of runs, or None (0 or less, as in hermes-agent: for ever)."""
    if repeat is None:
        return None
    try:
        count = int(repeat) if not isinstance(repeat, bool) else None
    except (TypeError, ValueError):
        count = None
    if count is None:
        raise ValueError(f"the job's repeat {repeat!r} is no number of runs")
    return count if count > 0 else None


EDITABLE = ("schedule", "prompt", "name", "deliver", "workdir", "skills", "script", "no_agent", "context_from",
            "repeat")


def edit(job_id: str, **changes) -> Job:
    """Change what :data:`EDITABLE` names of a job (hermes-agent's ``cron edit`` and the tool's ``update``); a new
    schedule runs first at its next time from now. ``LookupError``/``ValueError`` as :func:`change` and :func:`add`."""
    if changes.get("prompt") is not None and not str(changes["prompt"]).strip():
        raise ValueError("the job's prompt is empty")
    with editing() as state:
        job = state.find(job_id)
        if changes.get("schedule") is not None:
            job.schedule, job.next_run = first_run(changes["schedule"])
        if changes.get("workdir") is not None:
            job.workdir = _folder(changes["workdir"])
        if changes.get("script") is not None:
            job.script = _script(changes["script"])
        if changes.get("no_agent") is not None:
            job.no_agent = bool(changes["no_agent"])
        if changes.get("repeat") is not None:
            job.repeat = _times(changes["repeat"])
            if job.repeat and job.runs >= job.repeat:
                job.next_run = None  # its runs are made
            elif job.next_run is None:  # runs left again: from its schedule's next time (a once job's past stays past)
                with contextlib.suppress(ValueError):
                    job.next_run = first_run(job.schedule)[1]
        if changes.get("context_from") is not None:
            job.context_from = [state.find(str(other)).id for other in changes["context_from"]]
        if job.no_agent and not job.script:
            raise ValueError("a job without the agent runs a script: give one")
        for key in ("prompt", "name", "deliver"):
            if changes.get(key) is not None:
                setattr(job, key, str(changes[key]).strip() if key != "prompt" else changes[key])
        if changes.get("skills") is not None:
            job.skills = [str(s) for s in changes["skills"]]
    return job


def change(job_id: str, action: str) -> Job:
    """``pause``, ``resume`` or ``remove`` the job (an id, a unique id prefix or a name); the job as changed.
    ``LookupError`` for an unknown one, ``ValueError`` for a damaged file."""
    with editing() as state:
        job = state.find(job_id)
        if action == "remove":
            state.jobs.remove(job)
        elif action == "resume":
            job.resume()
        else:
            job.enabled = False
    return job


def when(iso: Optional[str]) -> str:
    """An ISO time as the listings show it (``2026-12-06 09:00``), or ``-``."""
    return iso[:16].replace("T", " ") if iso else "-"


def claim_due(now: datetime) -> list:
    """The jobs due at ``now``, each marked as run by this process with its next run set; the tick noted (not
    without a jobs file: ``hermes serve`` ticks in every data folder, most of which never hold a job)."""
    claimed = []
    if not (folder() / FILE).exists():
        return claimed
    with editing() as state:
        state.last_tick = now.isoformat()
        for job in state.jobs:
            if job.running and not _alive(job.running):  # its process died while it ran
                job.running, job.last_status, job.last_error = 0, "interrupted", "its process ended before it did"
            if job.running or not job.enabled or not job.next_run:
                continue
            try:
                due = datetime.fromisoformat(job.next_run)
                following = parse(job.schedule).after(due, now) if due <= now else due
            except ValueError as exc:  # a hand-edited file: this job stops, the others run
                job.enabled, job.last_status, job.last_error = False, "error", f"paused: {exc}"
                continue
            if due <= now:
                job.next_run, job.running = following.isoformat() if following else None, os.getpid()
                claimed.append(job)
    return claimed


def tick(app, said=lambda job: None) -> list:
    """Run the jobs due now, side by side up to ``cron.max_parallel_jobs`` (hermes-agent's key; empty: all of them),
    so that a long job does not hold back those due with it; the jobs as recorded after their runs, in the order
    they ended (``said`` is told each)."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    due, ran = claim_due(local_now()), []
    most = min(int(app.config.get("cron.max_parallel_jobs") or len(due) or 1), len(due) or 1)
    with ThreadPoolExecutor(most, thread_name_prefix="hermes-cron") as pool:  # its threads start with the first job
        ended = (run(app, job) for job in due) if most == 1 else \
            (done.result() for done in as_completed([pool.submit(run, app, job) for job in due]))
        for job in ended:  # run() records a job's failure as its outcome: it does not raise
            ran.append(job)
            said(job)
    return ran


def keep_ticking(app, every: float) -> None:
    """:func:`tick` every ``every`` seconds for as long as the process lives (``hermes serve``'s thread); a damaged
    jobs file is logged once per change, and the ticking goes on."""
    import logging
    import time

    said = ""
    while True:
        started = time.monotonic()
        try:
            tick(app)
            said = ""
        except ValueError as exc:
            if str(exc) != said:
                logging.getLogger("hermes.cron").warning("%s", exc)
                said = str(exc)
        time.sleep(max(0.0, every - (time.monotonic() - started)))


def tick_beside(app) -> None:
    """The due jobs run on a thread of this process (``hermes serve``'s, ``hermes gateway run``'s) as ``hermes cron
    daemon`` runs them, when the cron plugin is loaded and ``cron.with_serve`` is on."""
    import threading

    record = app.host.record("cron")
    if record is None or record.status != "enabled" or not app.config.get("cron.with_serve", True):
        return
    every = float(app.config.get("cron.tick_seconds", 60) or 60)
    threading.Thread(target=keep_ticking, args=(app, every), name="cron", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


IN_WORKDIR = "HERMES_CRON_IN_WORKDIR"  # set for the process a job with a workdir runs in: the job's id


def run(app, job: Job) -> Job:
    """Run ``job`` now as its own agent (platform ``cron``: nobody is there to approve), keep what it answered,
    and record the run; the job as recorded. A job with a workdir runs in a process started there."""
    from hermes.cli.app import Fail
    from plugins.approval import AutoApprove
    from plugins.front import build_agent

    if job.workdir and os.environ.get(IN_WORKDIR) != job.id:
        return _run_in_workdir(app, job)
    with editing() as state:  # `hermes cron run` too: a tick meanwhile leaves it alone
        if job.id not in {j.id for j in state.jobs}:
            return job  # removed since it was claimed
        state.find(job.id).running = os.getpid()
    started, answer, error, status = local_now(), "", "", "error"
    if job.workdir:  # this process started there for it: the tools start where it is, whatever terminal.cwd says
        app.config.overrides["terminal.cwd"] = ""
    prompt = job.prompt
    if job.script:
        prompt, answer, error, status = _scripted(app, job)
        if prompt is None:  # the script was the job, or said there is nothing to do: no model
            return _record(app, job, started, answer, error, status)
    prompt = _with_answers(job, prompt)
    opts = {"model": job.model or None, "provider": job.provider or None, "base_url": job.base_url or None,
            "toolsets": None if job.toolsets is None else ",".join(job.toolsets)}
    try:
        approving = app.config.get("approvals.cron_mode") == "approve"  # else nobody answers: no
        agent = build_agent(app, opts, AutoApprove("approvals.cron_mode: approve") if approving else None,
                            platform="cron")
        if job.skills:  # the skills plugin loads them with the prompt, as chat's /NAME does
            agent.state.setdefault("skills.pending", []).extend(job.skills)
        try:
            result = agent.run_conversation(prompt)
        finally:
            agent.close()
        answer, error = result.final_response or "", result.error or ""
        status = "ok" if result.exit_reason == "completed" else result.exit_reason
    except Fail as exc:
        error = exc.message
    except Exception as exc:  # noqa: BLE001 - one job's failure is its record, not the tick's end
        error = f"{type(exc).__name__}: {exc}"
    return _record(app, job, started, answer, error, status)


def _scripted(app, job: Job) -> tuple:
    """hermes-agent's job script, run first: ``(prompt, answer, error, status)``, the prompt None when no model is
    to be asked. A job without the agent: the script's output is the answer, nothing printed a silent run. Else
    its output goes before the prompt as data, its failure as an error to report, and nothing printed (or
    ``{"wakeAgent": false}`` on its last line) is a silent run."""
    from plugins import scripts

    done, why = scripts.run(job.script, app.config.data_dir, scripts.environment(app.config),
                            app.config.get("cron.script_timeout_seconds"), cwd=job.workdir or None)
    out = done.stdout.strip() if done is not None else ""
    if done is not None and done.returncode:
        why = f"its script {job.script} ended with exit code {done.returncode}" + \
              (f": {done.stderr.strip().splitlines()[-1]}" if done.stderr.strip() else "")
    if job.no_agent:
        return None, out, why, "error" if why else "ok" if out else "silent"
    if why:
        return (f"## Script error\nThe script that collects this job's data failed; tell the user.\n\n```\n{why}\n"
                f"{out}\n```\n\n{job.prompt}"), "", "", ""
    if not out or _asleep(out):
        return None, "", "", "silent"
    return (f"## Script output\nThe job's script collected this before the run: use it.\n\n```\n{out}\n```\n\n"
            f"{job.prompt}"), "", "", ""


def _with_answers(job: Job, prompt: str, most: int = 8000) -> str:
    """hermes-agent's ``context_from``: the last answer of each job named, before the prompt (the first ``most``
    characters); a job gone or that never answered is left out."""
    try:
        jobs = {j.id: j for j in load().jobs}
    except ValueError:
        return prompt
    for other in (jobs.get(i) for i in job.context_from):
        try:
            text = open(other.last_output, encoding="utf-8").read() if other and other.last_output else ""
        except OSError:
            continue
        answer = text.partition("\n## Answer\n\n")[2].partition("\n## Error\n")[0].strip()
        if answer and answer != "(none)":
            cut = answer[:most] + ("\n[... cut here]" if len(answer) > most else "")
            prompt = (f"## The last answer of the job {other.name} ({other.id})\nA job before this one answered "
                      f"this ({other.last_run}): use it.\n\n```\n{cut}\n```\n\n{prompt}")
    return prompt


def _asleep(output: str) -> bool:
    """hermes-agent's wake gate: a last line ``{"wakeAgent": false}`` says there is nothing for the agent to do."""
    try:
        last = json.loads(output.splitlines()[-1])
    except ValueError:
        return False
    return isinstance(last, dict) and last.get("wakeAgent", True) is False


def _record(app, job: Job, started: datetime, answer: str, error: str, status: str) -> Job:
    """Keep a run's answer, send it where the job delivers (not a silent run's), and note the run; the job as
    recorded."""
    output = _keep_output(job, started, answer, error, app.config.get("cron.output_retention", KEPT_OUTPUTS))
    delivered = _deliver(app, job, answer, error) if job.deliver and status != "silent" else ""
    with editing() as state:
        try:
            recorded = state.find(job.id)
        except LookupError:  # removed while it ran
            return job
        recorded.runs += 1
        if recorded.repeat and recorded.runs >= recorded.repeat:  # its runs are made (hermes-agent's repeat)
            recorded.next_run = None
        recorded.last_run, recorded.last_status, recorded.last_error = started.isoformat(), status, error[:500]
        recorded.last_output, recorded.running, recorded.last_delivery = output, 0, delivered
    return recorded


def _run_in_workdir(app, job: Job) -> Job:
    """``hermes cron run JOB`` in a process started in the job's folder: a process has one current folder, which the
    prompt's project files, the tools, the sandbox's workspace and the session all read, while other jobs and a
    gateway's chats run beside it in this one (hermes-agent changes its own and runs such jobs one at a time)."""
    import subprocess
    import sys

    if not os.path.isdir(job.workdir):
        return _record(app, job, local_now(), "", f"its workdir {job.workdir} is no folder now: not run", "error")
    env = {**os.environ, IN_WORKDIR: job.id}
    if app.distro_path:
        env["HERMES_DISTRO"] = app.distro_path
    runs = job.runs
    with contextlib.suppress(ValueError, LookupError):
        runs = load().find(job.id).runs
    started = local_now()
    done = subprocess.run([sys.executable, "-m", "hermes.cli", "cron", "run", job.id], cwd=job.workdir, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(done.stderr)  # its warnings are this run's
    try:
        recorded = load().find(job.id)
    except (LookupError, ValueError):  # removed while it ran (or the file damaged: the next tick says so)
        return job
    if recorded.runs > runs:
        return recorded
    said = (done.stderr.strip().splitlines() or [""])[-1]
    return _record(app, job, started, "", f"its process in {job.workdir} ended with exit code {done.returncode}"
                   + (f": {said}" if said else ""), "error")


def _deliver(app, job: Job, answer: str, error: str) -> str:
    """The answer sent where ``job.deliver`` says (the gateway plugin's ``deliver_message``): "sent", or why not."""
    text = (f"⏰ {job.name}\n\n" if app.config.get("cron.wrap_response") else "") + (answer or "(no answer)") + (
        f"\n\n⚠️ {error}" if error else "")
    hook = getattr(app.host.pm.hook, "deliver_message", None)
    try:
        said = hook(target=job.deliver, text=text, host=app.host) if hook is not None else None
    except Exception as exc:  # noqa: BLE001 - the run is recorded either way
        said = f"{type(exc).__name__}: {exc}"
    if said is None:
        said = f"no plugin sends to {job.deliver.partition(':')[0]!r} (the gateway plugin's platforms do: telegram, " \
               "discord, slack, matrix, signal, mattermost, email, ntfy, whatsapp_cloud, sms, irc, feishu, dingtalk, " \
               "line, bluebubbles, teams, google_chat)"
    return said or "sent"


def _keep_output(job: Job, started: datetime, answer: str, error: str, kept: int = KEPT_OUTPUTS) -> str:
    from hermes.host.files import atomic_write

    where = folder() / "output" / job.id
    path = where / f"{started.strftime('%Y%m%d-%H%M%S')}.md"
    text = f"# {job.name}\n\n{started.isoformat()} ({job.schedule})\n\n## Prompt\n\n{job.prompt}\n\n## Answer\n\n" \
           f"{answer or '(none)'}\n" + (f"\n## Error\n\n{error}\n" if error else "")
    try:
        atomic_write(path, text)
        for old in sorted(where.glob("*.md"))[:-kept]:
            old.unlink(missing_ok=True)
    except OSError:
        return ""
    return str(path)
