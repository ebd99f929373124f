"""Drive ``hermes chat`` in a pseudo-terminal with pexpect: what a person at a
terminal sees and types (Enter is ``\\r``; Ctrl+C is the terminal's interrupt
character, so it reaches the program as the keyboard sends it)."""

from __future__ import annotations

import json
import os

import pexpect
import pytest

from tests.conftest import ROOT, hermes_command


class Terminal:
    def __init__(self, argv: list, env: dict, cwd):
        self.child = pexpect.spawn(argv[0], argv[1:], env=env, cwd=str(cwd), encoding="utf-8",
                                   timeout=20, dimensions=(40, 140))
        self.seen = ""  # everything shown so far

    def expect(self, text: str, timeout: float = 20) -> str:
        """Wait until ``text`` is shown; returns ``seen``."""
        try:
            self.child.expect_exact(text, timeout=timeout)
        except (pexpect.TIMEOUT, pexpect.EOF) as exc:
            self.seen += self.child.before if isinstance(self.child.before, str) else ""
            raise AssertionError(f"did not see {text!r} ({type(exc).__name__}); the terminal shows:\n{self.seen}") \
                from None
        self.seen += self.child.before + self.child.after
        return self.seen

    def line(self, text: str) -> None:
        """Type ``text`` and press Enter."""
        self.child.send(text + "\r")

    def keys(self, raw: str) -> None:
        self.child.send(raw)

    def ctrl_c(self) -> None:
        self.child.sendintr()

    def close(self, timeout: float = 20) -> int:
        """Wait for the program to end; its exit status."""
        try:
            self.child.expect(pexpect.EOF, timeout=timeout)
            self.seen += self.child.before
        finally:
            self.child.close(force=True)
        return self.child.exitstatus if self.child.exitstatus is not None else -(self.child.signalstatus or 0)


@pytest.fixture
def terminal(tmp_path, hermes_home):
    """``terminal(steps, *args, env={}, command=("chat",))``: ``hermes chat`` with a scripted model in a
    pseudo-terminal; returns ``(Terminal, HERMES_HOME)``."""
    opened = []

    def start(steps: list, *args: str, env: dict = None, name: str = "script.json", command: tuple = ("chat",)):
        home = hermes_home
        script = tmp_path / name
        script.write_text(json.dumps(steps))
        full_env = {**os.environ, "HERMES_HOME": str(home), "TERM": "xterm-256color",
                    "PROMPT_TOOLKIT_NO_CPR": "1",  # pexpect does not answer cursor-position queries
                    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
        full_env.pop("NO_COLOR", None)
        full_env.update(env or {})
        argv = [*hermes_command(), *command, "--api-mode", "scripted", "--base-url", str(script), *args]
        term = Terminal(argv, full_env, tmp_path)
        opened.append(term)
        return term, home

    yield start
    for term in opened:
        if term.child.isalive():
            term.child.close(force=True)


FIRST_IMPORTS = """
import builtins, os, threading

watched, seen, importing = set(os.environ["HERMES_TEST_WATCH"].split(",")), set(), builtins.__import__


def noting(name, globals=None, locals=None, fromlist=(), level=0):  # an import statement, not a mere find_spec
    top = name.partition(".")[0]
    if level == 0 and top in watched and top not in seen:
        seen.add(top)
        thread = "main" if threading.current_thread() is threading.main_thread() else "other"
        with open(os.environ["HERMES_TEST_WATCH_FILE"], "a") as out:
            out.write(f"{os.getpid()} {top} {thread}\\n")
    return importing(name, globals, locals, fromlist, level)


builtins.__import__ = noting
"""


@pytest.fixture
def first_imports(tmp_path):
    """``first_imports(*packages)`` -> ``(env, seen)``: a process started with ``env`` (a ``sitecustomize`` on its
    path) notes the first time it asks for each of ``packages``; ``seen(pid)`` lists them in that order, each as
    ``(package, "main" or "other")``, the thread that asked."""
    site, notes = tmp_path / "watch-site", tmp_path / "first-imports.txt"
    site.mkdir()
    (site / "sitecustomize.py").write_text(FIRST_IMPORTS)

    def watch(*packages: str):
        env = {"HERMES_TEST_WATCH": ",".join(packages), "HERMES_TEST_WATCH_FILE": str(notes),
               "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}

        def seen(pid: int) -> list:  # the servers a chat starts inherit the environment: only its own lines
            lines = [line.split() for line in notes.read_text().splitlines()] if notes.exists() else []
            return [(package, thread) for who, package, thread in lines if who == str(pid)]

        return env, seen

    return watch
