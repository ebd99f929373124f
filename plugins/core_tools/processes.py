"""Background commands: ``terminal(background=true)`` starts one and returns at once; the ``process`` tool lists
them, reads what they printed since it last looked (or any lines of their log), types into them, waits for one or
kills it.

A background command runs as a foreground one does (its own process group, in the sandbox where there is one, no
keys in its environment) with its output in a file of its own. It belongs to the agent that started it and ends
with it: when the agent closes (``on_session_finalize`` with ``shutdown``) and, whatever happens before, when hermes
exits. In the sandbox it also dies with hermes on ``kill -9`` (bubblewrap's ``--die-with-parent``); outside it, a
``kill -9`` of hermes leaves it running, as ``nohup`` would."""

from __future__ import annotations

import atexit
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kernel.types import Tool, ToolError
from plugins.tool_args import arg, check_args, clip, is_interrupted

STATE = "core_tools.processes"  # agent.state key: id -> Background
ACTIONS = ("list", "poll", "log", "wait", "submit", "write", "close", "kill")
MAX_RUNNING = 16  # per agent: a loop that starts servers stops here
_live: set = set()  # every running one of this process, for the exit handler
_lock = threading.Lock()


@dataclass(eq=False)  # kept in a set: one is itself only
class Background:
    id: str
    command: str
    proc: Any  # subprocess.Popen
    log: str  # the file its output goes to
    started: float = field(default_factory=time.monotonic)
    read: int = 0  # bytes of the log the model has seen
    killed: bool = False

    def status(self) -> dict:
        code = self.proc.poll()
        found = {"process_id": self.id, "pid": self.proc.pid, "command": self.command[:200]}
        if code is None:
            return {**found, "status": "running", "seconds": round(time.monotonic() - self.started, 1)}
        return {**found, "status": "killed" if self.killed else "exited", "exit_code": code}

    def new_output(self, limit: int) -> str:
        """What it printed since the model last looked (a server's hours of log: only their head and tail read)."""
        from plugins.core_tools.terminal import read_output

        with open(self.log, "rb") as fh:
            text = read_output(fh, limit, self.read)
            self.read = fh.tell()  # where that reading ended: what it prints meanwhile comes next time
        return text

    def log_lines(self, offset: "int | None", limit: int) -> tuple:
        """``(lines, total)``: ``limit`` lines of the whole log from line ``offset`` (1-based; None: its last
        ``limit`` lines), read as a stream (a server's hours of log are never in memory whole)."""
        from collections import deque

        kept = deque(maxlen=limit) if offset is None else []
        total = 0
        with open(self.log, encoding="utf-8", errors="replace") as fh:
            for total, line in enumerate(fh, 1):
                if offset is None or offset <= total < offset + limit:
                    kept.append(line)
        return "".join(kept), total

    def send(self, data: str) -> str:
        """Write ``data`` to its input without waiting; what happened, for the model."""
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            raise ToolError(f"process: {self.id}'s input is closed")
        if self.proc.poll() is not None:
            raise ToolError(f"process: {self.id} has ended (exit code {self.proc.returncode})")
        raw, sent = data.encode("utf-8", "replace"), 0  # a lone surrogate from JSON becomes "?"
        try:
            while sent < len(raw):
                sent += os.write(stdin.fileno(), raw[sent:])
        except BlockingIOError:  # its input's buffer is full: it is not reading
            return f"{sent} of {len(raw)} bytes written: it is not reading its input now"
        except BrokenPipeError:
            return f"{sent} of {len(raw)} bytes written: it closed its input"
        return f"{sent} bytes written"

    def stop(self) -> None:
        from plugins.core_tools.terminal import kill_group

        if self.proc.poll() is None:
            self.killed = True
            kill_group(self.proc)
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        with _lock:
            _live.discard(self)


def start(agent: Any, argv: list, command: str, cwd, env: dict) -> Background:
    """Start ``argv`` in the background for ``agent``; its output to a file."""
    import subprocess  # here: a command that starts none does not import them
    import tempfile

    table = agent.state.setdefault(STATE, {}) if agent is not None else {}
    running = [b for b in table.values() if b.proc.poll() is None]
    if len(running) >= MAX_RUNNING:
        raise ToolError(f"terminal: {len(running)} background commands are running already; stop one with "
                        "process(action='kill') first")
    fd, log = tempfile.mkstemp(prefix="hermes-background-", suffix=".log")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=fd, stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                start_new_session=True)  # its input: what process(action='submit') types
        os.set_blocking(proc.stdin.fileno(), False)  # a command that does not read cannot make a write wait
    except OSError as exc:
        os.unlink(log)
        raise ToolError(f"terminal: cannot start the shell: {exc}") from None
    finally:
        os.close(fd)
    job = Background(id=f"bg{len(table) + 1}", command=command, proc=proc, log=log)
    table[job.id] = job
    with _lock:
        _live.add(job)
    return job


def run_in_background(agent, argv: list, command: str, cwd, env: dict, max_chars: int, sandbox) -> dict:
    """Start the command in the background; what it did in its first moment (a typo fails at once)."""
    job = start(agent, argv, command, cwd, env)
    deadline = time.monotonic() + 0.5
    while job.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    result = {**job.status(), "output": job.new_output(max_chars)}
    if sandbox:
        result["sandbox"] = sandbox
    result["note"] = ("started in the background: process(action='poll', process_id=...) reads its new output, "
                      "'wait' waits for it, 'kill' stops it; it is stopped when this conversation ends")
    return result


def listed(agent: Any) -> list:
    """The background commands of ``agent`` (chat's /agents), each its ``status()``."""
    return [job.status() for job in (getattr(agent, "state", None) or {}).get(STATE, {}).values()]


def stop_running(agent: Any) -> list:
    """Stop each background command of ``agent`` still running (chat's /stop); their output stays for the model to
    read. The ids of those stopped."""
    jobs = (getattr(agent, "state", None) or {}).get(STATE, {}).values()
    running = [job for job in jobs if job.proc.poll() is None]
    for job in running:
        job.stop()
    return [job.id for job in running]


def stop_all(agent: Any) -> None:
    """End every background command ``agent`` started (it is closing) and remove their output files."""
    for job in list((getattr(agent, "state", None) or {}).pop(STATE, {}).values()):
        _end(job)


@atexit.register
def _at_exit() -> None:
    for job in list(_live):
        _end(job)


def _end(job: Background) -> None:
    job.stop()
    try:
        os.unlink(job.log)
    except OSError:
        pass


def make_process(config=None) -> Tool:
    from plugins.core_tools.terminal import MAX_OUTPUT_CHARS, MAX_TIMEOUT
    from plugins.tool_args import setting

    max_chars = setting(config, "terminal.max_output_chars", MAX_OUTPUT_CHARS, int, 1000)
    max_wait = setting(config, "terminal.max_timeout", MAX_TIMEOUT, float, 1)

    def process(args, ctx):
        args = check_args(args, "process")
        action = arg(args, "action", str, tool="process", default="list").strip().lower()
        table = ctx.agent.state.get(STATE, {}) if ctx.agent is not None else {}
        if action == "list":
            return {"processes": [job.status() for job in table.values()]}
        if action not in ACTIONS:
            raise ToolError(f"process: unknown action {action!r}; use {', '.join(ACTIONS[:-1])} or {ACTIONS[-1]}")
        name = arg(args, "process_id", str, tool="process")
        job = table.get(name.strip())
        if job is None:
            raise ToolError(f"process: no background command {name!r} (there are: {', '.join(table) or 'none'})")
        if action == "log":
            offset = arg(args, "offset", int, tool="process", default=None)
            limit = arg(args, "limit", int, tool="process", default=200)
            if limit < 1 or (offset is not None and offset < 1):
                raise ToolError("process: 'offset' (the first line, from 1) and 'limit' must be positive")
            text, total = job.log_lines(offset, limit)
            return {**job.status(), "output": clip(text, max_chars), "total_lines": total}
        if action in ("write", "submit"):
            data = arg(args, "data", str, tool="process", default="") + ("\n" if action == "submit" else "")
            return {**job.status(), "input": job.send(data)}
        if action == "close":
            if job.proc.stdin is not None:
                job.proc.stdin.close()
            return {**job.status(), "input": "closed: it reads end of file"}
        if action == "kill":
            job.stop()
        elif action == "wait":
            timeout = min(arg(args, "timeout", float, tool="process", default=30.0), max_wait)
            deadline = time.monotonic() + max(timeout, 0)
            while job.proc.poll() is None and time.monotonic() < deadline and not is_interrupted(ctx.agent):
                time.sleep(0.05)
        return {**job.status(), "output": job.new_output(max_chars)}

    return Tool(
        name="process",
        description=("The commands terminal started with background=true: action 'list' (all, with their status), "
                     "'poll' (status and what it printed since you last looked), 'log' ('limit' lines of all it "
                     "printed from line 'offset', default its last 200), 'wait' (until it ends or 'timeout' "
                     "seconds, default 30), 'submit' ('data' and Enter typed into it, to answer a prompt), 'write' "
                     "('data' as it is), 'close' (end of its input), 'kill' (it and everything it started)."),
        parameters={"type": "object", "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "process_id": {"type": "string", "description": "The id terminal returned (bg1, ...)"},
            "data": {"type": "string", "description": "What 'submit' and 'write' type into it"},
            "offset": {"type": "integer", "description": "The first line 'log' reads (from 1)"},
            "limit": {"type": "integer", "description": "How many lines 'log' reads (default 200)"},
            "timeout": {"type": "number", "description": "Seconds 'wait' waits at most"}},
            "required": ["action"]},
        handler=process, toolset="terminal")
