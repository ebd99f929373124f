"""hermes-agent's user scripts: files in the data folder's ``scripts/`` that a webhook route runs (its event in, the
event to use out) and a cron job runs (data for its prompt, or the whole job). ``.sh``/``.bash`` run with bash, the
rest with Python, in a tool's environment (the config's keys left out) and within a time limit; a path that leads
out of ``scripts/`` is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Optional


def environment(config: Any) -> dict:
    """A script's environment: a tool's, without the keys ``config`` names or the environment's secret-looking ones."""
    from kernel.secrets import Secrets
    from plugins.tool_args import tool_environment

    return tool_environment(Secrets(config.key_envs(), passthrough=config.get("tools.env_passthrough") or []))


def located(script: str, home: Any) -> "Optional[Path]":
    """The file ``scripts/SCRIPT`` of the data folder ``home`` (hermes-agent's ``~/.hermes/scripts/`` prefix taken
    off), or None when it is no file there or the name leads out of ``scripts/``."""
    folder = (Path(home) / "scripts").resolve()
    path = (folder / str(script).strip().replace("~/.hermes/scripts/", "", 1)).resolve()
    return path if path.is_relative_to(folder) and path.is_file() else None


def run(script: str, home: Any, environ: dict, seconds: float, stdin: str = "",
        cwd: Optional[str] = None) -> "tuple[Optional[subprocess.CompletedProcess], str]":
    """Run ``scripts/SCRIPT`` of the data folder ``home``: ``(its completed process, "")``, or ``(None, why not)``
    (no such file there, no start, past ``seconds``). It starts in ``cwd``, else in ``scripts/``."""
    folder, path = (Path(home) / "scripts").resolve(), located(script, home)
    if path is None:
        return None, f"its script {script} is no file in {folder}"
    command = ["bash", str(path)] if path.suffix in (".sh", ".bash") else [sys.executable, str(path)]
    try:
        return subprocess.run(command, input=stdin, capture_output=True, text=True, cwd=cwd or folder,
                              timeout=seconds, env=environ), ""
    except subprocess.TimeoutExpired:
        return None, f"its script {path.name} took over {seconds:g} s"
    except OSError as exc:
        return None, f"its script {path.name} did not start ({exc.strerror})"
