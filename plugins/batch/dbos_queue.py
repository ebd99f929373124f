"""``hermes batch`` on a DBOS queue (``durable.engine: dbos`` with ``durable.database_url: postgresql://...``).

The command puts each prompt on the DBOS queue ``hermes-batch`` as a workflow (``hermes.batch_prompt``, its id
made of the batch's key and the prompt's index, so putting it there again is a no-op) and writes each
trajectory to ``--out`` as its workflow ends. ``hermes batch worker`` on any host that reaches the database takes
prompts from the queue (``--workers`` at once); so does the command itself with ``--workers`` above 0. A prompt
is the turn's workflow: its model and tool calls are checkpointed steps, so a prompt whose worker was killed
goes on elsewhere without running a finished tool again; the command hands the prompts of a worker that died
on this host back to the queue, and a worker restarted with the same ``--name`` takes its own back.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Optional

from dbos import DBOS, SetWorkflowID

QUEUE = "hermes-batch"
_apps: dict = {}  # distro -> the App its prompts run in (one per process)


def start(app, workers: int, name: Optional[str] = None) -> None:
    """DBOS for this process, taking prompts from the queue (``workers`` > 0) or only putting them there.

    The queue's limits live in the database, for every process: how many prompts one worker runs at once
    (the ``--workers`` of the worker started last) and in all (``batch.concurrency``, none by default)."""
    from plugins.durable import engine

    engine.launch(app.config, queues=[QUEUE] if workers else [], executor_id=name)
    limit = app.config.get("batch.concurrency")
    if workers:
        DBOS.register_queue(QUEUE, worker_concurrency=workers, global_concurrency=limit, polling_interval_sec=0.1,
                            on_conflict="always_update")
    else:
        DBOS.register_queue(QUEUE, worker_concurrency=1, global_concurrency=limit, polling_interval_sec=0.1,
                            on_conflict="never_update")
    _apps.setdefault(app.distro_path, app)


@DBOS.workflow(name="hermes.batch_prompt")
def batch_prompt(settings: dict, task: dict) -> dict:
    """One prompt's run as a workflow of its own; its id names the session and the turn (a run resumed
    elsewhere writes the same session, skipping what it holds)."""
    from plugins.batch.worker import run_one
    from plugins.front import prepare_store

    app = _apps.get(settings["distro"])
    if app is None:
        from hermes.cli.app import App

        app = _apps[settings["distro"]] = App(settings["distro"])
    if not getattr(app, "batch_store_ready", False):
        prepare_store(app, dict(settings["opts"]))
        app.batch_store_ready = True
    return run_one(app, settings["opts"], task, run_id=DBOS.workflow_id)


def batch_key(out: str, prompts: list) -> str:
    """The batch's name on the queue: its --out and its prompts (the same command again is the same batch)."""
    digest = hashlib.sha256(os.path.abspath(out).encode())
    for prompt in prompts:
        digest.update(prompt.line_hash.encode())
    return digest.hexdigest()[:12]


def enqueue(key: str, settings: dict, todo: list) -> dict:
    """Put every prompt of ``todo`` on the queue (again: a no-op); ``{workflow id: prompt}``."""
    queue = DBOS.retrieve_queue(QUEUE)
    ids = {}
    for prompt in todo:
        workflow_id = ids_of(key, prompt.index)
        with SetWorkflowID(workflow_id):
            queue.enqueue(batch_prompt, settings, {"index": prompt.index, "prompt": prompt.text,
                                                   "hash": prompt.line_hash, "settings": prompt.settings})
        ids[workflow_id] = prompt
    return ids


def ids_of(key: str, index: int) -> str:
    return f"batch-{key}-{index:06d}"


def wait(ids: dict, on_answer, tick=lambda: None, every: float = 0.25) -> None:
    """Call ``on_answer(answer)`` for each prompt's workflow as it ends (``{"index", "line"}`` or ``{"index",
    "error"}``); a prompt whose worker died on this host goes back to the queue."""
    left, handed_back = dict(ids), set()
    while left:
        for status in DBOS.list_workflows(workflow_ids=list(left), load_input=False):
            prompt = left.get(status.workflow_id)
            if status.status == "SUCCESS":
                left.pop(status.workflow_id)
                on_answer(status.output)
            elif status.status in ("ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
                left.pop(status.workflow_id)
                why = f"{status.status.lower()}: {status.error or ''}".strip(": ")
                on_answer({"index": prompt.index, "error": why})
            elif status.status == "PENDING" and status.workflow_id not in handed_back and _dead(status.executor_id):
                handed_back.add(status.workflow_id)  # its worker is gone: the queue's next taker goes on with it
                DBOS.resume_workflow(status.workflow_id, queue_name=QUEUE)
            elif status.status == "ENQUEUED":
                handed_back.discard(status.workflow_id)
        if left:
            tick()
            time.sleep(every)


def _dead(executor_id: Optional[str]) -> bool:
    """An executor of this host whose process is gone (named ``host-pid-...``; a named worker is never
    judged from here: restarting it with its name takes its prompts back)."""
    from plugins.durable.engine import running_here

    host, _, pid = (executor_id or "").rpartition("-")[0].rpartition("-")
    return running_here(host, pid) is False
