"""A daemon thread a hermes-agent plugin starts while registering gets a moment at exit: hermes-dreaming's update
check (https, on such a thread) still inside OpenSSL when the process ended crashed it with SIGSEGV, after the
command's output, about one run in six."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.conftest import ROOT

PLUGIN = """
import sys, threading, time
from plugins.hermes_compat.loader import _call_register

def register(ctx):
    def late(seconds, path):
        time.sleep(seconds)
        open(path, "w").write("ended")
    threading.Thread(target=late, args=(0.2, sys.argv[1]), daemon=True).start()  # ends within the wait
    threading.Thread(target=late, args=(60, sys.argv[2]), daemon=True).start()  # never does: not waited for

_call_register(register, None)
"""


def test_a_plugins_daemon_thread_may_end_before_the_process_does_but_is_not_waited_for_long(tmp_path):
    quick, slow = tmp_path / "quick", tmp_path / "slow"
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", PLUGIN, str(quick), str(slow)], cwd=ROOT, capture_output=True,
                         text=True, timeout=30)
    took = time.monotonic() - started
    assert out.returncode == 0, out.stderr
    assert quick.read_text() == "ended"  # before: the process ended at once and took the thread with it
    assert not slow.exists() and took < 10
