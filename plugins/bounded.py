"""Programs run beside the agent's work (git for the coding layer, tirith for the approval check), side by side and
within one deadline: one that hangs is killed with what it started, which would otherwise hold its output open."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import time
from typing import Optional


def find_program(name: str) -> Optional[str]:
    """The program ``name`` (a name on PATH, or a path, ``~`` allowed), or None; searched once while PATH stays the
    same."""
    return _found(os.path.expanduser(name), os.environ.get("PATH", os.defpath))


@functools.lru_cache(maxsize=16)
def _found(name: str, path: str) -> Optional[str]:
    import shutil

    return shutil.which(name, path=path)


def run_within(commands: list, timeout: float, env: Optional[dict] = None) -> list:
    """``(exit status, stdout, stderr)`` of each argv of ``commands``, started together; ``None`` for one that could
    not start or had not ended ``timeout`` seconds after the start."""
    running = []
    for argv in commands:
        try:
            running.append(subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True, errors="replace",
                                            start_new_session=True))  # a group of its own: stopped whole
        except OSError:
            running.append(None)
    deadline, done = time.monotonic() + timeout, []
    for proc in running:
        if proc is None:
            done.append(None)
            continue
        try:
            out, err = proc.communicate(timeout=max(deadline - time.monotonic(), 0.01))
            done.append((proc.returncode, out, err))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            done.append(None)
    return done
