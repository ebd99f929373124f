"""The prompts file (JSON lines, as hermes-agent's batch runner reads them) and the trajectories already
written (what a rerun skips)."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

SETTINGS = {"model": str, "toolsets": (list, str), "max_turns": int}  # what a line may set for its own run
KNOWN = {"prompt", *SETTINGS}


class DatasetError(Exception):
    """A prompts or trajectories file that cannot be used, phrased for the user (one line)."""


@dataclass
class Prompt:
    index: int  # its place among the prompts (hermes-agent's prompt_index)
    text: str
    line_hash: str  # of the whole line: a rerun knows the prompt is the same one
    settings: dict = field(default_factory=dict)


def read_prompts(path: Path) -> tuple:
    """``(prompts, ignored keys)``; every bad line is named at once (up to five), before any model call."""
    prompts, problems, ignored = [], [], set()
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # a BOM (an editor on Windows) is no JSON
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read the prompts: {getattr(exc, 'strerror', None) or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        why = _problem(line)
        if why:
            problems.append(f"line {number}: {why}")
            continue
        row = json.loads(line)
        ignored |= set(row) - KNOWN
        settings = {k: row[k] for k in SETTINGS if row.get(k) not in (None, "", [])}
        if isinstance(settings.get("toolsets"), str):
            settings["toolsets"] = [t.strip() for t in settings["toolsets"].split(",") if t.strip()]
        prompts.append(Prompt(len(prompts), row["prompt"], hashlib.sha256(line.strip().encode()).hexdigest()[:16],
                              settings))
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise DatasetError(f"{path}: " + "; ".join(problems[:5]) + more)
    if not prompts:
        raise DatasetError(f"{path}: no prompts (one JSON object per line, each with a \"prompt\")")
    return prompts, sorted(ignored)


def _problem(line: str) -> Optional[str]:
    try:
        row = json.loads(line)
    except ValueError as exc:
        return f"not JSON ({exc.msg})"
    if not isinstance(row, dict):
        return "not a JSON object"
    if not isinstance(row.get("prompt"), str) or not row["prompt"].strip():
        return "no \"prompt\" string"
    try:
        row["prompt"].encode("utf-8")
    except UnicodeEncodeError:  # a JSON escape such as "\ud800": no text a model (or the store) can take
        return "the \"prompt\" holds a lone surrogate escape (\\ud800-\\udfff)"
    for key, kind in SETTINGS.items():
        value = row.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            wanted = "a list or string" if key == "toolsets" else kind.__name__
            return f"\"{key}\" is {type(value).__name__}, not {wanted}"
        if key == "max_turns" and value is not None and value < 1:
            return "\"max_turns\" must be at least 1"
        if key == "toolsets" and isinstance(value, list) and not all(isinstance(t, str) for t in value):
            return "\"toolsets\" must list names"
    return None


def written(out: Path, prompts: list) -> tuple:
    """``({prompt_index: line hash}, cut)`` of the trajectories in ``out`` (none yet: empty). A last line cut
    short (the process was killed while writing it) is cut off (``cut``); a trajectory of a prompt that is not this
    dataset's is an error (another dataset's file, or one edited since)."""
    try:
        data = out.read_bytes()
    except FileNotFoundError:
        return {}, False
    except OSError as exc:
        raise DatasetError(f"{out}: cannot read it: {exc.strerror}") from None
    cut = bool(data) and not data.endswith(b"\n")
    if cut:
        data = data[:data.rfind(b"\n") + 1]
        with open(out, "r+b") as fh:
            fh.truncate(len(data))
    done = {}
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        try:
            row = json.loads(line)
            index, line_hash = row["prompt_index"], row["metadata"]["prompt_hash"]
        except (ValueError, KeyError, TypeError):
            raise DatasetError(f"{out}: line {number} is not a trajectory this command wrote; "
                               "write to another --out") from None
        if not isinstance(index, int) or index >= len(prompts) or prompts[index].line_hash != line_hash:
            raise DatasetError(f"{out}: line {number} is the trajectory of another prompt {index} than the prompts "
                               "file's (another dataset, or one edited since): write to another --out")
        done[index] = line_hash
    return done, cut


def append_line(fd: int, line: str) -> None:
    """One trajectory's JSON line, in one write (a kill leaves at most a cut-short last line, which a rerun
    cuts off)."""
    os.write(fd, (line + "\n").encode("utf-8"))
