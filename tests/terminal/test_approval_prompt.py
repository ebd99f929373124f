"""The approval question in `hermes chat`, in a pseudo-terminal: the command
shown once, readably; once / session / always / deny; Ctrl+C denies the call
and stops the turn, and the next line goes to the chat, not to the question."""

from __future__ import annotations

import json
import os

import yaml

from tests.conftest import ROOT, hermes_command
from tests.terminal.pty_session import PtySession


def _chat(tmp_path, steps):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    env = {**os.environ, "HERMES_HOME": str(home), "TERM": "dumb",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
    argv = [*hermes_command(), "chat", "--api-mode", "scripted", "--base-url", str(script), "-t", "terminal"]
    return PtySession(argv, env, cwd=tmp_path), home


def test_ctrl_c_at_the_approval_question_denies_and_stops_the_turn(tmp_path):
    marker = tmp_path / "ran.txt"
    command = f"python3 -c \"open('{marker}', 'w').write('ran')\""  # inline code: it needs approval
    chat, _ = _chat(tmp_path, [{"tool_calls": [["terminal", {"command": command}]]}, "never reached",
                               "second turn answered"])
    try:
        chat.expect("you> ")
        chat.send("do it\n")
        shown = chat.expect("[d]eny")
        question = shown[shown.rindex("Dangerous command"):]
        assert question.count(command) == 1 and "{'command'" not in question  # once, not as a dict
        chat.ctrl_c()
        chat.expect("(interrupted)")
        chat.expect("you> ")
        assert not marker.exists()
        chat.send("and now?\n")  # goes to the chat, not to the question
        chat.expect("never reached")
        chat.send("/quit\n")
        assert chat.close() == 0
    finally:
        if chat.proc.poll() is None:
            chat.close()
    assert not marker.exists()


def test_the_choices_once_session_always_and_deny(tmp_path):
    call = {"tool_calls": [["terminal", {"command": "python3 -c 'print(6 * 7)'"}]]}
    chat, home = _chat(tmp_path, [call, "first", call, "second", call, "third", call, "fourth"])
    try:
        chat.expect("you> ")
        chat.send("one\n")
        chat.expect("[d]eny")
        chat.send("d\n")  # deny: the model reads that it was refused
        chat.expect("first")
        chat.send("two\n")
        chat.expect("[d]eny")
        chat.send("s\n")  # session: this rule is allowed for the rest of the chat
        chat.expect("second")
        before = chat.seen.count("[d]eny")
        chat.send("three\n")
        chat.expect("third")
        assert chat.seen.count("[d]eny") == before  # not asked again
        chat.send("/quit\n")
        assert chat.close() == 0
    finally:
        if chat.proc.poll() is None:
            chat.close()
    chat, home = _chat(tmp_path, [call, "always saved"])
    try:
        chat.expect("you> ")
        chat.send("four\n")
        chat.expect("[d]eny")
        chat.send("a\n")
        chat.expect("always saved")
        chat.send("/quit\n")
        chat.close()
    finally:
        if chat.proc.poll() is None:
            chat.close()
    assert yaml.safe_load((home / "config.yaml").read_text())["command_allowlist"] == ["inline_code"]


def test_chat_commands_help_tools_model_usage_new_and_the_resume_line(tmp_path):
    chat, home = _chat(tmp_path, ["first answer", "in the new session"])
    try:
        chat.expect("you> ")
        chat.send("/help\n")
        helped = chat.expect("/exit, /quit")
        for name in ("/help", "/new", "/model", "/tools", "/usage", "/memory", "/compress"):  # and the plugins
            assert name in helped, helped
        chat.send("/tools\n")
        chat.expect("terminal  ")
        chat.send("/usage\n")
        chat.expect("no model calls yet")
        chat.send("hello\n")
        chat.expect("first answer")
        chat.send("/usage\n")
        chat.expect("tokens in this chat: input 10")
        first = chat.seen.split("session ", 1)[1].split(" ", 1)[0]
        chat.send("/new\n")
        chat.expect("new session ")
        chat.expect("you> ")
        chat.send("again\n")
        chat.expect("in the new session")
        chat.send("/model other-model\n")  # the next turn runs on it (a scripted provider starts its script over)
        chat.expect("model: scripted:other-model")
        chat.send("/exit\n")
        assert chat.close() == 0
        assert "resume it with: hermes chat --resume " in chat.seen
        assert first.strip() and first not in chat.seen.rsplit("resume it with", 1)[1]  # the new session's id
    finally:
        if chat.proc.poll() is None:
            chat.close()


def test_resuming_a_chat_shows_its_first_prompt_and_last_exchanges(hermes, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["Use a trellis for the beans.", "Every two days."]))
    model = ("--api-mode", "scripted", "--base-url", script)
    out = hermes("chat", *model, input="How do I grow climbing beans?\nHow often to water?\n/exit\n")
    assert out.returncode == 0
    session = out.stderr.split("resume it with: hermes chat --resume ", 1)[1].split()[0]
    out = hermes("chat", *model, "--resume", session, input="/exit\n")
    lines = out.stderr.splitlines()
    recap = lines[lines.index(next(l for l in lines if l.startswith("resuming: "))):][:5]
    assert recap == ["resuming: How do I grow climbing beans? (4 messages)",
                     "  you: How do I grow climbing beans?", "  hermes: Use a trellis for the beans.",
                     "  you: How often to water?", "  hermes: Every two days."]
