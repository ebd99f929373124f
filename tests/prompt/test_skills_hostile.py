"""Skills that cannot take the host down (issue 22, item 4), through the CLI:
front matter that is a YAML alias bomb, a SKILL.md that is a link to
/dev/zero, and installs of a folder with a symlink loop, with a named pipe,
and under a name that climbs out of the skills folder."""

from __future__ import annotations

import os
import time

from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)
from tests.prompt.test_skills_cli import MODEL, skill

BOMB = "---\nname: bomb\na: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9)) + "description: boom\n---\nbody\n"


def _project(tmp_path):
    folder = tmp_path / "project" / ".agents" / "skills"
    folder.mkdir(parents=True)
    skill(folder, "fine", "A skill that is fine.", "Do the fine thing.")
    return folder


def test_an_alias_bomb_and_a_link_to_dev_zero_are_left_out_quickly(hermes, wire_server, cli_env, tmp_path):  # noqa: F811
    folder = _project(tmp_path)
    (folder / "bomb").mkdir()
    (folder / "bomb" / "SKILL.md").write_text(BOMB)
    (folder / "zero").mkdir()
    os.symlink("/dev/zero", folder / "zero" / "SKILL.md")
    cwd = tmp_path / "project"
    started = time.monotonic()
    listed = hermes("skills", "list", cwd=cwd, timeout=30)
    assert listed.returncode == 0 and time.monotonic() - started < 15, listed.stderr
    assert "fine" in listed.stdout and "zero" not in listed.stdout
    assert "skill zero left out" in listed.stderr and "not a regular file" in listed.stderr
    assert "boom" in listed.stdout or "bomb" in listed.stdout  # read without its aliases: a name, nothing expanded
    wire_server.push(reply("done"))
    started = time.monotonic()
    ran = hermes("run", "--base-url", wire_server.openai_url, *MODEL, "hi", env={**cli_env, "OPENAI_API_KEY": "sk"},
                 cwd=cwd, timeout=30)
    assert ran.returncode == 0 and time.monotonic() - started < 15, ran.stderr
    assert "A skill that is fine." in wire_server.requests[0].body["messages"][0]["content"]


def test_installs_that_would_loop_hang_or_climb_out_install_nothing(hermes, hermes_home, tmp_path):
    looped = skill(tmp_path / "src", "looped", "A skill with a loop.", "Body.")
    os.symlink(looped, looped / "again")
    done = hermes("skills", "install", str(looped))
    assert done.returncode != 0 and "again is a symlink" in done.stderr and "Traceback" not in done.stderr
    assert not (hermes_home / "skills" / "looped").exists()
    piped = skill(tmp_path / "src", "piped", "A skill with a pipe.", "Body.")
    os.mkfifo(piped / "fifo")
    done = hermes("skills", "install", str(piped), timeout=30)
    assert done.returncode != 0 and "not a regular file" in done.stderr
    again = hermes("skills", "install", str(piped), timeout=30)
    assert "installed already" not in again.stderr  # the failed install left nothing behind
    plain = skill(tmp_path / "src", "plain", "A plain skill.", "Body.")
    done = hermes("skills", "install", str(plain), "--name", "../plugins")
    assert done.returncode != 0 and "is not a skill name" in done.stderr
    assert not (hermes_home / "plugins").exists()
    assert [p.name for p in (hermes_home / "skills").iterdir()] == [] if (hermes_home / "skills").exists() else True
    ok = hermes("skills", "install", str(plain))
    assert ok.returncode == 0 and (hermes_home / "skills" / "plain" / "SKILL.md").is_file()
