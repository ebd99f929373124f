"""``HERMES_TRACE_HOOKS``: a line per hook call with its duration (which plugin makes it slow?)."""

from __future__ import annotations

import logging
import sys
import threading
import time

log = logging.getLogger("hermes.plugins")


def tracer(target: str):
    """``1`` traces to stderr, another value names a file to append to. On a terminal a model call's
    lines wait until it ended, so they never land inside a streamed answer line."""
    out, terminal = sys.stderr, sys.stderr.isatty() and sys.stdout.isatty()
    if target != "1":
        try:
            out, terminal = open(target, "a", encoding="utf-8", buffering=1), False  # noqa: SIM115 - lives as long as the process
        except OSError as exc:
            log.warning("HERMES_TRACE_HOOKS: cannot write %s (%s); tracing to stderr", target, exc.strerror or exc)
    lock, local = threading.Lock(), threading.local()  # hooks fire from tool threads too: a stack per thread
    held: list = []  # lines of the running model call (terminal only)
    state = {"calling": False, "streamed": False}

    def write(line: str) -> None:
        with lock:
            if terminal and state["calling"]:
                held.append(line)
                return
            out.write(line)
            out.flush()

    def before(hook_name, impls, kwargs):
        local.__dict__.setdefault("starts", []).append(time.perf_counter())
        if hook_name == "on_thinking" and kwargs.get("active"):
            state.update(calling=True, streamed=False)
        elif hook_name == "on_stream_delta":
            state["streamed"] = True

    def after(outcome, hook_name, impls, kwargs):
        starts = local.__dict__.get("starts") or []
        took = (time.perf_counter() - starts.pop()) * 1000 if starts else 0.0
        write(f"hermes-trace: hook {hook_name}: {len(impls)} impl(s), {took:.3f} ms\n")
        if hook_name == "on_thinking" and not kwargs.get("active"):
            with lock:
                lines, held[:] = list(held), []
                state["calling"] = False
                if lines:
                    out.write(("\n" if state["streamed"] else "") + "".join(lines))  # below the answer's line
                    out.flush()

    return before, after
