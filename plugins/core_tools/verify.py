"""hermes-agent's file-change check (``display.file_mutation_verifier``): a ``write_file`` or ``patch`` that failed
in a turn, with no later one of the same file that worked, is named under the turn's answer. A model that runs
several patches, half of which do not apply, tends to sum up as if all had: the user reads here what did not happen.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from plugins.core_tools import CHANGE_CHECK, CHANGING, FAILED_CHANGES as STATE

SHOWN = 10  # files named; the rest counted


def note(call: Any, outcome: Any, agent: Any) -> None:
    """After a file tool's call: a failure is kept (its first reason), a success forgets the file's failures."""
    path = call.args.get("path") if call.name in CHANGING else None
    if not isinstance(path, str) or not path:
        return
    turn, failed = agent.state.get(STATE, ("", {}))
    failed = failed if turn == call.turn_id else {}
    if outcome.status == "ok":
        failed.pop(path, None)
    elif outcome.status != "interrupted":
        why = (outcome.error_message or outcome.result or outcome.status).strip().splitlines()
        failed.setdefault(path, (call.name, why[0][:200] if why else outcome.status))
    agent.state[STATE] = (call.turn_id, failed)


def footer(answer: str, agent: Any) -> Optional[str]:
    """The answer with the turn's files that did not change under it, or None when every change went through."""
    turn, failed = agent.state.pop(STATE, ("", {}))
    current = getattr(getattr(agent, "turn", None), "turn_id", None)
    if not failed or turn != current or not _enabled(agent.config):
        return None
    lines = [f"[hermes: {len(failed)} file change(s) of this turn did not happen, whatever the answer above says "
             "(`git status` or read_file shows the files as they are):"]
    lines += [f"  - {path}: {tool} failed: {why}" for path, (tool, why) in list(failed.items())[:SHOWN]]
    lines += [f"  - and {len(failed) - SHOWN} more"] if len(failed) > SHOWN else []
    return f"{answer.rstrip()}\n\n" + "\n".join(lines) + "]"


def _enabled(config: Any) -> bool:
    said = os.environ.get("HERMES_FILE_MUTATION_VERIFIER")  # hermes-agent's: it wins over config
    if said is not None:
        return said.strip().lower() not in ("0", "false", "no", "off")
    return bool(config.get(CHANGE_CHECK, True))
