"""A damaged state.db: one clear error naming the file, nothing lost, and a
way to move it aside and start fresh."""

from __future__ import annotations


import click
import pytest
from click.testing import CliRunner

import plugins.sessions as plugin
from hermes.host.config import Config
from plugins.sessions.salvage import move_aside
from plugins.sessions.store import SessionStore, StoreCorrupt


def _garbage(path):
    path.write_bytes(b"this is my shopping list, not a database\n" * 50)
    return path.read_bytes()


def _malformed(home):
    """A real session database whose data pages were overwritten."""
    s = SessionStore.for_data_dir(home)
    for i in range(40):
        s.append(f"s{i % 4}", [{"role": "user", "content": f"message {i} " + "x" * 900}])
    s.close()  # the last connection checkpoints the WAL into the file
    path = home / "state.db"
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    for start in range(2 * page, len(data), page):
        data[start + 8 : start + 200] = b"\xde\xad\xbe\xef" * 48  # trash each page body, keep page 1
    path.write_bytes(bytes(data))
    return bytes(data)


def test_not_a_database_is_one_clear_error(home):
    path = home / "state.db"
    before = _garbage(path)
    s = SessionStore.for_data_dir(home)
    with pytest.raises(StoreCorrupt) as err:
        s.load("x")
    msg = str(err.value)
    assert str(path) in msg and "not a SQLite database" in msg and "hermes sessions repair" in msg
    assert "\n" not in msg
    with pytest.raises(StoreCorrupt):
        s.append("x", [{"role": "user", "content": "hi"}])
    assert path.read_bytes() == before  # nothing written over it


def test_malformed_database_is_one_clear_error(home):
    before = _malformed(home)
    s = SessionStore.for_data_dir(home)
    with pytest.raises(StoreCorrupt) as err:
        for i in range(4):
            s.load(f"s{i}")
        s.search("message")
    assert str(home / "state.db") in str(err.value)
    assert s.check() != []
    s.close()
    assert (home / "state.db").read_bytes() == before


def test_hooks_raise_the_clear_error_too(home):
    _garbage(home / "state.db")
    agent = type("A", (), {"config": Config()})()
    with pytest.raises(StoreCorrupt):
        plugin.append_messages("s", [{"role": "user", "content": "x"}], agent)


def test_move_aside_keeps_the_wal_with_its_database(home, tmp_path):
    """A crash leaves recent commits in state.db-wal: they move along, under
    the name SQLite looks for, so the moved file still opens whole."""
    import shutil

    s = SessionStore.for_data_dir(home)
    s.append("s", [{"role": "user", "content": "kept"}])
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    for name in ("state.db", "state.db-wal"):  # a snapshot while the writer is still open
        shutil.copy(home / name, crashed / name)
    s.close()
    target = move_aside(crashed / "state.db")
    assert not (crashed / "state.db").exists() and not (crashed / "state.db-wal").exists()
    assert target.name.startswith("state.db.corrupt-")
    assert (crashed / (target.name + "-wal")).exists()
    old = SessionStore(target)
    assert old.load("s") == [{"role": "user", "content": "kept"}]
    old.close()
    (crashed / "state.db").write_bytes(b"again")
    assert move_aside(crashed / "state.db") != target  # a second move never overwrites the first


def _cli():
    group = click.Group("hermes")
    plugin.register_commands(group, Config())
    return group


@pytest.mark.parametrize("damage", ["garbage", "malformed"])
def test_repair_moves_aside_and_starts_fresh(home, damage):
    path = home / "state.db"
    before = _garbage(path) if damage == "garbage" else _malformed(home)
    runner = CliRunner()

    declined = runner.invoke(_cli(), ["sessions", "repair"], input="n\n")
    assert declined.exit_code == 1
    assert "damaged" in declined.output
    assert path.read_bytes() == before
    unanswered = runner.invoke(_cli(), ["sessions", "repair"], input="")  # cron, </dev/null
    assert unanswered.exit_code == 1 and "was not moved aside: no answer came (end of input); pass --yes" in \
        unanswered.output and path.read_bytes() == before

    listed = runner.invoke(_cli(), ["sessions", "list"])
    if damage == "garbage":  # malformed pages may not be on the listing's path
        assert listed.exit_code == 1
        assert "hermes sessions repair" in listed.output and "Traceback" not in listed.output

    done = runner.invoke(_cli(), ["sessions", "repair", "--yes"])
    assert done.exit_code == 0, done.output
    (aside,) = home.glob("state.db.corrupt-*")
    assert aside.read_bytes() == before  # the old file is kept, byte for byte
    assert str(aside) in done.output

    plugin.close_stores()
    fresh = runner.invoke(_cli(), ["sessions", "list"])
    assert fresh.exit_code == 0 and "No sessions yet." in fresh.output
    ok = runner.invoke(_cli(), ["sessions", "repair"])
    assert ok.exit_code == 0 and "ok" in ok.output
    assert list(home.glob("state.db.corrupt-*")) == [aside]


def test_repair_asks_on_a_terminal_and_says_what_to_pass_when_nobody_answers(home, hermes):
    """On a terminal it asks (no: nothing moves); with no input it said click's bare "Aborted!" after a prompt
    nobody saw, and now one line with the flag to pass."""
    import os

    import pexpect

    from tests.conftest import hermes_command

    path = home / "state.db"
    before = _garbage(path)
    command = hermes_command()
    for answer, code in (("n", 1), ("\x03", 130)):  # no; Ctrl+C (was "Aborted!" and 1, as a no)
        child = pexpect.spawn(command[0], [*command[1:], "sessions", "repair"], encoding="utf-8", timeout=60,
                              env={**os.environ, "HERMES_HOME": str(home)})
        child.expect(r"Move it aside and start a fresh session database\? \[y/N\]: ")
        child.sendintr() if answer == "\x03" else child.sendline(answer)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == code and path.read_bytes() == before
        assert ("hermes: interrupted" in child.before) == (code == 130), child.before
    out = hermes("sessions", "repair", input="")
    assert out.returncode == 1 and "Aborted" not in out.stderr
    assert out.stderr.strip() == f"hermes: error: {path} was not moved aside: no answer came (end of input); pass --yes"
    assert path.read_bytes() == before


def _is_subsequence(part, whole) -> bool:
    it = iter(whole)
    return all(any(m == w for w in it) for m in part)


def test_repair_salvages_the_readable_sessions(home):
    s = SessionStore.for_data_dir(home)
    original = {}
    for k in range(6):
        msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"s{k} message {i} " + "w" * 1500}
                for i in range(12)]
        s.append(f"s{k}", msgs)
        original[f"s{k}"] = msgs
    s.close()
    path = home / "state.db"
    data = bytearray(path.read_bytes())
    bad = int(len(data) // 4096 * 0.6)  # one damaged page in the middle of the messages
    data[bad * 4096 + 8 : bad * 4096 + 1000] = b"\xff" * 992
    path.write_bytes(bytes(data))

    out = CliRunner().invoke(_cli(), ["sessions", "repair", "--yes"])
    assert out.exit_code == 0, out.output
    assert "recovered 6 session(s)" in out.output
    (aside,) = [p for p in home.glob("state.db.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]
    assert aside.read_bytes() == bytes(data)
    assert not aside.with_name(aside.name + "-shm").exists()

    plugin.close_stores()
    fresh = SessionStore.for_data_dir(home)
    assert fresh.check() == []
    whole = 0
    for sid, msgs in original.items():
        got = fresh.load(sid)
        assert got and _is_subsequence(got, msgs), sid
        whole += got == msgs
    assert whole >= 4
    assert fresh.message_count() >= 60
    assert len(fresh.search("message")) > 0  # the fresh file has its full-text index
    fresh.append("s0", [{"role": "user", "content": "after the repair"}])
    assert fresh.load("s0")[-1]["content"] == "after the repair"
    fresh.close()


def test_repair_salvages_a_truncated_file(home):
    # a copy or a full disk cut the file short: SQLite refuses to read any of it as it is
    s = SessionStore.for_data_dir(home)
    original = {}
    for k in range(6):
        msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"s{k} message {i} " + "w" * 1500}
                for i in range(8)]
        s.append(f"s{k}", msgs)
        original[f"s{k}"] = msgs
    s.close()
    path = home / "state.db"
    data = path.read_bytes()[: (path.stat().st_size // 4096) * 4096 * 2 // 3 // 4096 * 4096]
    path.write_bytes(data)

    listed = CliRunner().invoke(_cli(), ["sessions", "list"])
    assert listed.exit_code == 1 and "hermes sessions repair" in listed.output
    plugin.close_stores()
    out = CliRunner().invoke(_cli(), ["sessions", "repair", "--yes"])
    assert out.exit_code == 0, out.output
    assert "recovered" in out.output and "nothing could be recovered" not in out.output
    (aside,) = [p for p in home.glob("state.db.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]
    assert aside.read_bytes() == data  # kept as it was
    assert list(home.glob("*.salvage*")) == []  # the scratch copy is gone

    plugin.close_stores()
    fresh = SessionStore.for_data_dir(home)
    assert fresh.check() == []
    got = {sid: fresh.load(sid) for sid in original}
    assert sum(1 for sid, msgs in got.items() if msgs == original[sid]) >= 2  # the early sessions are whole
    assert all(_is_subsequence(msgs or [], original[sid]) for sid, msgs in got.items())
    fresh.close()
