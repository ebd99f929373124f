"""hermes-agent's chat commands /steer, /queue, /stop and /branch, in a pseudo-terminal: /steer and /queue typed
during a turn choose what that one line does whatever display.busy_input_mode says; /stop ends the background
commands the model started; /branch goes on in a copy of the session, titled, the old one left as it was."""

from __future__ import annotations

import json

from tests.terminal.test_busy_input import stored


def test_steer_queue_stop_and_branch(terminal, hermes, hermes_home):
    chat, _ = terminal([
        {"tool_calls": [["terminal", {"command": "sleep 3"}]]}, "steered answered",
        {"content": "slow done", "delay": 3}, "after answered",
        {"tool_calls": [["terminal", {"command": "sleep 120", "background": True}]]}, "started it",
        "on the branch",
    ], "--yolo")
    chat.expect("hermes> ")
    chat.line("work")
    chat.expect("-> terminal(")
    chat.line("/steer also this")  # busy_input_mode is interrupt: this line steers all the same
    chat.expect("(steering: the model reads it after its current tool call)")
    chat.expect("steered answered")
    chat.expect("hermes> ")
    chat.line("slow")
    chat.expect("thinking")
    chat.line("/queue after")
    chat.expect("(queued: it goes when this turn ends)")
    chat.expect("slow done")
    chat.expect("after answered")
    chat.expect("hermes> ")
    chat.line("serve")
    chat.expect("started it")
    chat.expect("hermes> ")
    chat.line("/stop")
    chat.expect("stopped 1 background command(s): ")
    chat.expect("hermes> ")
    chat.line("/stop")
    chat.expect("no background command is running")
    first = stored(hermes, chat.seen + "resume it with: hermes chat --resume " + _session_shown(chat.seen))
    chat.line("/branch try another way")
    chat.expect("branched as 'try another way': the chat goes on in session ")
    chat.line("on it")
    chat.expect("on the branch")
    chat.line("/exit")
    assert chat.close() == 0
    users = [c for r, c in first if r == "user"]
    assert users == ["work", "also this", "slow", "after", "serve"]  # /steer's and /queue's text only
    sessions = {s["id"]: s for s in json.loads(hermes("sessions", "list", "--json").stdout)}
    old = _session_shown(chat.seen)
    [new] = [i for i in sessions if i != old]
    assert sessions[new]["title"] == "try another way" and sessions[old]["title"] is None
    shown = json.loads(hermes("sessions", "show", new, "--json").stdout)
    assert shown["session"]["parent_session_id"] == old and shown["session"]["start_reason"] == "branch"
    assert [m["content"] for m in shown["messages"] if m["role"] == "user"] == users + ["on it"]
    assert stored(hermes, f"resume it with: hermes chat --resume {old}") == first  # the old one as it was


def _session_shown(seen: str) -> str:
    return seen.split(" · session ", 1)[1].split(" ", 1)[0]
