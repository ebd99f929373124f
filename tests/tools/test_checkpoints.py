"""Checkpoints: a folder snapshotted before a turn first changes it (real git, `hermes run` and `hermes checkpoints`
as subprocesses; `/rollback` in a chat: tests/terminal/test_rollback.py)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from plugins.checkpoints.store import Store

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed (the test setup script)")

CHANGES = [{"tool_calls": [["write_file", {"path": "a.txt", "content": "two\n"}],
                           ["terminal", {"command": "echo made > b.txt"}]]}, "done"]


def run(hermes, tmp_path, steps, folder):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "go", cwd=folder)
    assert out.returncode == 0, out.stderr
    return out


def snapshots(hermes, folder) -> list:
    out = hermes("checkpoints", "list", "--json", "--dir", folder)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["checkpoints"]


def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text("one\n")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)  # its own repository stays untouched
    return folder


def test_a_turn_is_snapshotted_once_before_its_first_change_and_restored(hermes, hermes_home, tmp_path):
    folder = project(tmp_path)
    run(hermes, tmp_path, CHANGES, folder)  # off by default: nothing taken
    assert snapshots(hermes, folder) == [] and "Checkpoints are off" in hermes("checkpoints", cwd=folder).stdout
    (folder / "a.txt").write_text("one\n")
    (folder / "b.txt").unlink()
    (hermes_home / "config.yaml").write_text("checkpoints:\n  enabled: true\n")
    run(hermes, tmp_path, CHANGES, folder)
    [snap] = snapshots(hermes, folder)  # two changing calls, one snapshot: before the first
    assert snap["reason"] == "before write_file: a.txt" and snap["files_changed"] is None
    assert (folder / "a.txt").read_text() == "two\n" and (folder / "b.txt").exists()
    diff = hermes("checkpoints", "diff", "1", cwd=folder)
    assert "-one\n+two" in diff.stdout and "+made" in diff.stdout and "2 files changed" in diff.stdout
    assert subprocess.run(["git", "status", "--porcelain"], cwd=folder, capture_output=True, text=True).stdout == \
        "?? a.txt\n?? b.txt\n"  # the folder's own git knows nothing of the snapshots
    asked = hermes("checkpoints", "restore", "1", cwd=folder)
    assert asked.returncode == 2 and "--yes" in asked.stderr and (folder / "b.txt").exists()
    restored = hermes("checkpoints", "restore", "1", "--yes", cwd=folder)
    assert restored.returncode == 0, restored.stderr
    assert (folder / "a.txt").read_text() == "one\n" and not (folder / "b.txt").exists()  # made since: removed
    assert (folder / ".git").is_dir()
    # what was there was snapshotted first: restoring it undoes the restore
    before, first = snapshots(hermes, folder)
    assert before["reason"] == f"before restoring {first['commit'][:8]}" and before["files_changed"] == 2
    assert hermes("checkpoints", "restore", "1", "--yes", cwd=folder).returncode == 0
    assert (folder / "a.txt").read_text() == "two\n" and (folder / "b.txt").read_text() == "made\n"
    # one file only
    assert hermes("checkpoints", "restore", first["commit"][:10], "a.txt", "--yes", cwd=folder).returncode == 0
    assert (folder / "a.txt").read_text() == "one\n" and (folder / "b.txt").exists()
    missing = hermes("checkpoints", "restore", "9", "--yes", cwd=folder)
    assert missing.returncode == 1 and "no checkpoint '9'" in missing.stderr and "Traceback" not in missing.stderr


def test_an_unchanged_folder_is_not_snapshotted_again_and_old_ones_go(hermes, hermes_home, tmp_path):
    folder = project(tmp_path)
    (hermes_home / "config.yaml").write_text("checkpoints:\n  enabled: true\n  max_snapshots: 2\n")
    look = [{"tool_calls": [["terminal", {"command": "ls"}]]}, "done"]
    run(hermes, tmp_path, look, folder)
    run(hermes, tmp_path, look, folder)  # nothing changed since: no second snapshot
    assert len(snapshots(hermes, folder)) == 1
    for n in range(3):
        (folder / "a.txt").write_text(f"{n}\n")
        run(hermes, tmp_path, look, folder)
    kept = snapshots(hermes, folder)
    assert len(kept) == 2 and all(s["reason"] == "before terminal: ls" for s in kept)
    status = json.loads(hermes("checkpoints", "status", "--json").stdout)
    assert [f["workdir"] for f in status["folders"]] == [str(folder.resolve())] and status["bytes"] > 0


def test_a_snapshot_that_cannot_be_taken_never_stops_the_tool(make_agent, tmp_path, monkeypatch, caplog):
    import plugins.checkpoints as checkpoints
    from hermes.host.config import Config
    from plugins import core_tools

    folder = project(tmp_path)
    monkeypatch.chdir(folder)
    monkeypatch.setattr("plugins.checkpoints.store.shutil.which", lambda name: None)  # no git here
    agent = make_agent(core_tools, checkpoints, config=Config({"checkpoints": {"enabled": True}}), script=[
        {"tool_calls": [["write_file", {"path": "a.txt", "content": "two\n"}]]}, "done"])
    agent.run_conversation("go")
    assert (folder / "a.txt").read_text() == "two\n"
    assert "git is not installed here" in caplog.text
    monkeypatch.undo()
    assert Store(str(folder)).snapshots() == []



def test_the_folder_a_call_would_change(tmp_path, monkeypatch):
    from types import SimpleNamespace as Call

    from plugins.checkpoints import folder_of

    here, other, stray = tmp_path / "here", tmp_path / "other", tmp_path / "stray"
    for folder in (here / "sub", other / "src", stray):
        folder.mkdir(parents=True)
    (other / "pyproject.toml").write_text("")
    monkeypatch.chdir(here)
    assert folder_of(Call(name="write_file", args={"path": "sub/a.txt"})) == str(here.resolve())
    assert folder_of(Call(name="patch", args={"path": str(other / "src" / "m.py")})) == str(other.resolve())
    assert folder_of(Call(name="write_file", args={"path": str(stray / "x.txt")})) is None  # no project: no snapshot
    assert folder_of(Call(name="terminal", args={"command": "make", "workdir": str(other / "src")})) == \
        str(other.resolve())
    assert folder_of(Call(name="terminal", args={"command": "ls"})) == str(here.resolve())


def test_snapshots_are_of_the_folder_the_tools_start_in(make_agent, hermes, hermes_home, tmp_path, monkeypatch):
    """With terminal.cwd, the tools work in that folder wherever hermes started: its files are snapshotted and
    /rollback lists them; a path relative to a folder a `cd` moved to is judged from there."""
    import plugins.checkpoints as checkpoints
    from hermes.host.config import Config
    from plugins import core_tools
    from plugins.checkpoints.chat import rollback

    folder, elsewhere = project(tmp_path), tmp_path / "elsewhere"
    (folder / "sub").mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = Config({"checkpoints": {"enabled": True}, "terminal": {"cwd": str(folder)}, "sandbox": {"mode": "off"}})
    agent = make_agent(core_tools, checkpoints, config=config, script=[
        {"tool_calls": [["terminal", {"command": "cd sub"}]]},
        {"tool_calls": [["write_file", {"path": "b.txt", "content": "new\n"}]]}, "done"])
    agent.run_conversation("go")
    assert (folder / "sub" / "b.txt").read_text() == "new\n"
    assert len(Store(str(folder)).snapshots()) == 1 and Store(str(elsewhere)).snapshots() == []
    assert rollback("", agent).startswith(f"Checkpoints of {folder.resolve()} (newest first):")
    (hermes_home / "config.yaml").write_text(f"terminal:\n  cwd: {folder}\n")  # hermes checkpoints, run elsewhere
    assert len(json.loads(hermes("checkpoints", "list", "--json", cwd=elsewhere).stdout)["checkpoints"]) == 1


def test_doctor_says_whether_snapshots_can_be_taken(hermes, hermes_home, tmp_path):
    assert "checkpoints" not in hermes("doctor", "--offline").stdout  # off: nothing to say
    (hermes_home / "config.yaml").write_text("checkpoints:\n  enabled: true\n")
    assert "ok    checkpoints  on; snapshots of 0 folder(s)" in hermes("doctor", "--offline").stdout
    bin_dir = tmp_path / "bin"  # a PATH where git is not
    bin_dir.mkdir()
    out = hermes("doctor", "--offline", env={"PATH": str(bin_dir)})
    assert "checkpoints  checkpoints.enabled is true, but git is not installed" in out.stdout


def aged(hermes_home, folder, days: float) -> None:
    """Make the record of ``folder``'s snapshots say it was last touched ``days`` ago."""
    import time

    for meta in (hermes_home / "checkpoints" / "store" / "projects").glob("*.json"):
        data = json.loads(meta.read_text())
        if data["workdir"] == str(folder.resolve()):
            meta.write_text(json.dumps({**data, "last_touch": time.time() - days * 86400}))


def test_prune_drops_gone_and_untouched_folders_then_the_oldest_over_the_size_limit(hermes, hermes_home, tmp_path):
    import os

    (hermes_home / "config.yaml").write_text("checkpoints:\n  enabled: true\n  auto_prune: false\n")
    folders = {}
    for name in ("old", "gone", "kept"):
        folders[name] = tmp_path / name
        folders[name].mkdir()
        run(hermes, tmp_path, CHANGES, folders[name])
    for n in range(3):  # three snapshots of 1 MB that does not compress
        (folders["kept"] / "blob.bin").write_bytes(os.urandom(1 << 20))
        run(hermes, tmp_path, [{"tool_calls": [["terminal", {"command": f"echo {n}"}]]}, "done"], folders["kept"])
    aged(hermes_home, folders["old"], 8)  # hermes-agent's retention_days: 7
    shutil.rmtree(folders["gone"])
    out = hermes("checkpoints", "prune", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {**json.loads(out.stdout), "folders_gone": 1, "folders_stale": 1,
                                      "snapshots_dropped": 0}
    status = json.loads(hermes("checkpoints", "status", "--json").stdout)
    assert [f["workdir"] for f in status["folders"]] == [str(folders["kept"].resolve())]
    assert len(snapshots(hermes, folders["kept"])) == 4 and status["bytes"] > 3e6
    out = hermes("checkpoints", "prune", "--max-size-mb", "1.5")
    assert out.returncode == 0 and "older snapshot(s)" in out.stdout, out.stderr
    [newest] = snapshots(hermes, folders["kept"])  # the newest is kept, whatever its size
    assert newest["reason"] == "before terminal: echo 2"
    assert json.loads(hermes("checkpoints", "status", "--json").stdout)["bytes"] < 1.5 * 1024 * 1024
    assert hermes("checkpoints", "restore", "1", "--yes", cwd=folders["kept"]).returncode == 0


def test_auto_prune_runs_as_a_session_ends_at_most_once_per_interval(hermes, hermes_home, tmp_path):
    config = hermes_home / "config.yaml"
    config.write_text("checkpoints:\n  enabled: true\n  retention_days: 1\n")
    old, new = tmp_path / "old", tmp_path / "new"
    for folder in (old, new):
        folder.mkdir()
    run(hermes, tmp_path, CHANGES, old)  # its session's end pruned (nothing old yet)
    aged(hermes_home, old, 2)
    run(hermes, tmp_path, CHANGES, new)
    assert len(snapshots(hermes, old)) == 1  # within min_interval_hours (24) of the last: not again
    config.write_text("checkpoints:\n  enabled: true\n  retention_days: 1\n  min_interval_hours: 0\n")
    run(hermes, tmp_path, [{"tool_calls": [["terminal", {"command": "ls"}]]}, "done"], new)
    assert snapshots(hermes, old) == [] and snapshots(hermes, new)  # a folder in use keeps its own
    config.write_text("checkpoints:\n  enabled: true\n  retention_days: 1\n  min_interval_hours: 0\n"
                      "  auto_prune: false\n")
    run(hermes, tmp_path, CHANGES, old)
    aged(hermes_home, old, 2)
    run(hermes, tmp_path, [{"tool_calls": [["terminal", {"command": "ls"}]]}, "done"], new)
    assert len(snapshots(hermes, old)) == 1  # off: kept
