"""A skill's instructions as the model reads them, with hermes-agent's two preprocessing steps (skills written for it
use them): ``${HERMES_SKILL_DIR}`` and ``${HERMES_SESSION_ID}`` filled in (``skills.template_vars``, on), and with
``skills.inline_shell`` (off) each ``!`command``` replaced by what it prints. Inline commands run only for the skills
of the user's own folders: a project's skills come with a repository someone else may have written."""

from __future__ import annotations

import re
import subprocess
from typing import Any

TEMPLATE = re.compile(r"\$\{(HERMES_SKILL_DIR|HERMES_SESSION_ID)\}")  # one left unknown stays, for its author to see
INLINE = re.compile(r"!`([^`\n]+)`")
MAX_OUTPUT = 4000  # characters of one inline command's output
UNTRUSTED = ("project",)  # skill sources whose inline commands never run


def prepared(skill: Any, agent: Any) -> str:
    body = skill.body()
    config = agent.config
    if config.get("skills.template_vars", True) and "${HERMES_" in body:
        values = {"HERMES_SKILL_DIR": str(skill.folder), "HERMES_SESSION_ID": getattr(agent, "session_id", "") or ""}
        body = TEMPLATE.sub(lambda m: values[m.group(1)] or m.group(0), body)
    if config.get("skills.inline_shell", False) and "!`" in body and skill.source not in UNTRUSTED:
        seconds = config.get("skills.inline_shell_timeout", 10)
        body = INLINE.sub(lambda m: _output(m.group(1).strip(), skill.folder, seconds, agent), body)
    return body


def _output(command: str, folder: Any, seconds: float, agent: Any) -> str:
    """What one inline command prints (run in the skill's folder, without the keys in its environment, masked), or a
    marker saying why not: one bad snippet never costs the skill."""
    from plugins.tool_args import tool_environment

    try:
        done = subprocess.run(["bash", "-c", command], cwd=str(folder), capture_output=True, text=True,
                              timeout=seconds, stdin=subprocess.DEVNULL, env=tool_environment(agent.secrets),
                              errors="replace")
    except subprocess.TimeoutExpired:
        return f"[inline command stopped after {seconds:g}s: {command}]"
    except OSError as exc:
        return f"[inline command failed: {exc.strerror or exc}]"
    said = (done.stdout or done.stderr or "").rstrip("\n")
    said = said if len(said) <= MAX_OUTPUT else said[:MAX_OUTPUT] + "...[cut]"
    return agent.secrets.mask(said)
