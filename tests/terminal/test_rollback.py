"""`/rollback` in `hermes chat`, in a pseudo-terminal: the checkpoints of the folder, listed, diffed, restored."""

from __future__ import annotations

import shutil

import pytest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed (the test setup script)")


def test_rollback_in_a_chat_lists_and_restores(terminal, tmp_path, hermes_home):
    (hermes_home / "config.yaml").write_text("checkpoints:\n  enabled: true\n")
    (tmp_path / "a.txt").write_text("one\n")
    chat, _ = terminal(["hi there", {"tool_calls": [["write_file", {"path": "a.txt", "content": "two\n"}]]},
                        "written", "what now?"])
    chat.expect("hermes> ")
    chat.line("hello")
    chat.expect("hi there")
    chat.line("change it")
    chat.expect("written")
    chat.line("/rollback")
    chat.expect("before write_file: a.txt")
    chat.line("/rollback diff 1")
    chat.expect("+two")
    assert "hermes-home" not in chat.seen  # the data folder inside it is not snapshotted
    chat.line("/rollback 1")
    # as hermes-agent's: the conversation goes back to before that turn too, so the model does not think a.txt says two
    chat.expect("The conversation is back to before that turn too (4 messages taken back; session ")
    chat.line("/history")
    chat.expect("2 messages (clipped")  # hello, hi there
    chat.line("and now?")
    chat.expect("what now?")
    chat.line("/history")
    chat.expect("4 messages (clipped")
    chat.line("/exit")
    assert chat.close() == 0
    assert (tmp_path / "a.txt").read_text() == "one\n"
    assert "change it" not in chat.seen.rsplit("4 messages (clipped", 1)[1].split("hermes>")[0]
