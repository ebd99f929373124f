"""A new user's first hour, step by step, from a fresh clone in a new venv.

Follows README.md and CONTRIBUTING.md literally (their commands and code blocks
are read from the pages, not copied here): the install-and-run line, the real-model
line (against the wire-protocol test server started by hand, through the SDK's own
OPENAI_BASE_URL), plugins list and chat, the five-minute plugin installed with pip
and run as printed, and docs/plugins.md's plugin with its own test suite.

    python3 scripts/walkthrough.py [--keep]

Prints a line per step; stops at the first that fails, saying what it ran and
what came out. Needs git and the package index (pip builds and installs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class StepFailed(Exception):
    pass


def block(page: str, first_line: str) -> str:
    for match in re.finditer(r"```(?:python|toml|sh)\n(.*?)```", page, re.S):
        if match.group(1).startswith(first_line):
            return match.group(1)
    raise StepFailed(f"no code block starting with {first_line!r}")


class Walk:
    def __init__(self, work: Path):
        self.work, self.clone, self.n = work, work / "hermes", 0
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "HERMES_HOME", "PYTHONPATH", "VIRTUAL_ENV")}
        self.env["HERMES_HOME"] = str(work / "home")  # a new user's own folder, not the developer's

    def step(self, what: str):
        self.n += 1
        print(f"walkthrough: step {self.n}: {what}", flush=True)

    def sh(self, command: str, cwd: Path = None, env: dict = None, expect: str = None, timeout: float = 600) -> str:
        """Run a shell line in the venv, as a user types it; its stdout (stderr on failure)."""
        full = {**self.env, **(env or {})}
        full["PATH"] = f"{self.work / 'venv' / 'bin'}{os.pathsep}{full.get('PATH', '')}"
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=cwd or self.clone, env=full,
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0 or (expect is not None and expect not in done.stdout):
            raise StepFailed(f"$ {command}\nexit {done.returncode}\n--- stdout\n{done.stdout[-3000:]}"
                             f"\n--- stderr\n{done.stderr[-3000:]}")
        return done.stdout

    def run(self) -> None:
        self.step("a fresh clone (of the last commit) and a new venv")
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(self.clone)], check=True, timeout=120)
        subprocess.run([sys.executable, "-m", "venv", str(self.work / "venv")], check=True, timeout=120)
        readme, contributing, guide = ((self.clone / page).read_text(encoding="utf-8")
                                       for page in ("README.md", "CONTRIBUTING.md", "docs/plugins.md"))

        line = block(readme, "python -m pip install .").strip()
        self.step(f"README, install and run: {line}")
        out = self.sh(line)
        expected = json.loads((self.clone / "examples" / "hello-script.json").read_text())
        answer = expected[-1] if isinstance(expected[-1], str) else expected[-1].get("content", "")
        if answer.strip() not in out:
            raise StepFailed(f"expected the scripted answer {answer!r}, got {out!r}")

        self.step("README: hermes --help, hermes plugins list")
        self.sh("hermes --help", expect="chat")
        self.sh("hermes plugins list", expect="terminal-ui")

        with WireServer(self) as server:
            real = re.search(r"`(hermes run -m gpt-4\.1 \"\.\.\.\")`", readme)
            if not real:
                raise StepFailed("README.md no longer shows `hermes run -m gpt-4.1 \"...\"`")
            self.step(f"README, a real model: {real.group(1)} (OPENAI_BASE_URL at the wire server)")
            server.script_answer("hello from the model")
            self.sh('hermes run -m gpt-4.1 "say hello"', env=server.env, expect="hello from the model")

            self.step("README: hermes chat, one prompt, then /exit")
            server.script_answer("hello in the chat")
            self.sh("printf 'hi there\\n/usage\\n/exit\\n' | hermes chat -m gpt-4.1", env=server.env,
                    expect="hello in the chat")

            self.step("CONTRIBUTING, a plugin in five minutes: pip install . and hermes plugins list")
            package = self.work / "charcount"
            (package / "hermes_charcount").mkdir(parents=True)
            (package / "hermes_charcount" / "__init__.py").write_text(block(contributing, "# hermes_charcount/__init__.py"))
            (package / "pyproject.toml").write_text(block(contributing, "# pyproject.toml"))
            self.sh("python -m pip install --quiet .", cwd=package)
            self.sh("hermes plugins list", expect="Counts characters.")
            printed = re.search(r"`OPENAI_API_KEY=sk-\.\.\. (hermes run [^`]+)`", contributing)
            if not printed:
                raise StepFailed("CONTRIBUTING.md no longer shows its run line")
            self.step(f"CONTRIBUTING, as printed: {printed.group(1)}")
            server.script_tool("char_count", {"text": "hello"}, "It has 5 characters.")
            self.sh(printed.group(1), env=server.env, expect="It has 5 characters.")

        self.step("docs/plugins.md: the second plugin, installed, and its own tests under pytest")
        package = self.work / "notes"
        (package / "hermes_notes").mkdir(parents=True)
        (package / "tests").mkdir()
        (package / "hermes_notes" / "__init__.py").write_text(block(guide, "# hermes_notes/__init__.py"))
        (package / "pyproject.toml").write_text(block(guide, "# pyproject.toml"))
        (package / "tests" / "test_notes.py").write_text(block(guide, "# tests/test_notes.py"))
        self.sh("python -m pip install --quiet -e . pytest", cwd=package)
        out = self.sh("pytest -q -p no:cacheprovider", cwd=package)
        if not re.search(r"\b4 passed\b", out):
            raise StepFailed(f"expected 4 passed, got:\n{out[-2000:]}")


class WireServer:
    """``python -m plugins_providers.testserver`` from the venv, as docs/plugins.md says to start it."""

    def __init__(self, walk: Walk):
        self.walk, self.proc, self.url = walk, None, ""

    def __enter__(self) -> "WireServer":
        self.steps = self.walk.work / "steps.json"
        self.steps.write_text("[]")
        return self

    def _start(self, steps: list) -> None:
        self.__exit__()
        self.steps.write_text(json.dumps(steps))
        python = self.walk.work / "venv" / "bin" / "python"
        self.proc = subprocess.Popen([str(python), "-m", "plugins_providers.testserver", "--script", str(self.steps)],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=self.walk.work)
        banner = self.proc.stdout.readline()
        found = re.search(r"OpenAI SDK base URL (\S+)\)", banner)
        if not found:
            raise StepFailed(f"the wire server did not start: {banner!r}")
        self.url = found.group(1)

    def script_answer(self, text: str) -> None:
        self._start([text])

    def script_tool(self, name: str, args: dict, then: str) -> None:
        self._start([{"tool_calls": [[name, args]]}, then])

    @property
    def env(self) -> dict:
        return {"OPENAI_API_KEY": "sk-walkthrough", "OPENAI_BASE_URL": self.url}

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc.stdout.close()
            self.proc = None


def main() -> int:
    keep = "--keep" in sys.argv[1:]
    work = Path(tempfile.mkdtemp(prefix="hermes-walkthrough-"))
    started = time.monotonic()
    walk = Walk(work)
    try:
        walk.run()
    except StepFailed as exc:
        print(f"walkthrough: step {walk.n} failed:\n{exc}", file=sys.stderr)
        return 1
    finally:
        if keep:
            print(f"walkthrough: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"walkthrough: all {walk.n} steps passed in {time.monotonic() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
