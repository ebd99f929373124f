"""Several processes on one state.db: a writer killed with SIGKILL mid-append,
two writers at once, a writer waiting out another's lock."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kernel import messages as schema
from plugins.sessions.store import SessionStore

CHILD = str(Path(__file__).with_name("writer_child.py"))

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")


def _check_history(history: list) -> int:
    """The history is whole: the user message, then complete steps in order.
    Returns the number of steps."""
    assert history[0] == {"role": "user", "content": "go on forever"}
    body = history[1:]
    assert len(body) % 2 == 0, "a step was stored half"
    for i in range(len(body) // 2):
        call, result = body[2 * i], body[2 * i + 1]
        assert call["role"] == "assistant" and call["tool_calls"][0]["id"] == f"call_{i}"
        assert result == {"role": "tool", "tool_call_id": f"call_{i}", "content": f"result {i} " + "z" * 20_000}
    # Valid for the kernel, whose repair (run on every resumed history) has nothing to fix.
    assert schema.problems(history) == []
    assert schema.repair(history) == history
    return len(body) // 2


def _run_until_killed(env, session: str, min_steps: int) -> int:
    """Start a looping writer, let it append ``min_steps`` more steps, SIGKILL
    it at a random moment (almost always inside an append), return the last
    step it reported as written."""
    proc = subprocess.Popen([sys.executable, CHILD, "loop", session], env=env, stdout=subprocess.PIPE, text=True)
    try:
        last = None
        for _ in range(min_steps):
            line = proc.stdout.readline()
            assert line, "the writer died early"
            last = int(line)
        time.sleep(random.uniform(0, 0.004))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        for line in proc.stdout.read().split():  # what it reported before dying
            last = int(line)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return last


def test_killed_writer_loses_at_most_the_step_in_flight(home, child_env):
    steps_seen = 0
    for round_ in range(3):  # kill, resume in a new process, kill again
        last = _run_until_killed(child_env, "victim", min_steps=4)
        s = SessionStore.for_data_dir(home)
        history = s.load("victim")
        steps = _check_history(history)
        # Everything reported as written is there; at most the step in flight (and
        # a committed one whose print was cut off) beyond it.
        assert last + 1 <= steps <= last + 2, (round_, last, steps)
        assert steps > steps_seen
        steps_seen = steps
        assert s.check() == []
        assert s.get_session("victim")["message_count"] == len(history)
        s.close()
    # The session keeps working after the crashes.
    s = SessionStore.for_data_dir(home)
    s.append("victim", [{"role": "user", "content": "still here?"}])
    assert s.load("victim")[-1] == {"role": "user", "content": "still here?"}
    s.close()


def test_two_writer_processes_at_once(home, child_env):
    n = 120
    procs = [
        subprocess.Popen([sys.executable, CHILD, "many", name, str(n)], env=child_env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("left", "right")
    ]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        assert not (home / "state.db").exists()  # they race the creation and migration too
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == f"done {1 + 2 * n}"
    s = SessionStore.for_data_dir(home)
    for name in ("left", "right"):
        history = s.load(name)
        assert history[0] == {"role": "user", "content": f"writer {name}"}
        assert [m["tool_call_id"] for m in history[2::2]] == [f"call_{i}" for i in range(n)]
    assert s.check() == []
    s.close()


def test_a_writer_waits_out_another_writers_lock(home):
    s = SessionStore.for_data_dir(home)
    s.append("a", [{"role": "user", "content": "first"}])
    other = sqlite3.connect(home / "state.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    released = threading.Event()

    def release():
        time.sleep(0.3)
        other.execute("COMMIT")
        released.set()

    threading.Thread(target=release).start()
    t0 = time.monotonic()
    s.append("a", [{"role": "user", "content": "second"}])
    waited = time.monotonic() - t0
    assert released.is_set() and waited >= 0.25
    assert [m["content"] for m in s.load("a")] == ["first", "second"]
    other.close()
    s.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_opens_its_own_connection(home):
    s = SessionStore.for_data_dir(home)
    s.append("parent", [{"role": "user", "content": "before the fork"}])
    pid = os.fork()
    if pid == 0:  # the child: must not touch the parent's connection
        code = 1
        try:
            s.append("child", [{"role": "user", "content": "from the child"}])
            s.close()
            code = 0 if s.load("parent") == [{"role": "user", "content": "before the fork"}] else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    s.append("parent", [{"role": "user", "content": "after the fork"}])
    assert [m["content"] for m in s.load("parent")] == ["before the fork", "after the fork"]
    assert s.load("child") == [{"role": "user", "content": "from the child"}]
    assert s.check() == []
    s.close()
