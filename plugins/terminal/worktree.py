"""chat's ``-w`` (hermes-agent's ``--worktree``): the chat works in a git worktree of its own, so agents started
side by side in one repository never edit the same files.

The worktree is ``.worktrees/hermes-XXXXXXXX`` at the repository's top, on a new branch ``hermes/hermes-XXXXXXXX``
from the current commit; ``.worktrees/`` goes into the repository's ``.git/info/exclude`` (never into a file it
tracks). Files and folders named in a ``.worktreeinclude`` at the top (a ``.env``, ``node_modules``) are copied
(folders linked) into it. The worktree is locked while the chat runs (``git worktree prune`` leaves it alone). When
the chat ends, a worktree with nothing changed and no commit of its own is removed with its branch; otherwise it is
kept, and the chat says where and how to drop it."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

FOLDER, INCLUDE = ".worktrees", ".worktreeinclude"


class WorktreeError(Exception):
    """Why no worktree could be made (one line)."""


@dataclass
class Worktree:
    root: Path  # the repository's top
    path: Path
    branch: str
    base: str  # the commit it started from
    included: tuple = ()  # what .worktreeinclude brought in: no change of the agent's


def _git(args: list, cwd, check: bool = True) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorktreeError(f"git {args[0]} failed: {exc}") from None
    if check and done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise WorktreeError(f"git {args[0]} failed: {said[-1] if said else f'exit {done.returncode}'}")
    return done.stdout.strip()


def create(start: Path) -> Worktree:
    """A new worktree of the repository ``start`` is in."""
    try:
        root = Path(_git(["rev-parse", "--show-toplevel"], start))
    except WorktreeError:
        raise WorktreeError(f"-w needs a git repository, and {start} is in none: cd into one first") from None
    try:
        base = _git(["rev-parse", "HEAD"], root)
    except WorktreeError:
        raise WorktreeError(f"-w needs a commit to start from, and {root} has none yet") from None
    name = f"hermes-{uuid.uuid4().hex[:8]}"
    exclude = Path(root, _git(["rev-parse", "--git-common-dir"], root), "info", "exclude")
    try:
        kept = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if f"{FOLDER}/" not in kept.splitlines():
            exclude.parent.mkdir(parents=True, exist_ok=True)
            exclude.write_text(kept + ("" if not kept or kept.endswith("\n") else "\n") + f"{FOLDER}/\n",
                               encoding="utf-8")
    except OSError as exc:
        raise WorktreeError(f"cannot write {exclude}: {exc.strerror}") from None
    tree = Worktree(root, root / FOLDER / name, f"hermes/{name}", base)
    _git(["worktree", "add", "-b", tree.branch, str(tree.path), base], root)
    _include(tree)
    _git(["worktree", "lock", "--reason", f"hermes chat, process {os.getpid()}", str(tree.path)], root, check=False)
    return tree


def _include(tree: Worktree) -> None:
    """What ``.worktreeinclude`` names, inside the repository: a file copied, a folder linked."""
    try:
        names = (tree.root / INCLUDE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    included = []
    top = tree.root.resolve()
    for name in (n.strip() for n in names):
        source = (tree.root / name).resolve()
        if not name or name.startswith("#") or source == top or top not in source.parents:
            continue
        target = tree.path / name
        if target.exists() or not source.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            target.symlink_to(source, target_is_directory=True)
        else:
            shutil.copy2(source, target)
        included.append(name.strip("/"))
    tree.included = tuple(included)


def finish(tree: Worktree) -> str:
    """Remove the worktree when nothing was done in it; else keep it. What happened, in a line."""
    try:
        _git(["worktree", "unlock", str(tree.path)], tree.root, check=False)
        changed = [line for line in _git(["status", "--porcelain"], tree.path).splitlines()
                   if line[3:].strip('"').rstrip("/") not in tree.included]
        commits = int(_git(["rev-list", "--count", f"{tree.base}..{tree.branch}"], tree.root) or 0)
        if not changed and not commits:
            _git(["worktree", "remove", "--force", str(tree.path)], tree.root)  # --force: the copied includes
            _git(["branch", "-D", tree.branch], tree.root)
            return f"worktree {tree.path} removed: nothing was changed in it"
    except (WorktreeError, ValueError) as exc:
        return f"worktree {tree.path} kept ({exc})"
    done = ", ".join(part for part in (f"{len(changed)} changed file(s)" if changed else "",
                                       f"{commits} commit(s)" if commits else "") if part)
    return (f"worktree kept: {tree.path} (branch {tree.branch}: {done}); `git worktree remove {tree.path}` drops it")
