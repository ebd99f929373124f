"""`/rollback` in `hermes chat`, in a pseudo-terminal: the checkpoints of the folder, listed, diffed, restored."""

from __future__ import annotations

import shutil

import pytest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed (the test setup script)")


def test_rollback_in_a_chat_lists_and_restores(terminal, tmp_path, hermes_home):
    (hermes_home / "config.yaml").write_text("checkpoints:\n  enabled: true\n")
    (tmp_path / "a.txt").write_text("one\n")
    chat, _ = terminal([{"tool_calls": [["write_file", {"path": "a.txt", "content": "two\n"}]]}, "written"])
    chat.expect("hermes> ")
    chat.line("change it")
    chat.expect("written")
    chat.line("/rollback")
    chat.expect("before write_file: a.txt")
    chat.line("/rollback diff 1")
    chat.expect("+two")
    assert "hermes-home" not in chat.seen  # the data folder inside it is not snapshotted
    chat.line("/rollback 1")
    chat.expect("/undo takes the last exchange back")
    chat.line("/exit")
    assert chat.close() == 0
    assert (tmp_path / "a.txt").read_text() == "one\n"
