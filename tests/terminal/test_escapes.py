"""Text from a model, a tool or a stored session cannot drive the terminal:
on a terminal its control sequences are shown (``^[``), not obeyed (no OSC 52
clipboard write, no window title, no clear-screen); a pipe and ``--json``
keep the exact text."""

from __future__ import annotations

import json
import os
import subprocess

import pexpect
import pytest

from plugins.text import printable
from tests.conftest import ROOT, hermes_command

ESC = "\x1b"
HOSTILE = f"plain {ESC}]52;c;ZXZpbA=={chr(7)} {ESC}]0;pwned{chr(7)} {ESC}[2J {chr(0x9b)}H done"


@pytest.mark.parametrize("text, shown", [
    (f"{ESC}]52;c;ZXZpbA=={chr(7)}", "^[]52;c;ZXZpbA==^G"),  # OSC 52: a clipboard write
    (f"{ESC}]0;title{ESC}\\", "^[]0;title^[\\"),  # a window title, ended by ST
    (f"{ESC}[2J{ESC}[H", "^[[2J^[[H"),  # clear the screen, cursor home
    (f"{chr(0x9b)}2J", "\\x9b2J"),  # the one-byte CSI
    ("back\bspace\x7f", "back^Hspace^?"),
    ("line\r\nnext\rover", "line\nnext^Mover"),  # a lone CR would overwrite the line
    ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
    ("héllo ✓", "héllo ✓"),
])
def test_control_characters_are_shown_not_obeyed(text, shown):
    assert printable(text) == shown


def test_a_pipe_gets_the_exact_text(tmp_path):
    with open(tmp_path / "out", "w") as f:
        assert printable(HOSTILE, f) == HOSTILE


def _obeyable(seen: str) -> list:
    """The hostile sequences that reached the terminal raw (hermes' own colour and spinner may)."""
    return [s for s in (ESC + "]52", ESC + "]0;", ESC + "[2J", chr(0x9b)) if s in seen]


def _env(hermes_home) -> dict:
    return {**os.environ, "HERMES_HOME": str(hermes_home), "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}


def _on_a_terminal(args: list, hermes_home, cwd) -> str:
    command = hermes_command() + args
    child = pexpect.spawn(command[0], command[1:], env=_env(hermes_home), cwd=str(cwd), encoding="utf-8",
                          timeout=30, dimensions=(40, 200))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return child.before


def test_run_sessions_list_and_show_neutralise_on_a_terminal_and_keep_json_exact(tmp_path, hermes_home, hermes):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([HOSTILE]))
    seen = _on_a_terminal(["run", "--api-mode", "scripted", "--base-url", str(script), f"say {ESC}[2J"],
                          hermes_home, tmp_path)
    assert not _obeyable(seen), repr(seen)
    assert "^[]52;c;ZXZpbA==^G" in seen and "^[[2J" in seen and "\\x9bH done" in seen
    listed = json.loads(hermes("sessions", "list", "--json").stdout)
    sid = listed[0]["id"]
    shown = _on_a_terminal(["sessions", "show", sid], hermes_home, tmp_path)
    assert not _obeyable(shown) and "^[]52;c;ZXZpbA==^G" in shown and "say ^[[2J" in shown, repr(shown)
    rows = _on_a_terminal(["sessions", "list"], hermes_home, tmp_path)
    assert sid in rows and not _obeyable(rows)
    exact = json.loads(hermes("sessions", "show", sid, "--json").stdout)
    assert [m["content"] for m in exact["messages"]] == [f"say {ESC}[2J", HOSTILE]  # the store keeps it as said
    piped = subprocess.run(hermes_command() + ["run", "--api-mode", "scripted", "--base-url", str(script), "again"],
                           capture_output=True, text=True, env=_env(hermes_home), cwd=tmp_path, timeout=60)
    assert piped.stdout == HOSTILE + "\n"  # not a terminal: the exact text, for scripts


def test_chat_streams_and_recaps_neutralised(terminal, hermes):
    chat, _ = terminal([HOSTILE])
    chat.expect("hermes> ")
    chat.line("hi")
    chat.expect("H done")
    chat.expect("hermes> ")
    chat.keys("\x04")
    assert chat.close() == 0
    assert not _obeyable(chat.seen) and "^[]52;c;ZXZpbA==^G" in chat.seen, repr(chat.seen)
