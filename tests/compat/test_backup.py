"""hermes-agent's `hermes backup` and `hermes import`, as subprocesses: a data folder zipped (its database copied by
SQLite, caches and side files left out, the zip private) and restored in another, where its sessions resume; config
folders apart from data; a config already there kept unless --yes; a member that would land outside refused; and a
hermes-agent backup brought in (its config, keys, memory, skills, sessions and cron jobs)."""

from __future__ import annotations

import json
import os
import stat
import zipfile


def _run_once(hermes, tmp_path, **env):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["kept"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "remember this", env=env)
    assert out.returncode == 0, out.stderr


def test_a_backup_restored_in_another_data_folder(hermes, hermes_home, tmp_path):
    _run_once(hermes, tmp_path)
    (hermes_home / "config.yaml").write_text("model: gpt-test\n")
    (hermes_home / ".env").write_text("OPENAI_API_KEY=sk-kept\n")
    os.chmod(hermes_home / ".env", 0o600)
    (hermes_home / "skills" / "pack").mkdir(parents=True)
    (hermes_home / "skills" / "pack" / "SKILL.md").write_text("---\nname: pack\ndescription: d\n---\nBox.\n")
    (hermes_home / "plugin-data.db").write_bytes(b"a plugin's own format, not SQLite")
    for junk in ("__pycache__/x.pyc", "checkpoints/store/HEAD", "skills/pack/.venv/lib.py"):
        (hermes_home / junk).parent.mkdir(parents=True, exist_ok=True)
        (hermes_home / junk).write_text("x")
    out = hermes("backup", "-o", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    archive = zipfile.ZipFile(report["path"])
    names = set(archive.namelist())
    assert {"hermes-backup.json", "home/config.yaml", "home/.env", "home/state.db",
            "home/skills/pack/SKILL.md"} <= names
    assert not [n for n in names if any(part in n for part in ("__pycache__", "checkpoints", ".venv", "-wal",
                                                                 "plugin-state"))]
    assert stat.S_IMODE(os.stat(report["path"]).st_mode) == 0o600 and report["failed"] == []
    assert archive.read("home/plugin-data.db") == b"a plugin's own format, not SQLite"  # copied as it is

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = {"HERMES_HOME": str(elsewhere)}
    out = hermes("import", report["path"], env=moved)
    assert out.returncode == 0 and out.stdout.startswith(f"Restored {len(names) - 1} files into {elsewhere}."), \
        out.stderr
    [session] = json.loads(hermes("sessions", "list", "--json", env=moved).stdout)
    assert (session["preview"], session["message_count"]) == ("remember this", 2)
    assert (elsewhere / ".env").read_text() == "OPENAI_API_KEY=sk-kept\n"
    assert stat.S_IMODE(os.stat(elsewhere / ".env").st_mode) == 0o600
    assert hermes("config", "get", "model", env=moved).stdout.strip() == "gpt-test"

    (elsewhere / "config.yaml").write_text("model: mine\n")  # what is here (config, keys, sessions): kept unless --yes
    out = hermes("import", report["path"], env=moved)
    assert out.returncode == 1 and out.stderr == f"hermes: error: {elsewhere / '.env'}, {elsewhere / 'config.yaml'}, " \
        f"{elsewhere / 'plugin-data.db'} and 2 more would be overwritten: --yes does it\n"
    assert (elsewhere / "config.yaml").read_text() == "model: mine\n"
    assert hermes("import", "--yes", report["path"], env=moved).returncode == 0
    assert (elsewhere / "config.yaml").read_text() == "model: gpt-test\n"
    again = hermes("backup", "-o", report["path"])
    assert again.returncode == 1 and again.stderr.endswith("exists already; name another (-o)\n")


def test_config_and_data_folders_apart(hermes, tmp_path):
    """Without HERMES_HOME config.yaml is in the user's config folder and the data in the data folder: both are
    backed up, each under its name, and restored into one HERMES_HOME."""
    apart = {"HERMES_HOME": "", "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_DATA_HOME": str(tmp_path / "data")}
    _run_once(hermes, tmp_path, **apart)
    (tmp_path / "cfg" / "hermes").mkdir(parents=True)
    (tmp_path / "cfg" / "hermes" / "config.yaml").write_text("model: apart\n")
    report = json.loads(hermes("backup", "-o", tmp_path / "b.zip", "--json", env=apart).stdout)
    names = zipfile.ZipFile(report["path"]).namelist()
    assert "config/config.yaml" in names and "data/state.db" in names
    home = tmp_path / "home"
    assert hermes("import", report["path"], env={"HERMES_HOME": str(home)}).returncode == 0
    assert (home / "config.yaml").read_text() == "model: apart\n" and (home / "state.db").is_file()


def test_a_member_outside_the_folders_is_refused(hermes, hermes_home, tmp_path):
    crafted = tmp_path / "crafted.zip"
    with zipfile.ZipFile(crafted, "w") as archive:
        archive.writestr("hermes-backup.json", json.dumps({"format": 1, "roots": {"home": "/x"}}))
        archive.writestr("home/config.yaml", "model: fine\n")
        archive.writestr("home/../../escaped.txt", "no")
        link = zipfile.ZipInfo("home/link")
        link.external_attr = (0o120777 << 16)
        archive.writestr(link, "/etc/passwd")
    out = hermes("import", crafted)
    assert out.returncode == 0 and out.stdout.startswith("Restored 1 files"), out.stderr
    assert "not restored: home/../../escaped.txt: outside" in out.stderr and "home/link: a symbolic link" in out.stderr
    assert not (tmp_path / "escaped.txt").exists() and not (hermes_home.parent / "escaped.txt").exists()
    assert not (hermes_home / "link").exists()
    assert hermes("import", tmp_path / "crafted.zip.nope").returncode == 2
    (tmp_path / "plain.zip").write_bytes(b"not a zip")
    plain = hermes("import", tmp_path / "plain.zip")
    assert plain.stderr == f"hermes: error: {tmp_path / 'plain.zip'}: not a zip file\n"


def test_a_hermes_agent_backup_is_brought_in(hermes, hermes_home, tmp_path):
    from tests.sessions import agents_db

    agents_db.make(tmp_path / "agents-state.db")
    zipped = tmp_path / "hermes-backup-agent.zip"
    with zipfile.ZipFile(zipped, "w") as archive:  # hermes-agent's ~/.hermes, zipped with its folder
        archive.writestr(".hermes/config.yaml", "model:\n  default: anthropic/claude-sonnet-4.6\n")
        archive.writestr(".hermes/.env", "OPENROUTER_API_KEY=sk-or-kept\n")
        archive.writestr(".hermes/SOUL.md", "You are Bob.")
        archive.writestr(".hermes/memories/MEMORY.md", "The user grows beans.")
        archive.writestr(".hermes/skills/bees/SKILL.md", "---\nname: bees\ndescription: Bees.\n---\nSmoke.\n")
        archive.writestr(".hermes/skill-bundles/garden.yaml", "name: garden\nskills: [bees]\n")
        archive.write(tmp_path / "agents-state.db", ".hermes/state.db")
        archive.writestr(".hermes/cron/jobs.json", json.dumps({"jobs": [{"id": "j1", "name": "build", "prompt": "check "
                         "the build", "schedule": {"kind": "interval", "minutes": 30}, "enabled": True}]}))
        archive.writestr(".hermes/gateway.pid", "123")
        archive.writestr(".hermes/hermes-agent/README.md", "its code")
    out = hermes("import", zipped, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["restored"] == 6 and report["agents_sessions"]["imported"] == 2
    assert report["agents_cron"]["imported"] == 1
    [job] = json.loads(hermes("cron", "list", "--json").stdout)["jobs"]
    assert (job["name"], job["schedule"]) == ("build", "every 30m")
    assert (hermes_home / "SOUL.md").read_text() == "You are Bob."
    assert (hermes_home / "memories" / "MEMORY.md").read_text() == "The user grows beans."
    assert not (hermes_home / "gateway.pid").exists() and not (hermes_home / "hermes-agent").exists()
    listed = {s["id"] for s in json.loads(hermes("sessions", "list", "--json").stdout)}
    assert listed == {agents_db.FIRST, agents_db.SECOND}
    assert "bees" in hermes("skills", "list").stdout and "/garden  bees" in hermes("bundles").stdout
