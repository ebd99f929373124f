"""``/api/jobs``: the cron plugin's jobs as hermes-agent's API server serves them: list, create, read, change, delete,
pause, resume and run now (each job with hermes-agent's names for its times and state beside ours). ``hermes serve``
also runs them as they come due, on a thread of its own, as hermes-agent's gateway does (``cron.with_serve``; two
processes ticking never run a job twice). Without the ``cron`` plugin: 503."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from plugins.serve.app import error

CRON = "cron"
CHANGEABLE = {"name": str, "prompt": str, "schedule": str, "enabled": bool}


def enabled(host) -> bool:
    record = host.record(CRON)
    return record is not None and record.status == "enabled"


def shown(job) -> dict:
    return {**job.row(), "state": job.status(), "schedule_display": job.schedule, "next_run_at": job.next_run,
            "last_run_at": job.last_run or None, "created_at": job.created}


async def _call(server, request: Request, work, status: int = 200) -> Response:
    """``work(jobs, job_id)`` on a thread, its answer as JSON; 503 without the plugin, 404 for an unknown job, 400
    for what cannot be done (a schedule that cannot be read)."""
    if not enabled(server.host):
        return error(503, "the cron plugin is not enabled", kind="server_error", code="cron_unavailable")
    from plugins.cron import jobs

    try:
        return JSONResponse(await asyncio.to_thread(work, jobs, request.path_params.get("job_id")), status_code=status)
    except LookupError as exc:
        return error(404, str(exc), code="job_not_found")
    except ValueError as exc:
        return error(400, str(exc))


async def list_jobs(server, request: Request) -> Response:
    return await _call(server, request, lambda jobs, _: {"jobs": [shown(j) for j in jobs.load().jobs]})


async def create_job(server, request: Request) -> Response:
    body = await server.body(request)
    if isinstance(body, Response):
        return body
    for key in ("schedule", "prompt"):
        if not isinstance(body.get(key), str) or not body[key].strip():
            return error(400, f"'{key}' is required (a string)", param=key)
    toolsets = body.get("toolsets", body.get("enabled_toolsets"))  # hermes-agent's name too
    if toolsets is not None and not (isinstance(toolsets, list) and all(isinstance(t, str) for t in toolsets)):
        return error(400, "'toolsets' must be a list of toolset names", param="toolsets")
    return await _call(server, request, lambda jobs, _: {"job": shown(jobs.add(
        body["prompt"], body["schedule"], str(body.get("name") or ""), toolsets, str(body.get("model") or "")))},
        status=201)


async def get_job(server, request: Request) -> Response:
    return await _call(server, request, lambda jobs, job_id: {"job": shown(jobs.load().find(job_id))})


async def update_job(server, request: Request) -> Response:
    body = await server.body(request)
    if isinstance(body, Response):
        return body
    wrong = [k for k, v in body.items() if k not in CHANGEABLE or not isinstance(v, CHANGEABLE[k])]
    if wrong or not body:
        return error(400, f"a change names some of {', '.join(CHANGEABLE)} with their types"
                     + (f" (not {', '.join(map(repr, wrong))})" if wrong else ""))

    def change(jobs, job_id):
        with jobs.editing() as state:
            job = state.find(job_id)
            if "schedule" in body:
                job.schedule, job.next_run = jobs.first_run(body["schedule"])
            job.name, job.prompt = body.get("name", job.name), body.get("prompt", job.prompt)
            if body.get("enabled") is True:
                job.resume()
            elif body.get("enabled") is False:
                job.enabled = False
        return {"job": shown(job)}

    return await _call(server, request, change)


def _edit(action: str):
    def change(jobs, job_id):
        job = jobs.change(job_id, action)
        return {"deleted": job.id} if action == "remove" else {"job": shown(job)}

    return change


async def delete_job(server, request: Request) -> Response:
    return await _call(server, request, _edit("remove"))


async def pause_job(server, request: Request) -> Response:
    return await _call(server, request, _edit("pause"))


async def resume_job(server, request: Request) -> Response:
    return await _call(server, request, _edit("resume"))


async def run_job(server, request: Request) -> Response:
    """Run it now, in the background (its schedule stays); 202 with the job as it starts."""
    def start(jobs, job_id):
        job = jobs.load().find(job_id)
        if job.running:
            raise ValueError(f"cron job {job.id} is running already")
        threading.Thread(target=jobs.run, args=(server.app, job), name=f"cron-{job.id}", daemon=True).start()
        return {"job": {**shown(job), "state": "running", "started_at": datetime.now().astimezone().isoformat()}}

    return await _call(server, request, start, status=202)
