"""What the program does with the process's output and its end: stdout kept for one machine-readable document under
``--json``, and an exit that plugin code cannot hold up."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Callable

def exit_within(grace: float, code: int, warn: Callable[[str], None]) -> None:
    """Make the process end within ``grace`` seconds of now, with ``code``. Python's exit waits for every non-daemon
    thread and every ``atexit`` handler, for ever if plugin code left one that never ends (the kernel leaves none
    running): past the grace, the threads still running are named through ``warn`` and the process ends without them."""

    def expire():
        time.sleep(grace)
        left = sorted(t.name for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon)
        warn(f"exiting without waiting for {len(left)} thread(s) that plugin code left running: {', '.join(left)}"
             if left else "exiting without waiting for plugin code still running at exit (an atexit handler)")
        hard_exit(code)

    threading.Thread(target=expire, name="hermes-exit-deadline", daemon=True).start()


def hard_exit(code: int) -> None:
    """End the process now, without the interpreter's teardown (which waits
    for threads and ``atexit`` handlers), what was printed flushed."""
    _flush(sys.stdout, sys.stderr)
    os._exit(code)


def _flush(*streams) -> None:
    for stream in streams:
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, by plugin code or a reader that left
            pass


# ---------------------------------------------------------------- machine output

_document: list = []  # the real stdout while it is reserved


def document_stream():
    """Where a machine-readable document goes: the real stdout."""
    return _document[-1] if _document else sys.stdout


class reserved_stdout:
    """While this holds, descriptor 1 is stderr and the real stdout a descriptor no child inherits,
    so a child of plugin code (a helper left running) cannot hold a reader of the pipe
    (``$(hermes run ...)``) past hermes' end. ``sys.stdout`` writes to the real stdout; under
    ``--json`` (``document``) only :func:`document_stream` does, and all else printed goes to stderr."""

    def __init__(self, document: bool = True):
        self.document = document

    def __enter__(self):
        self._saved, self._swapped = None, sys.stdout
        try:
            fd = sys.stdout.fileno()
        except (AttributeError, OSError, ValueError):
            fd = -1
        sys.stdout.flush()
        stream = sys.stdout
        if fd == 1:
            self._saved = os.dup(1)
            os.dup2(2, 1)
            stream = open(self._saved, "w", encoding="utf-8" if self.document else sys.stdout.encoding,
                          errors=sys.stdout.errors, closefd=False)
            sys.stdout = sys.stdout if self.document else stream
        elif self.document:  # not a real descriptor (embedded, captured): swap the objects only
            sys.stdout = sys.stderr
        _document.append(stream)
        return stream

    def __exit__(self, *exc):
        _flush(_document.pop(), sys.stdout)
        sys.stdout = self._swapped
        if self._saved is not None:
            os.dup2(self._saved, 1)
            os.close(self._saved)
        return False
