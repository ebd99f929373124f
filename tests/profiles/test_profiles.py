"""hermes-agent's profiles: `hermes -p NAME` runs as a data folder of its own, chosen before anything reads one;
`hermes profile create|use|rename|delete|list|show`; the one `profile use` keeps, and what happens when it is gone.
The CLI as users run it (subprocesses), HERMES_HOME's root and platformdirs' folders both."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import hermes_command


def test_a_profile_is_a_folder_of_its_own(hermes, hermes_home):
    (hermes_home / "config.yaml").write_text("model: gpt-4o\n")
    (hermes_home / ".env").write_text("OPENAI_API_KEY=sk-root\n")
    (hermes_home / "SOUL.md").write_text("You are the root's agent.\n")
    (hermes_home / "skills" / "mine").mkdir(parents=True)
    (hermes_home / "skills" / "mine" / "SKILL.md").write_text("---\nname: mine\ndescription: d\n---\nbody\n")
    sqlite3.connect(hermes_home / "state.db").close()

    made = hermes("profile", "create", "Coder", "--clone")
    assert made.returncode == 0, made.stderr
    folder = hermes_home / "profiles" / "coder"  # lowercased, as hermes-agent takes names
    assert "Made profile 'coder' from 'default'" in made.stdout and str(folder) in made.stdout
    assert (folder / ".env").read_text() == "OPENAI_API_KEY=sk-root\n"
    assert (folder / "SOUL.md").is_file() and (folder / "skills" / "mine" / "SKILL.md").is_file()
    assert not (folder / "state.db").exists()  # --clone: config, keys, identity and skills, not the sessions

    assert hermes("-p", "coder", "config", "set", "model", "o3").returncode == 0
    assert "model: o3" in (folder / "config.yaml").read_text()
    assert (hermes_home / "config.yaml").read_text() == "model: gpt-4o\n"  # the root's is untouched
    shown = hermes("--profile=coder", "config", "get", "model")
    assert shown.returncode == 0 and shown.stdout.strip() == "o3", shown.stderr
    assert hermes("config", "get", "model").stdout.strip() == "gpt-4o"

    listed = json.loads(hermes("-p", "coder", "profile", "list", "--json").stdout)
    assert [(row["name"], row["model"], row["current"]) for row in listed] == [("default", "gpt-4o", False),
                                                                                ("coder", "o3", True)]
    text = hermes("profile", "list").stdout.splitlines()
    assert text[0].startswith("* default") and text[1].startswith("  coder") and "o3" in text[1]

    everything = hermes("profile", "create", "twin", "--clone-all")
    assert everything.returncode == 0, everything.stderr
    twin = hermes_home / "profiles" / "twin"
    assert (twin / "state.db").is_file() and (twin / "SOUL.md").is_file()
    assert not (twin / "profiles").exists()  # the profiles are not copied into a profile


def test_a_profile_that_is_not_there_or_no_name_is_one_line_and_makes_nothing(hermes, hermes_home):
    for name in ("nope", "../etc", "-x", "a/b"):
        result = hermes("-p", name, "config", "get", "model")
        assert result.returncode == 1 and result.stderr == (
            f"hermes: error: no profile '{name}' (`hermes profile list` shows them, `hermes profile create NAME` "
            "makes one)\n"), result.stderr
    assert not (hermes_home / "profiles").exists() and not (hermes_home / "config.yaml").exists()
    refused = hermes("profile", "create", "default")
    assert refused.returncode == 1 and "cannot name a profile" in refused.stderr
    assert hermes("profile", "create", "a").returncode == 0
    again = hermes("profile", "create", "a")
    assert again.returncode == 1 and "profile 'a' is there already" in again.stderr
    unknown = hermes("profile", "show", "b")
    assert unknown.returncode == 1 and "no profile 'b'" in unknown.stderr


def test_profile_use_is_kept_until_default_and_a_lost_one_locks_nobody_out(hermes, hermes_home):
    assert hermes("profile", "create", "work").returncode == 0
    assert hermes("profile", "use", "work").returncode == 0
    assert (hermes_home / "active_profile").read_text() == "work\n"
    assert hermes("config", "set", "model", "m-work").returncode == 0  # no -p: the kept one
    assert "m-work" in (hermes_home / "profiles" / "work" / "config.yaml").read_text()
    assert hermes("-p", "default", "config", "get", "model").stdout.strip() == ""  # -p wins over the kept one
    shown = json.loads(hermes("profile", "show", "--json").stdout)
    assert shown["name"] == "work" and shown["active"] and shown["current"]

    # the processes hermes starts run as the profile it runs as (HERMES_PROFILE), the kept one aside
    probe = ("import os,sys; from hermes.cli.entry import choose_profile; choose_profile([], 'hermes'); "
             "print(os.environ.get('HERMES_PROFILE'), os.environ.get('HERMES_HOME'))")
    base = dict(os.environ, HERMES_HOME=str(hermes_home))
    kept = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=base)
    assert kept.stdout.split() == ["work", str(hermes_home / "profiles" / "work")], kept.stderr
    told = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=dict(base, HERMES_PROFILE="default"))
    assert told.stdout.split() == ["default", str(hermes_home)], told.stderr

    refused = hermes("profile", "delete", "work", "-y")  # it runs as the kept one
    assert refused.returncode == 1 and "`hermes -p default profile delete work`" in refused.stderr
    # the kept profile's folder gone (deleted by hand): a warning, every command still runs, as default
    shutil.rmtree(hermes_home / "profiles" / "work")
    result = hermes("config", "get", "model")
    assert result.returncode == 0, result.stderr
    assert "warning: the active profile 'work' is not there" in result.stderr and "running as default" in result.stderr
    assert hermes("profile", "use", "default").returncode == 0 and not (hermes_home / "active_profile").exists()
    assert hermes("config", "get", "model").stderr == ""


def test_rename_and_delete_move_the_kept_choice_with_them(hermes, hermes_home):
    assert hermes("profile", "create", "old").returncode == 0
    assert hermes("profile", "use", "old").returncode == 0
    assert hermes("-p", "default", "profile", "rename", "old", "new").returncode == 0
    assert (hermes_home / "profiles" / "new").is_dir() and not (hermes_home / "profiles" / "old").exists()
    assert (hermes_home / "active_profile").read_text() == "new\n"
    asked = hermes("-p", "default", "profile", "delete", "new", input="")  # nobody to answer
    assert asked.returncode == 1 and "no answer came" in asked.stderr and (hermes_home / "profiles" / "new").is_dir()
    assert hermes("-p", "default", "profile", "delete", "new", input="n\n").returncode == 1
    gone = hermes("-p", "default", "profile", "delete", "new", input="y\n")
    assert gone.returncode == 0 and "commands run as default again" in gone.stdout, gone.stderr
    assert not (hermes_home / "profiles" / "new").exists() and not (hermes_home / "active_profile").exists()
    refused = hermes("profile", "delete", "default", "-y")
    assert refused.returncode == 1 and "not deleted" in refused.stderr


def test_without_hermes_home_profiles_live_in_platformdirs_data_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_HOME", "HERMES_PROFILE")}
    env.update(HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(os.path.dirname(
                   os.path.abspath(__file__)))), env.get("PYTHONPATH", "")])))
    run = lambda *args: subprocess.run(hermes_command() + list(args), capture_output=True, text=True,  # noqa: E731
                                       env=env, timeout=60)
    assert run("config", "set", "model", "root-model").returncode == 0
    assert (tmp_path / "config" / "hermes" / "config.yaml").is_file()  # the default keeps platformdirs' two folders
    assert run("profile", "create", "lab", "--clone").returncode == 0
    folder = tmp_path / "data" / "hermes" / "profiles" / "lab"
    assert "root-model" in (folder / "config.yaml").read_text()
    assert run("profile", "use", "lab").returncode == 0
    assert run("config", "get", "model").stdout.strip() == "root-model"
    assert run("config", "set", "model", "lab-model").returncode == 0
    # back to the default from the profile: platformdirs' config folder again, not the data folder's
    assert run("-p", "default", "config", "get", "model").stdout.strip() == "root-model"
    shown = json.loads(run("-p", "default", "profile", "show", "--json").stdout)
    assert shown["config"] == str(tmp_path / "config" / "hermes" / "config.yaml")
    assert shown["name"] == "default" and shown["current"] and not shown["active"]  # lab is the kept one


def test_the_profile_option_is_in_the_help_and_the_remembered_help_is_the_profiles_own(hermes, hermes_home):
    assert hermes("profile", "create", "x").returncode == 0
    first = hermes("-p", "x", "--help")
    assert first.returncode == 0 and "-p, --profile NAME" in first.stdout and "profile" in first.stdout
    assert (hermes_home / "profiles" / "x" / "output-help.txt").is_file()  # remembered in the profile's folder
    again = hermes("-p", "x", "--help")
    assert again.stdout == first.stdout
    assert hermes("-p").returncode == 2  # no name: click's usage error


def test_only_the_roots_option_is_a_profile(hermes, hermes_home):
    result = hermes("run", "-p", "x")  # a command's arguments are its own (hermes-agent scans them too)
    assert result.returncode == 2 and "No such option '-p'" in result.stderr
    assert not (hermes_home / "profiles").exists()


def test_default_from_a_profiles_own_folder_is_one_line_not_a_guess(hermes, hermes_home):
    assert hermes("profile", "create", "inner").returncode == 0
    inside = {"HERMES_HOME": str(hermes_home / "profiles" / "inner")}  # as a process of the profile's sees it
    assert json.loads(hermes("profile", "show", "--json", env=inside).stdout)["name"] == "inner"
    result = hermes("-p", "default", "config", "get", "model", env=inside)
    assert result.returncode == 1 and result.stderr == ("hermes: error: HERMES_HOME is profile 'inner''s folder: "
                                                        "unset it to run as default\n")


def test_an_alias_is_a_command_that_runs_as_the_profile(hermes, hermes_home, tmp_path):
    bin_dir = tmp_path / "home" / ".local" / "bin"
    env = {"HOME": str(tmp_path / "home"), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    made = hermes("profile", "create", "coder", "--alias", env=env)
    assert made.returncode == 0 and f"`coder ...` runs `hermes -p coder ...` ({bin_dir / 'coder'})" in made.stdout
    assert hermes("-p", "coder", "config", "set", "model", "m-coder").returncode == 0
    ran = subprocess.run([str(bin_dir / "coder"), "config", "get", "model"], capture_output=True, text=True,
                         env={**os.environ, "HERMES_HOME": str(hermes_home), **env}, timeout=60)
    assert ran.returncode == 0 and ran.stdout.strip() == "m-coder", ran.stderr
    assert json.loads(hermes("profile", "show", "coder", "--json", env=env).stdout)["aliases"] == ["coder"]

    (bin_dir / "taken").write_text("#!/bin/sh\necho mine\n")  # a command of the user's is never overwritten
    (bin_dir / "taken").chmod(0o755)
    refused = hermes("profile", "alias", "coder", "--name", "taken", env=env)
    assert refused.returncode == 1 and "a command of that name is there already" in refused.stderr
    assert (bin_dir / "taken").read_text() == "#!/bin/sh\necho mine\n"
    assert hermes("profile", "alias", "coder", "--name", "kodr", env=env).returncode == 0

    assert hermes("profile", "rename", "coder", "writer", env=env).returncode == 0  # the aliases follow
    assert sorted(p.name for p in bin_dir.iterdir()) == ["kodr", "taken", "writer"]
    assert "-p writer " in (bin_dir / "kodr").read_text()
    assert hermes("profile", "delete", "writer", "-y", env=env).returncode == 0
    assert sorted(p.name for p in bin_dir.iterdir()) == ["taken"]
    nothing = hermes("profile", "alias", "default", "--remove", env=env)
    assert nothing.returncode == 1 and "no alias of profile 'default' to remove" in nothing.stderr


def test_export_and_import_move_a_profile_without_its_keys_and_refuse_a_hostile_archive(hermes, hermes_home, tmp_path):
    import io
    import tarfile

    assert hermes("profile", "create", "coder").returncode == 0
    folder = hermes_home / "profiles" / "coder"
    (folder / "config.yaml").write_text("model: o3\n")
    (folder / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    (folder / "memories").mkdir()
    (folder / "memories" / "MEMORY.md").write_text("likes tabs\n")
    (folder / "output-help.txt").write_text("cached\n")
    with sqlite3.connect(folder / "state.db") as db:
        db.execute("create table t (x)")
        db.execute("insert into t values ('kept')")
    db.close()

    out = hermes("profile", "export", "coder", "-o", tmp_path)
    archive = tmp_path / "coder.tar.gz"
    assert out.returncode == 0 and f"to {archive}" in out.stdout, out.stderr
    with tarfile.open(archive) as opened:
        names = set(opened.getnames())
    assert {"coder", "coder/config.yaml", "coder/memories/MEMORY.md", "coder/state.db"} <= names
    assert not {"coder/.env", "coder/output-help.txt"} & names  # its key stays here; a cache means nothing there
    again = hermes("profile", "export", "coder", "-o", archive)
    assert again.returncode == 1 and "is there already" in again.stderr

    taken = hermes("profile", "import", archive)  # the archive's folder names it: there already
    assert taken.returncode == 1 and "profile 'coder' is there already" in taken.stderr
    taken = hermes("profile", "import", archive, "--name", "Laptop")
    assert taken.returncode == 0, taken.stderr
    laptop = hermes_home / "profiles" / "laptop"
    assert (laptop / "memories" / "MEMORY.md").read_text() == "likes tabs\n" and not (laptop / ".env").exists()
    with sqlite3.connect(laptop / "state.db") as db:
        assert db.execute("select x from t").fetchall() == [("kept",)]
    db.close()
    assert hermes("-p", "laptop", "config", "get", "model").stdout.strip() == "o3"

    def hostile(name: str, *members) -> Path:
        path = tmp_path / name
        with tarfile.open(path, "w:gz") as made:
            for member, data in members:
                made.addfile(member, io.BytesIO(data) if data is not None else None)
        return path

    def file(name: str, data: bytes = b"x"):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        return info, data

    link = tarfile.TarInfo("evil/link")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    for archive_path, said in ((hostile("a.tar.gz", file("evil/ok"), file("evil/../../escaped")), "points outside it"),
                               (hostile("b.tar.gz", file("evil/ok"), (link, None)), "is a link or device"),
                               (hostile("c.tar.gz", file("one/a"), file("two/b")), "holds one folder; this holds 2")):
        refused = hermes("profile", "import", archive_path)
        assert refused.returncode == 1 and said in refused.stderr and "Traceback" not in refused.stderr, refused.stderr
    assert not (tmp_path / "escaped").exists() and not (hermes_home / "escaped").exists()
    assert sorted(p.name for p in (hermes_home / "profiles").iterdir()) == ["coder", "laptop"]  # nothing half made
    (tmp_path / "no.tar.gz").write_text("not an archive")
    bad = hermes("profile", "import", tmp_path / "no.tar.gz")
    assert bad.returncode == 1 and "no .tar.gz archive" in bad.stderr


def test_a_chat_says_its_profile(hermes, hermes_home, wire_server):
    from tests.conftest import no_titles

    assert hermes("profile", "create", "coder").returncode == 0
    folder = hermes_home / "profiles" / "coder"
    no_titles(folder)
    out = hermes("-p", "coder", "chat", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions",
                 "-m", "gpt-test", env={"OPENAI_API_KEY": "sk-test"}, input="/profile\n/status\n/exit\n")
    assert out.returncode == 0, out.stderr
    assert f"profile coder: {folder}; `hermes -p NAME chat` chats as another" in out.stdout
    assert f"data folder {folder} (profile coder)" in out.stdout
    assert wire_server.requests == []  # no model was asked


def test_a_profile_whose_gateway_runs_is_neither_renamed_nor_deleted_under_it(hermes, hermes_home):
    import fcntl

    assert hermes("profile", "create", "bot").returncode == 0
    lock = hermes_home / "profiles" / "bot" / "gateway" / "gateway.lock"
    lock.parent.mkdir(parents=True)
    with open(lock, "a+") as held:  # as a running `hermes -p bot gateway run` holds it
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4242")
        held.flush()
        for args, said in ((["rename", "bot", "robot"], "profile 'bot' not renamed: its gateway runs (pid 4242)"),
                           (["delete", "bot", "-y"], "profile 'bot' not deleted: its gateway runs (pid 4242)")):
            refused = hermes("profile", *args)
            assert refused.returncode == 1 and said in refused.stderr, refused.stderr
        assert (hermes_home / "profiles" / "bot").is_dir()
    assert hermes("profile", "delete", "bot", "-y").returncode == 0  # stopped: it goes


def test_doctor_says_the_profile_and_a_kept_one_that_is_gone(hermes, hermes_home):
    def check() -> dict:
        rows = json.loads(hermes("doctor", "--offline", "--json").stdout)
        return next(row for row in rows if row["name"] == "profile")

    assert check() == {"name": "profile", "status": "ok", "detail": f"default ({hermes_home})"}
    assert hermes("profile", "create", "aa").returncode == 0
    assert check()["detail"] == f"default ({hermes_home}); the others: aa"
    (hermes_home / "active_profile").write_text("zz\n")
    gone = check()
    assert gone["status"] == "warn" and "the active profile 'zz' (`profile use`) is gone" in gone["detail"]
