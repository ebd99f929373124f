"""Runs a stdio MCP server so that nothing it starts outlives it or hermes.

``python -I -S guard.py PARENT_PID COMMAND ARGS...``: started by hermes
(through the SDK) as the leader of a process group of its own, it starts the
server in that group with the pipes it was given, and waits. When the server
exits, whatever it left in the group is ended; when hermes is gone (killed, or
ended without its clean-up), the whole group is. Ending a group is SIGTERM,
then SIGKILL for what is left a second later. Standard library only: it starts
in a few milliseconds.
"""

import os
import signal
import subprocess
import sys
import time

GRACE = 1.0  # seconds between SIGTERM and SIGKILL
POLL = 0.2


def others(group: int) -> bool:
    """Is any process but this one in ``group``? (Without /proc, as on macOS: assume so.)"""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == group and fields[0] != b"Z":
                return True
    return False


def end_group(group: int) -> None:
    os.killpg(group, signal.SIGTERM)  # this process ignores it
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        if not others(group):
            return
        time.sleep(0.05)
    os.killpg(group, signal.SIGKILL)  # this process too


def main(argv: list) -> int:
    parent, command = int(argv[1]), argv[2:]
    try:
        child = subprocess.Popen(command)  # the pipes are inherited: the SDK's, and the log
    except OSError as exc:
        print(f"hermes: cannot start MCP server {command[0]!r}: {exc}", file=sys.stderr)
        return 127
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # after the start (an ignored signal is inherited): the
    # group's SIGTERM is for the server; this one waits for it
    for fd in (0, 1):  # the server holds the pipes: when it exits, hermes sees them close
        os.close(fd)
    group = os.getpgrp()
    while True:
        try:
            code = child.wait(timeout=POLL)
        except subprocess.TimeoutExpired:
            if os.getppid() != parent:  # hermes is gone
                end_group(group)
            continue
        if others(group):  # what the server started and left
            end_group(group)
        return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
