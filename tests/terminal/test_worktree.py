"""chat -w (hermes-agent's --worktree): the chat works in .worktrees/hermes-XXXXXXXX on a branch of its own, with
what .worktreeinclude names; a worktree where something changed is kept and said, one where nothing did is removed
with its branch; outside a repository, one line says why not."""

from __future__ import annotations

import json
import subprocess

GIT = ("git", "-c", "user.name=t", "-c", "user.email=t@example.org")


def git(*args, cwd) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_a_chat_in_a_worktree_of_its_own(hermes, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "app.py").write_text("print(1)\n")
    (repo / ".gitignore").write_text(".env\nnode_modules/\n")
    (repo / ".env").write_text("TOKEN=local\n")
    (repo / "node_modules").mkdir()
    (repo / ".worktreeinclude").write_text(".env\nnode_modules\n../outside\n")
    git("add", "app.py", ".gitignore", ".worktreeinclude", cwd=repo)
    git("commit", "-qm", "first", cwd=repo)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["write_file", {"path": "notes.txt", "content": "hi\n"}]]},
                                  "wrote it", "nothing to do"]))
    model = ("--api-mode", "scripted", "--base-url", script)
    out = hermes("chat", "-w", *model, cwd=repo, input="write notes\n/exit\n")
    assert out.returncode == 0, out.stderr
    [tree] = (repo / ".worktrees").iterdir()
    assert f"worktree {tree} (branch hermes/{tree.name}, from " in out.stderr
    assert (tree / "notes.txt").read_text() == "hi\n" and not (repo / "notes.txt").exists()
    assert (tree / ".env").read_text() == "TOKEN=local\n" and (tree / "node_modules").is_symlink()
    assert f"worktree kept: {tree} (branch hermes/{tree.name}: 1 changed file(s)); `git worktree remove " in out.stderr
    assert ".worktrees/" in (repo / ".git" / "info" / "exclude").read_text()
    assert git("status", "--porcelain", cwd=repo) == ""  # the repository itself: untouched

    script.write_text(json.dumps(["nothing to do"]))
    out = hermes("chat", "-w", *model, cwd=repo / "node_modules", input="look\n/exit\n")  # from a folder inside
    assert out.returncode == 0, out.stderr
    assert list((repo / ".worktrees").iterdir()) == [tree] and "removed: nothing was changed in it" in out.stderr
    assert git("for-each-ref", "--format=%(refname:short)", "refs/heads/hermes/", cwd=repo).split() == [
        f"hermes/{tree.name}"]  # the removed one's branch is gone

    script.write_text(json.dumps([{"tool_calls": [["write_file", {"path": "q.txt", "content": "q\n"}]]}, "done"]))
    out = hermes("chat", "-w", "-q", "write q", *model, cwd=repo)  # one turn, in a worktree all the same
    assert out.returncode == 0 and out.stdout == "done\n", out.stderr
    [made] = [t for t in (repo / ".worktrees").iterdir() if t != tree]
    assert (made / "q.txt").read_text() == "q\n" and not (repo / "q.txt").exists() and "worktree kept: " in out.stderr

    out = hermes("chat", "-w", *model, cwd=tmp_path, input="/exit\n")
    assert out.returncode == 1 and out.stderr.strip().endswith(
        f"-w needs a git repository, and {tmp_path} is in none: cd into one first")
