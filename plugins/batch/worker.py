"""A local batch worker: ``python -m plugins.batch.worker``, started by ``hermes batch``.

Its first line on stdin is the batch's settings (the command's provider options), then one prompt per line
(``{"index", "prompt", "hash", "settings"}``); for each it answers one line on stdout: ``{"index", "line"}``
(the trajectory's JSON line) or ``{"index", "error"}``. The plugins load once per worker; each prompt gets its
own agent, session and budget. A store, provider or toolset of the command that cannot be had is the first
answer, ``{"fatal"}``. What plugin code prints goes to stderr (fd 1 is the answers' alone), and the worker ends
with the command that started it (its parent's death kills it; stdin closing ends it).
"""

from __future__ import annotations

import json
import os
import signal
import sys


def _die_with_parent(parent: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before that took hold
        os._exit(1)


def run_one(app, opts: dict, task: dict, run_id: str = "") -> dict:
    """One prompt's run, as its trajectory line (or its error, in one line). ``run_id`` (a queued prompt's
    workflow) names its session and turn, so a run resumed in another process writes the same session."""
    from hermes.cli.app import Fail
    from plugins.batch.trajectory import entry
    from plugins.front import build_agent
    from plugins.tool_args import masked_result

    settings = task["settings"]
    opts = dict(opts, model=settings.get("model") or opts.get("model"),
                max_turns=settings.get("max_turns") or opts.get("max_turns"))
    if settings.get("toolsets") is not None:  # []: no tools, as -t ""
        opts["toolsets"] = ",".join(settings["toolsets"])
    try:
        agent = build_agent(app, opts, None, platform="batch")
    except Fail as exc:
        return {"index": task["index"], "error": exc.message}
    if run_id:
        from plugins.durable.engine import stored

        agent.session_id = run_id.replace("-", "_")
        agent.state["durable.stored"] = stored(agent)  # what a run of it that was cut short wrote
    try:
        result = masked_result(agent.run_conversation(task["prompt"], task_id=run_id or None,
                                                      turn_id=run_id or None), agent)
        tools = list(agent.tools.values())
    finally:
        agent.close()
    if result["exit_reason"] in ("error", "interrupted"):
        return {"index": task["index"], "error": result["error"] or result["exit_reason"]}
    toolsets = sorted({t.toolset for t in tools if t.toolset})
    index = task["index"]
    line = json.dumps(entry(index, task["prompt"], task["hash"], result, tools, toolsets), ensure_ascii=False)
    return {"index": index, "line": line}  # the command writes it as it is: no decoding and encoding again


def main() -> None:
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # print() in plugin code lands on stderr, never inside an answer
    _die_with_parent(int(os.environ.get("HERMES_BATCH_PARENT", os.getppid())))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command's Ctrl+C is the command's to handle
    from hermes.cli.app import App, Fail
    from plugins.front import build_agent, prepare_store

    settings = json.loads(sys.stdin.readline())
    app = App(settings.get("distro"))
    opts = settings["opts"]
    try:
        prepare_store(app, dict(opts))  # as the command did: --no-save sets the stores aside here too
        # a provider or toolset that cannot be had is the batch's one line, before any prompt; what this agent
        # starts (the configured MCP servers) serves the runs that follow
        build_agent(app, dict(opts), None, platform="batch").close()
    except Fail as exc:
        answers.write(json.dumps({"fatal": exc.message}) + "\n")
        answers.flush()
        return
    for line in sys.stdin:
        task = json.loads(line)
        try:
            answer = run_one(app, opts, task)
        except Exception as exc:  # our bug, or a plugin's that got past the guard: this prompt fails, not the batch
            answer = {"index": task["index"], "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
        answers.write(json.dumps(answer, ensure_ascii=False) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
