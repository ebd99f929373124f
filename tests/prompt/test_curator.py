"""The curator (hermes-agent's): the skills the agent made are counted as the model uses them (real openai SDK over
loopback), marked stale and archived when unused, never when pinned; a snapshot comes first and rolls back; a pass
runs at a session's start when one is due. The usage file is hermes-agent's, so one brought over works as is."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from plugins_providers.testserver import reply
from tests.conftest import no_titles
from tests.prompt.test_skills_cli import MODEL, skill, tool_call
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)


def ago(days: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=days)).isoformat()


def library(home, **records):
    """Skills in the skills folder and hermes-agent's ``.usage.json`` of them."""
    folder = home / "skills"
    for name in records:
        skill(folder, name, f"The {name} skill.", f"How to {name}.")
    (folder / ".usage.json").write_text(json.dumps(records))
    return folder


def agent_made(last_used_days=None, created_days=200, **more):
    return {"created_by": "agent", "use_count": 1 if last_used_days else 0, "created_at": ago(created_days),
            "last_used_at": ago(last_used_days) if last_used_days is not None else None, "state": "active", **more}


def as_json(out):
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_pass_marks_stale_archives_and_keeps_the_rest(hermes, hermes_home):
    folder = library(hermes_home, old=agent_made(120), dusty=agent_made(45), fresh=agent_made(2),
                     unused_young=agent_made(created_days=10), pinned=agent_made(400, pinned=True),
                     mine={"created_by": None, "use_count": 0, "created_at": ago(900)})
    preview = as_json(hermes("curator", "run", "--dry-run", "--json"))
    assert preview["changes"] == [{"name": "dusty", "from": "active", "to": "stale"},
                                  {"name": "old", "from": "active", "to": "archived"}]
    assert (folder / "old" / "SKILL.md").is_file()  # a dry run changes nothing

    done = as_json(hermes("curator", "run", "--json"))
    assert done["changes"] == preview["changes"] and done["snapshot"]
    assert not (folder / "old").exists() and (folder / ".archive" / "old" / "SKILL.md").is_file()
    listed = {s["name"] for s in as_json(hermes("skills", "list", "--json"))}
    assert listed == {"dusty", "fresh", "unused_young", "pinned", "mine"}  # the user's own skill is not its to move
    status = as_json(hermes("curator", "status", "--json"))
    assert {s["name"]: s["state"] for s in status["skills"]} == {
        "dusty": "stale", "fresh": "active", "unused_young": "active", "pinned": "active", "old": "archived"}
    assert status["archived"] == ["old"] and status["snapshots"] == 1 and "archived: old" in status["last_run_summary"]

    used = as_json(hermes("curator", "usage", "--json"))
    assert [(u["name"], u["uses"], u["made_by_agent"]) for u in used][:2] == [("dusty", 1, True), ("fresh", 1, True)]
    assert [u["name"] for u in as_json(hermes("curator", "usage", "--sort", "recent", "--json"))] == [
        "fresh", "dusty", "pinned", "mine", "unused_young"]  # never used: last, by name
    out = hermes("curator", "restore", "old")
    assert out.returncode == 0 and (folder / "old" / "SKILL.md").is_file(), out.stderr
    assert as_json(hermes("curator", "run", "--dry-run", "--json"))["changes"] == []  # restored: not archived again
    again = hermes("curator", "restore", "old")
    assert again.returncode == 1 and again.stderr.strip() == "hermes: error: no archived skill 'old'; archived: none"


def test_rollback_brings_the_folder_back_and_can_be_undone(hermes, hermes_home):
    folder = library(hermes_home, old=agent_made(120))
    assert as_json(hermes("curator", "run", "--json"))["changes"][0]["to"] == "archived"
    (folder / "new-one").mkdir()
    (folder / "new-one" / "SKILL.md").write_text("---\ndescription: made since\n---\nbody\n")

    refused = hermes("curator", "rollback")
    assert refused.returncode == 1 and "the skills folder was not replaced: no answer came (end of input); pass " \
                                       "--yes" in refused.stderr
    done = as_json(hermes("curator", "rollback", "--yes", "--json"))
    assert (folder / "old" / "SKILL.md").is_file() and not (folder / "new-one").exists()
    assert json.loads((folder / ".usage.json").read_text())["old"]["state"] == "active"
    undo = hermes("curator", "rollback", "--yes", "--id", done["saved_before"]["id"])
    assert undo.returncode == 0, undo.stderr
    assert (folder / "new-one" / "SKILL.md").is_file() and not (folder / "old").exists()
    unknown = hermes("curator", "rollback", "--yes", "--id", "nope")
    assert unknown.returncode == 1 and unknown.stderr.startswith("hermes: error: no snapshot 'nope'; there are: ")


def test_pin_archive_by_hand_and_a_broken_usage_file(hermes, hermes_home):
    folder = library(hermes_home, old=agent_made(120))
    assert hermes("curator", "pin", "old").returncode == 0
    assert as_json(hermes("curator", "run", "--json"))["changes"] == []
    assert hermes("curator", "unpin", "old").returncode == 0
    out = hermes("curator", "archive", "old")
    assert out.returncode == 0 and (folder / ".archive" / "old").is_dir(), out.stderr
    missing = hermes("curator", "archive", "ghost")
    assert missing.returncode == 1 and "no skill 'ghost'" in missing.stderr

    import fcntl

    with open(folder / ".curator_run.lock", "a") as held:  # another process's pass
        fcntl.flock(held, fcntl.LOCK_EX)
        busy = hermes("curator", "run")
    assert busy.returncode == 1 and busy.stderr == "hermes: error: another curator pass runs now\n"

    (folder / ".usage.json").write_text("{not json")
    status = hermes("curator", "status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["skills"] == []
    kept = [p for p in folder.iterdir() if p.name.startswith(".usage.json.unreadable-")]
    assert len(kept) == 1 and kept[0].read_text() == "{not json"  # kept aside, not written over
    (folder / ".usage.json").write_text(json.dumps({"old": {"created_by": "agent", "use_count": "lots",
                                                            "last_used_at": "yesterday"}}))  # edited by hand
    assert [s["uses"] for s in as_json(hermes("curator", "status", "--json"))["skills"]] == [0]
    assert hermes("curator", "usage").returncode == 0 and hermes("curator", "run").returncode == 0


def test_the_models_skills_are_counted_and_a_due_pass_runs_at_the_start(hermes, wire_server, cli_env,  # noqa: F811
                                                                        hermes_home, tmp_path):
    no_titles(hermes_home)
    env = {**cli_env, "OPENAI_API_KEY": "sk"}
    wire_server.script([reply("hello")])
    assert hermes("run", "--base-url", wire_server.openai_url, *MODEL, "hi", env=env, cwd=tmp_path).returncode == 0
    assert not (hermes_home / "skills").exists()  # no skill used or made: the curator leaves no file
    folder = library(hermes_home, old=agent_made(120))
    wire_server.script([tool_call("skill_manage", {"action": "create", "name": "brew", "description": "Brewing.",
                                                   "body": "Boil the water."}),
                        tool_call("skill_view", {"name": "brew"}), reply("done"), reply("second")])
    out = hermes("run", "--base-url", wire_server.openai_url, *MODEL, "-t", "skills", "learn to brew", env=env,
                 cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    usage = json.loads((folder / ".usage.json").read_text())
    assert usage["brew"]["created_by"] == "agent" and usage["brew"]["use_count"] == 1
    assert (folder / "old").is_dir()  # the first start only starts the clock
    state = json.loads((folder / ".curator_state").read_text())
    assert state["last_run_at"] and "clock started" in state["last_run_summary"]

    state["last_run_at"] = ago(8)  # a week and a day: due
    (folder / ".curator_state").write_text(json.dumps(state))
    out = hermes("run", "--base-url", wire_server.openai_url, *MODEL, "again", env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr == "hermes: curator: skills archived: old (`hermes curator status`)\n"
    assert (folder / ".archive" / "old").is_dir() and (folder / "brew").is_dir()
    assert json.loads((folder / ".curator_state").read_text())["run_count"] == 1


def test_consolidation_merges_the_agents_overlapping_skills_and_archives_the_narrow_ones(hermes, hermes_home,
                                                                                         tmp_path):
    """hermes-agent's consolidation (`curator run --consolidate`): the model, with the skills tools only, writes a
    broader skill and removes the narrow ones, which are archived; it may not touch a skill that is not the agent's."""
    folder = library(hermes_home, **{"git-commit": agent_made(3), "git-push": agent_made(4)})
    skill(folder, "mine", "My own.", "Hands off.")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [["skill_manage", {"action": "create", "name": "git-work", "description": "Commit and push.",
                                          "body": "1. git commit -m MSG\n2. git push"}]]},
        {"tool_calls": [["skill_manage", {"action": "delete", "name": "git-commit"}],
                        ["skill_manage", {"action": "delete", "name": "git-push"}],
                        ["skill_manage", {"action": "delete", "name": "mine"}]]},
        "Merged git-commit and git-push into git-work."]))
    (hermes_home / "config.yaml").write_text(f"api_mode: scripted\nbase_url: {script}\nmodel: test\n"
                                             "auxiliary:\n  curator:\n    model: curator-model\n")
    preview = as_json(hermes("curator", "run", "--consolidate", "--dry-run", "--json"))
    assert preview["consolidation"] == {"consolidated": False, "why": "a dry run", "skills": ["git-commit", "git-push"]}
    out = hermes("curator", "run", "--consolidate")
    assert out.returncode == 0, out.stderr
    assert "consolidation: Merged git-commit and git-push into git-work. (archived: git-commit, git-push; snapshot" \
        in out.stdout
    assert sorted(p.name for p in (folder / ".archive").iterdir()) == ["git-commit", "git-push"]
    assert (folder / "git-work" / "SKILL.md").is_file() and (folder / "mine" / "SKILL.md").is_file()
    assert json.loads((folder / ".usage.json").read_text())["git-work"]["created_by"] == "agent"
    [session] = json.loads(hermes("sessions", "list", "--json").stdout)
    assert session["model"] == "curator-model"  # hermes-agent's auxiliary.curator
    session = session["id"]
    refused = [m["content"] for m in json.loads(hermes("sessions", "show", session, "--json").stdout)["messages"]
               if m["role"] == "tool" and "mine" in m["content"]]
    assert refused and "'mine' is not one of the skills to consolidate" in refused[0]
