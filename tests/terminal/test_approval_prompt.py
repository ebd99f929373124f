"""The approval question in `hermes chat` (and in `hermes run` with its prompt on a pipe), in a pseudo-terminal:
the command shown once, readably; once / session / always / deny; Ctrl+C denies the call and stops the turn, and
the next line goes to the chat, not to the question."""

from __future__ import annotations

import json

import pytest
import yaml


def test_ctrl_c_at_the_approval_question_denies_and_stops_the_turn(terminal, tmp_path):
    marker = tmp_path / "ran.txt"
    command = f"python3 -c \"open('{marker}', 'w').write('ran')\""  # inline code: it needs approval
    chat, _ = terminal([{"tool_calls": [["terminal", {"command": command}]]}, "never reached",
                        "second turn answered"], "-t", "terminal")
    chat.expect("hermes> ")
    chat.line("do it")
    shown = chat.expect("[d]eny")
    question = shown[shown.rindex("Dangerous command"):]
    assert question.count(command) == 1 and "{'command'" not in question  # once, not as a dict
    chat.ctrl_c()
    chat.expect("(interrupted)")
    chat.expect("hermes> ")
    assert chat.seen.count("(interrupted)") == 1 and "terminal interrupted (" in chat.seen  # said once
    assert "not run: the user interrupted the turn" in chat.seen  # and the tool line says it never ran
    assert not marker.exists()
    chat.line("and now?")  # goes to the chat, not to the question
    chat.expect("never reached")
    chat.line("/quit")
    assert chat.close() == 0
    assert not marker.exists()


@pytest.mark.parametrize("typed, ran", [("o", True), ("", False)])
def test_with_the_prompt_on_a_pipe_the_question_is_asked_at_the_terminal(tmp_path, hermes_home, typed, ran):
    """`echo ... | hermes run` at a terminal: stdin holds the prompt, so the approval question is read from the
    terminal itself (as sudo asks); before, nobody was asked and the call was refused."""
    import os
    import shlex

    import pexpect

    from tests.conftest import ROOT, hermes_command

    marker = tmp_path / "ran.txt"
    command = f"python3 -c \"open('{marker}', 'w').write('ran')\""  # inline code: it needs approval
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["terminal", {"command": command}]]}, "answered"]))
    hermes = " ".join(map(shlex.quote, [*hermes_command(), "run", "--api-mode", "scripted", "--base-url",
                                        str(script), "-t", "terminal"]))
    env = {**os.environ, "HERMES_HOME": str(hermes_home), "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn("/bin/sh", ["-c", f"echo 'do it' | {hermes}"], env=env, cwd=str(tmp_path),
                          encoding="utf-8", timeout=30)
    try:
        child.expect_exact("[d]eny")
        child.send(typed + "\r")
        child.expect_exact("answered")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0 and marker.exists() == ran



def test_a_question_left_alone_is_denied_after_approvals_timeout(terminal, tmp_path, hermes_home):
    """hermes-agent's approvals.timeout (60 s): a run waiting at the question while nobody is there denied
    nothing and waited forever. Now the call is denied after it, said, and the turn goes on."""
    marker = tmp_path / "ran.txt"
    (hermes_home / "config.yaml").write_text("approvals:\n  timeout: 1\n")
    command = f"python3 -c \"open('{marker}', 'w').write('ran')\""  # inline code: it needs approval
    chat, _ = terminal([{"tool_calls": [["terminal", {"command": command}]]}, "the model heard no"], "-t", "terminal")
    chat.expect("hermes> ")
    chat.line("do it")
    chat.expect("(Enter: deny, Ctrl+C: stop the turn, 1 s: deny)")
    chat.expect("no answer within 1 s: denied (approvals.timeout)")
    chat.expect("the model heard no")
    chat.expect("hermes> ")
    chat.line("/quit")
    assert chat.close() == 0
    assert not marker.exists()


def test_a_clarifying_question_left_alone_lets_the_model_decide(terminal, hermes_home, hermes):
    """hermes-agent's agent.clarify_timeout: the model's question waited forever for an answer; now, after it,
    the model reads that nobody answered and decides."""
    (hermes_home / "config.yaml").write_text("agent:\n  clarify_timeout: 1\n")
    ask = {"tool_calls": [["clarify", {"question": "Tabs or spaces?", "choices": ["tabs", "spaces"]}]]}
    chat, _ = terminal([ask, "spaces, then"])
    chat.expect("hermes> ")
    chat.line("indent it")
    chat.expect("2. spaces")
    chat.expect("no answer within 1 s: the model decides (agent.clarify_timeout)")
    chat.expect("spaces, then")
    chat.line("/quit")
    assert chat.close() == 0
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    [result] = [m["content"] for m in json.loads(hermes("sessions", "show", session, "--json").stdout)["messages"]
                if m["role"] == "tool"]
    assert '"answer": null' in result and "Proceed with your best judgement" in result


def test_the_choices_once_session_always_and_deny(terminal, tmp_path):
    call = {"tool_calls": [["terminal", {"command": "python3 -c 'print(6 * 7)'"}]]}
    chat, home = terminal([call, "first", call, "second", call, "third", call, "fourth"], "-t", "terminal")
    chat.expect("hermes> ")
    chat.line("one")
    chat.expect("[d]eny")
    chat.line("d")  # deny: the model reads that it was refused
    chat.expect("first")
    chat.line("two")
    chat.expect("[d]eny")
    chat.line("s")  # session: this rule is allowed for the rest of the chat
    chat.expect("second")
    before = chat.seen.count("[d]eny")
    chat.line("three")
    chat.expect("third")
    assert chat.seen.count("[d]eny") == before  # not asked again
    chat.line("/quit")
    assert chat.close() == 0
    chat, home = terminal([call, "always saved"], "-t", "terminal")
    chat.expect("hermes> ")
    chat.line("four")
    chat.expect("[d]eny")
    chat.line("a")
    chat.expect("always saved")
    chat.line("/quit")
    chat.close()
    assert yaml.safe_load((home / "config.yaml").read_text())["command_allowlist"] == ["inline_code"]


def test_a_script_outside_the_sandbox_is_shown_as_written_and_session_allows_the_next(terminal, tmp_path,
                                                                                      hermes_home):
    (hermes_home / "config.yaml").write_text("sandbox:\n  mode: off\n")
    code = "from hermes_tools import terminal\nprint('sum', 6 * 7)"
    call = {"tool_calls": [["execute_code", {"code": code}]]}
    chat, _ = terminal([call, "first", call, "second"], "-t", "code_execution,terminal")
    chat.expect("hermes> ")
    chat.line("one")
    shown = chat.expect("[d]eny")
    question = shown[shown.rindex("A Python script"):]
    assert question.count("print('sum', 6 * 7)") == 1 and "{'code'" not in question and '"code"' not in question
    chat.line("s")
    chat.expect("first")
    before = chat.seen.count("[d]eny")
    chat.line("two")
    chat.expect("second")
    assert chat.seen.count("[d]eny") == before  # the session's answer holds for the next script
    chat.line("/quit")
    assert chat.close() == 0


def test_chat_commands_help_tools_model_usage_new_and_the_resume_line(terminal, tmp_path):
    chat, home = terminal(["first answer", "in the new session"], "-t", "terminal,todo")
    chat.expect("hermes> ")
    chat.line("/help")
    helped = chat.expect("/exit, /quit")
    for name in ("/help", "/new", "/model", "/tools", "/usage", "/memory", "/compress"):  # and the plugins
        assert name in helped, helped
    chat.line("/tools")
    chat.expect("todo      Your task list")  # a column, under "terminal  Run ..."
    chat.line("/usage")
    chat.expect("no model calls yet")
    chat.line("hello")
    chat.expect("first answer")
    chat.line("/usage")
    chat.expect("tokens in this chat: input 10")
    first = chat.seen.split("session ", 1)[1].split(" ", 1)[0]
    chat.line("/new")
    chat.expect("new session ")
    chat.expect("hermes> ")
    chat.line("again")
    chat.expect("in the new session")
    chat.line("/model other-model")  # the next turn runs on it (a scripted provider starts its script over)
    chat.expect("model: scripted:other-model")
    chat.line("/exit")
    assert chat.close() == 0
    assert "resume it with: hermes chat --resume " in chat.seen
    assert first.strip() and first not in chat.seen.rsplit("resume it with", 1)[1]  # the new session's id


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
    assert hermes("sessions", "title", session, "Beans").returncode == 0
    out = hermes("chat", *model, "--resume", session, input="/exit\n")
    assert "resuming: Beans (4 messages)" in out.stderr.splitlines()  # the title, when it has one
