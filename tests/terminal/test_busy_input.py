"""A line typed while chat's turn runs (hermes-agent's display.busy_input_mode, chat's /busy), in a pseudo-terminal:
it interrupts the turn and is the next message, waits for the turn's end, or reaches the model after its current
tool call; a command waits for the turn; nothing typed is lost, and the approval question still gets its answer."""

from __future__ import annotations

import json

from tests.terminal.test_chat_terminal import resume_id


def stored(hermes, seen: str) -> list:
    shown = json.loads(hermes("sessions", "show", resume_id(seen), "--json").stdout)["messages"]
    return [(m["role"], m.get("content") or "") for m in shown]


def test_interrupt_queue_and_steer(terminal, hermes, hermes_home):
    chat, _ = terminal([
        {"content": "never shown", "delay": 30}, "second answered",
        {"content": "slow done", "delay": 3}, "after answered",
        {"tool_calls": [["terminal", {"command": "sleep 3"}]]}, "steered answered",
        {"content": "plain", "delay": 3}, "late answered",
    ], "--yolo")
    chat.expect("hermes> ")
    chat.line("/busy")
    chat.expect("busy input mode interrupt: a line typed during a turn stops the turn and is the next message")
    chat.line("go")
    chat.expect("thinking")
    chat.line("actually this")  # the default: the turn stops at once, the line is the next message
    chat.expect("(interrupting: your message goes next)")
    chat.expect("(interrupted)")
    chat.expect("second answered")

    chat.expect("hermes> ")
    chat.line("/busy queue --global")
    chat.expect("busy input mode queue (config.yaml): a line typed during a turn is sent when the turn ends")
    chat.line("slow")
    chat.expect("thinking")
    chat.line("after")
    chat.expect("(queued: it goes when this turn ends)")
    chat.line("/usage")
    chat.expect("(/usage runs when this turn ends)")
    chat.expect("slow done")
    chat.expect("after answered")
    chat.expect("tokens")  # /usage's answer, after the queued message's turn

    chat.expect("hermes> ")
    chat.line("/busy steer")
    chat.line("work")
    chat.expect("-> terminal(")
    chat.line("also this")  # during the tool: the model reads it with the tool's result
    chat.expect("(steering: the model reads it after its current tool call)")
    chat.expect("steered answered")
    chat.expect("hermes> ")
    chat.line("quick")
    chat.expect("thinking")
    chat.line("late")  # no tool call follows: it is the next message
    chat.expect("(steering")
    chat.expect("plain")
    chat.expect("late answered")
    chat.expect("hermes> ")
    chat.line("/exit")
    assert chat.close() == 0
    assert "never shown" not in chat.seen
    assert (hermes_home / "config.yaml").read_text() == "display:\n  busy_input_mode: queue\n"
    said = stored(hermes, chat.seen)
    users = [c for r, c in said if r == "user"]
    assert users == ["go", "actually this", "slow", "after", "work", "also this", "quick", "late"]
    steered = [r for r, _ in said][said.index(("user", "work")):said.index(("user", "quick"))]
    assert steered == ["user", "assistant", "tool", "user", "assistant"]


def test_the_approval_question_gets_its_answer_and_the_typed_line_waits(terminal, hermes_home, tmp_path):
    """A line typed before the approval question is the next message; the question's answer is read by the question."""
    marker = tmp_path / "marker"
    (hermes_home / "config.yaml").write_text("approvals:\n  extra_patterns:\n    test_touch: touch \\S*marker\n"
                                             "display:\n  busy_input_mode: queue\n")
    chat, _ = terminal([{"content": "", "delay": 2, "tool_calls": [["terminal", {"command": f"touch {marker}"}]]},
                        "touched", "next answered"])
    chat.expect("hermes> ")
    chat.line("go")
    chat.expect("thinking")
    chat.line("then this")
    chat.expect("(queued")
    chat.expect("Run it? [o]nce")
    chat.line("o")
    chat.expect("touched")
    chat.expect("next answered")
    chat.expect("hermes> ")
    chat.line("/exit")
    assert chat.close() == 0
    assert marker.exists()
