"""The ``terminal`` tool: a shell command in its own process group, with a
timeout that kills the whole group, output clipped head+tail."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from kernel.secrets import Secrets
from kernel.types import Tool, ToolError
from plugins.core_tools.environ import hide_from_proc
from plugins.core_tools.sandbox import Sandbox
from plugins.core_tools.shell import MAX_ENVIRONMENT, environment, source_init_files
from plugins.tool_args import (EXPORTED, WORKING_FOLDER, arg, check_args, clip, is_interrupted, remember_exports,
                               resolve_path, setting, tool_environment, with_exports, working_folder)

if TYPE_CHECKING:
    import subprocess


DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
MAX_OUTPUT_CHARS = 50_000

# Non-interactive environment: a pager or a credential prompt would otherwise
# wait for input that never comes until the timeout.
_QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "DEBIAN_FRONTEND": "noninteractive"}


def _group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process is left in the group.

    ``killpg(pgid, 0)`` also counts zombies waiting for init to reap them, which
    would make every kill wait out its grace period; on Linux /proc tells them apart.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed uid; it exists
        return True
    if not os.path.isdir("/proc/self"):
        return True
    return bool(live_group_members(pgid))


def live_group_members(pgid: int) -> list:
    """PIDs of the group's processes that are not zombies (Linux /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces, so split after its ')'
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            members.append(int(entry))
    return members


def kill_group(proc: subprocess.Popen, grace: float = 1.0) -> None:
    """SIGTERM the whole group, give it ``grace`` seconds, then SIGKILL."""
    import signal

    pgid = proc.pid  # start_new_session: the shell leads its own group
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        proc.poll()  # reap the shell so it does not keep the group alive as a zombie
        if not _group_alive(pgid):
            break
        time.sleep(0.02)
    else:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        dead_by = time.monotonic() + 1.0  # SIGKILL is not instant on a loaded machine: the caller is told "ended"
        while _group_alive(pgid) and time.monotonic() < dead_by:
            proc.poll()
            time.sleep(0.01)
    proc.wait()


def process_environment(agent, config) -> dict:
    """The environment of a process a tool starts: no keys (the model never reads one via ``env``, nor via
    ``/proc/$PPID/environ``), nothing that waits for input, and what the agent's commands exported before."""
    from hermes.host.config import is_secret_name  # a handler called without an agent: the host's rule alone

    secrets = getattr(agent, "secrets", None) or Secrets(
        config.key_envs() if config else filter(is_secret_name, os.environ))
    hide_from_proc(secrets.names)
    return with_exports(agent, tool_environment(secrets, _QUIET_ENV))


def wait_or_stop(proc: subprocess.Popen, deadline: float, agent, pause=None) -> "str | None":
    """Wait for ``proc`` until the ``time.monotonic()`` deadline; ``"timeout"`` or ``"interrupted"`` when its group
    was killed for that, None when it ended. ``pause(seconds)`` waits between the checks (default: for ``proc``)."""
    import subprocess

    stopped = None
    try:
        while proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                stopped = "timeout"
                break
            try:
                pause(min(0.1, left)) if pause else proc.wait(timeout=min(0.1, left))
            except subprocess.TimeoutExpired:
                pass
            if proc.poll() is None and is_interrupted(agent):
                stopped = "interrupted"
                break
    finally:  # an exception (an interrupt raised into this thread) kills it too
        if stopped or proc.returncode is None:
            kill_group(proc)
    return stopped


def read_output(fh, limit: int, start: int = 0) -> str:
    """Decode the captured output from byte ``start``; for huge output read only the head and the tail."""
    size = fh.seek(0, os.SEEK_END) - start
    fh.seek(start)
    if size <= limit * 4:  # at most 4 bytes a character: the whole text is small enough
        return clip(fh.read(size).decode("utf-8", errors="replace"), limit)
    head_n = int(limit * 0.4)
    tail_n = limit - head_n
    head = fh.read(head_n).decode("utf-8", errors="replace")[:head_n]
    fh.seek(start + size - tail_n)
    tail = fh.read(tail_n).decode("utf-8", errors="replace")[-tail_n:]
    return f"{head}\n\n[... about {size - head_n - tail_n} bytes omitted ...]\n\n{tail}"


def make_terminal(config=None) -> Tool:
    default_timeout = setting(config, "terminal.timeout", DEFAULT_TIMEOUT, float, 1)
    max_timeout = setting(config, "terminal.max_timeout", MAX_TIMEOUT, float, 1)
    max_chars = setting(config, "terminal.max_output_chars", MAX_OUTPUT_CHARS, int, 1000)
    shell = None  # found on the first command

    def terminal(args, ctx):
        import subprocess  # here: a command that never runs the terminal tool does not import what it needs
        import tempfile

        nonlocal shell
        args = check_args(args, "terminal")
        command = arg(args, "command", str, tool="terminal")
        if not command.strip():
            raise ToolError("terminal: 'command' is empty")
        if "\x00" in command:
            raise ToolError("terminal: 'command' contains a NUL character")
        timeout = arg(args, "timeout", float, tool="terminal", default=default_timeout)
        if timeout <= 0:
            raise ToolError("terminal: 'timeout' must be a positive number of seconds")
        notes = []
        if timeout > max_timeout:
            notes.append(f"timeout capped at {max_timeout:g} s")
            timeout = max_timeout
        workdir = arg(args, "workdir", str, tool="terminal", default=None)
        agent = getattr(ctx, "agent", None)
        here = cwd = working_folder(agent, config)
        box = Sandbox.from_config(config)
        if workdir:
            path = resolve_path(workdir, "terminal", here)
            if not path.is_dir():
                raise ToolError(f"terminal: workdir {workdir!r} is not an existing directory")
            cwd = str(path)
        env = process_environment(agent, config)
        # Output goes to an unnamed temp file, not a pipe: a background job
        # (``server &``) that keeps the pipe open cannot make us wait, and a
        # flood of output costs disk, not memory.
        if shell is None:
            import shutil

            shell = shutil.which("bash") or "/bin/sh"
        if isinstance(getattr(agent, "state", None), dict) and EXPORTED not in agent.state:  # a session's first
            source_init_files(agent, config, lambda script: box.wrap([shell, "-c", script], cwd)[0], env)
            env = with_exports(agent, env)
        if arg(args, "background", bool, tool="terminal", default=False):
            from plugins.core_tools.processes import run_in_background

            argv, sandboxed = box.wrap([shell, "-c", command], cwd)
            return run_in_background(agent, argv, command, cwd, env, max_chars, box.mode if sandboxed else None)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as ended:
            # The shell writes the folder it ends in and its exported variables to a file of its own (not the
            # output): the next command starts with them, so `cd` and `export` carry over as in a shell. On the
            # command's first line, so that its line numbers stay its own.
            fd = ended.fileno()
            argv, sandboxed = box.wrap([shell, "-c", f"trap '{{ set +x; }} 2>/dev/null; printf \"%s\\0\" \"$(pwd -P)\" "
                                                     f">&{fd}; env -0 >&{fd} 2>/dev/null' EXIT; {command}"], cwd)
            started = time.monotonic()
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                    pass_fds=(fd,),
                )
            except OSError as exc:
                raise ToolError(f"terminal: cannot start the shell: {exc}") from None
            stopped = wait_or_stop(proc, started + timeout, agent)
            output = read_output(out, max_chars)
            ended.seek(0)
            folder, _, exported = (ended.read(MAX_ENVIRONMENT + 1) if not stopped else b"").partition(b"\0")
        moved = os.fsdecode(folder)
        if 0 < len(exported) <= MAX_ENVIRONMENT:  # no `env` on this machine, or an environment too large: unchanged
            remember_exports(agent, env, environment(exported))

        hook = getattr(agent, "hook", None)
        if hook is not None and hook.transform_terminal_output.get_hookimpls():
            for replaced in hook.transform_terminal_output(
                command=command, output=output, returncode=proc.returncode,
                task_id=getattr(ctx, "task_id", ""), env_type="local", agent=agent,
            ):
                if isinstance(replaced, str):
                    output = replaced
                    break
        result = {"exit_code": proc.returncode, "output": output}
        state = getattr(agent, "state", None)
        if moved and not workdir and moved != here and os.path.isdir(moved) and isinstance(state, dict):
            state[WORKING_FOLDER] = result["workdir"] = moved  # the model reads where its next command runs
        if sandboxed:  # the model learns why a write outside the working folder failed
            result["sandbox"] = box.mode
        if stopped == "timeout":
            result["timed_out"] = True
            notes.append(
                f"command timed out after {timeout:g} s; its whole process group was killed. "
                f"For long jobs raise 'timeout' (max {max_timeout:g} s)"
                + ("" if sandboxed else " or run them in the background with output to a file (nohup CMD > log 2>&1 &)")
            )
        elif stopped == "interrupted":
            result["interrupted"] = True
            notes.append("interrupted before it finished (Ctrl+C, or hermes was told to stop); the command's process group "
                         "was killed")
        if notes:
            result["note"] = "; ".join(notes)
        return result

    return Tool(
        name="terminal",
        description=(
            "Run a shell command (bash) on this machine and return its combined stdout+stderr and exit code. "
            "No input can be typed: use non-interactive flags (-y, --no-pager). "
            f"'timeout' in seconds (default {default_timeout:g}, max {max_timeout:g}); on timeout the command "
            "and everything it started are killed. A command starts in the folder the last one ended in (a cd "
            "carries over, and relative paths of the file tools follow it), with the variables earlier ones exported "
            "(export, source .venv/bin/activate); 'workdir' sets another folder for one command. "
            f"Output over {max_chars} characters keeps its beginning and end. "
            "Where the machine offers a sandbox (result field 'sandbox'), only the working folder and a private "
            "/tmp are writable and a job put in the background with & ends with the command: use background=true "
            "for one that must keep running. "
            "Prefer read_file/search_files/patch for reading and editing files."
        ),
        parameters={
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The shell command to run."},
                "timeout": {"type": "number", "description": f"Seconds before the command is killed (max {max_timeout:g})."},
                "workdir": {"type": "string", "description": "Directory to run this command in (default: where the last one ended)."},
                "background": {"type": "boolean", "description": "Start it and return at once (a server, a watcher); "
                                                                "the process tool reads its output and stops it."},
            },
            "required": ["command"],
        },
        handler=terminal,
        toolset="terminal",
        parallel_safe=False,
    )
