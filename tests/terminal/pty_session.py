"""Drive a command in a pseudo-terminal (stdlib pty): what a person at a
terminal sees and types."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import time


class PtySession:
    def __init__(self, argv: list, env: dict, cwd=None):
        self.leader, follower = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, env=env, cwd=cwd,
                                     start_new_session=True)
        os.close(follower)
        self.seen = ""

    def expect(self, text: str, timeout: float = 20) -> str:
        """Read until ``text`` appears; everything read so far is in ``seen``."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"did not see {text!r}; the terminal shows:\n{self.seen}")
            ready, _, _ = select.select([self.leader], [], [], left)
            if ready:
                try:
                    data = os.read(self.leader, 65536)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError(f"the program ended before {text!r}; the terminal shows:\n{self.seen}")
                self.seen += data.decode(errors="replace")
        return self.seen

    def send(self, text: str) -> None:
        os.write(self.leader, text.encode())

    def ctrl_c(self) -> None:
        os.killpg(self.proc.pid, signal.SIGINT)  # what the terminal does on Ctrl+C: the foreground group

    def close(self, timeout: float = 20) -> int:
        """Wait for the program to end; what it printed last is added to ``seen``."""
        try:
            code = self.proc.wait(timeout=timeout)
            while select.select([self.leader], [], [], 0.2)[0]:
                try:
                    data = os.read(self.leader, 65536)
                except OSError:
                    break
                if not data:
                    break
                self.seen += data.decode(errors="replace")
            return code
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.leader)
