"""hermes-agent's cron jobs (its ``cron/jobs.json``) brought here: ``hermes cron import``, and ``hermes import`` of a
hermes-agent backup. Each job keeps its prompt, name, schedule, model and toolsets, and stays paused when it was;
what runs differently here is said: a delivery to Telegram, Discord or Slack (its chat, or the one it was made in)
is kept, one to another platform is said (its answers are kept in ``cron/output`` only), a job's script (with the
agent or without) is kept when it is in this data folder's ``scripts/`` (else the job is left out, said), the jobs
whose answers its prompt follows (``context_from``) are those jobs imported, and a once job whose time has passed is
left out. A job already here (the same prompt and schedule) is not added twice."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Optional

LOCAL_DELIVERY = ("", "local", "origin", "none", None)
SENT_TO = ("telegram", "discord", "slack", "matrix", "signal", "email", "mattermost", "ntfy",
           "whatsapp_cloud", "sms", "irc", "feishu", "dingtalk", "line", "bluebubbles", "teams",
           "google_chat")  # the gateway's


def delivery_of(job: dict) -> str:
    """Where a hermes-agent job's answers go here: ``telegram:CHAT`` or ``discord:CHANNEL`` (its ``deliver``, or
    ``origin`` with the chat it was made in), ``telegram`` (the home chat), or "" (kept only)."""
    deliver = str(job.get("deliver") or "").split(",")[0].strip()
    origin = job.get("origin") if isinstance(job.get("origin"), dict) else {}
    if deliver in ("", "origin") and origin.get("platform") and origin.get("chat_id"):
        deliver = f"{origin['platform']}:{origin['chat_id']}"
    platform, _, chat = deliver.partition(":")
    whole = platform == "matrix" or chat.startswith("group:")  # a Matrix room's id and a Signal group's hold a colon
    chat = ":".join(chat.split(":")[:2 if whole else 1])  # without a thread's id
    return f"{platform}:{chat}".rstrip(":") if platform in SENT_TO else ""


def find(data_dir: Path) -> Optional[Path]:
    """hermes-agent's jobs file: in a data folder shared with it, else in ``~/.hermes``."""
    for path in (data_dir / "cron" / "jobs.json", Path.home() / ".hermes" / "cron" / "jobs.json"):
        if path.is_file():
            return path
    return None


def schedule_of(job: dict) -> Optional[str]:
    """A job's schedule in the words this cron reads, or None for a once job whose time has passed."""
    schedule = job.get("schedule") if isinstance(job.get("schedule"), dict) else {}
    kind = schedule.get("kind")
    if kind == "interval" and isinstance(schedule.get("minutes"), (int, float)):
        return f"every {int(schedule['minutes'])}m"
    if kind == "cron" and isinstance(schedule.get("expr"), str):
        return schedule["expr"]
    if kind == "once" and isinstance(schedule.get("run_at"), str):
        at = datetime.fromisoformat(schedule["run_at"])
        return schedule["run_at"] if at.astimezone() > datetime.now().astimezone() else None
    return str(job.get("schedule_display") or job.get("schedule") or "")


def import_jobs(path: Path) -> dict:
    """The jobs of hermes-agent's ``path`` added here; what was done, and each job left out or changed with why."""
    from plugins.cron import jobs

    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not read ({getattr(exc, 'strerror', None) or exc})") from None
    found = data.get("jobs", []) if isinstance(data, dict) else data if isinstance(data, list) else []
    here = {(job.prompt, job.schedule, job.script) for job in jobs.load().jobs}
    done = {"source": str(path), "imported": 0, "already_here": 0, "left_out": [], "notes": []}
    ids, chained = {}, []  # hermes-agent's job id -> its id here; (the job here, the ids its context_from names)
    for job in (j for j in found if isinstance(j, dict)):
        name = str(job.get("name") or job.get("id") or "?")
        prompt = str(job.get("prompt") or "")
        schedule = schedule_of(job)
        repeat = job.get("repeat") if isinstance(job.get("repeat"), dict) else {}
        times, completed = repeat.get("times"), repeat.get("completed") or 0
        left = times - completed if isinstance(times, int) and times > 0 and isinstance(completed, int) else None
        if left is not None and left <= 0:
            done["left_out"].append(f"{name}: it made its {times} runs")
            continue
        if schedule is None:
            done["left_out"].append(f"{name}: a once job whose time has passed")
            continue
        if (prompt, schedule, str(job.get("script") or "")) in here:
            done["already_here"] += 1
            continue
        try:
            skills = job.get("skills") or ([job["skill"]] if job.get("skill") else [])
            workdir = str(job.get("workdir") or "").strip()
            if workdir and not (os.path.isabs(workdir) and os.path.isdir(workdir)):
                done["notes"].append(f"{name}: its workdir {workdir} is no folder here: it runs where the runs start")
                workdir = ""
            added = jobs.add(prompt, schedule, name, toolsets=job.get("enabled_toolsets") or None,
                             model=str(job.get("model") or ""), provider=str(job.get("provider") or ""),
                             base_url=str(job.get("base_url") or ""),
                             skills=[str(s) for s in skills] if isinstance(skills, list) else [],
                             deliver=delivery_of(job), workdir=workdir, script=str(job.get("script") or ""),
                             no_agent=bool(job.get("no_agent")), repeat=left)
        except ValueError as exc:
            done["left_out"].append(f"{name}: {exc}")
            continue
        here.add((prompt, schedule, added.script))
        done["imported"] += 1
        if not job.get("enabled", True) or job.get("state") == "paused":
            jobs.change(added.id, "pause")
        ids[str(job.get("id"))] = added.id
        named = job.get("context_from")
        if named:
            chained.append((added, name, [named] if isinstance(named, str) else list(named)))
        if job.get("deliver") not in LOCAL_DELIVERY and not added.deliver:
            done["notes"].append(f"{name}: its answers are kept in cron/output, not sent to {job['deliver']}")
    for added, name, named in chained:  # once every job has its id here
        found = [ids[str(n)] for n in named if str(n) in ids]
        jobs.edit(added.id, context_from=found)
        if len(found) < len(named):
            done["notes"].append(f"{name}: of the jobs its prompt follows (context_from), "
                                 f"{', '.join(str(n) for n in named if str(n) not in ids)} were not imported")
    return done
