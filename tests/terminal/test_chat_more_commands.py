"""hermes-agent's chat commands /steer, /queue, /stop and /branch, in a pseudo-terminal: /steer and /queue typed
during a turn choose what that one line does whatever display.busy_input_mode says; /stop ends the background
commands the model started; /branch goes on in a copy of the session, titled, the old one left as it was."""

from __future__ import annotations

import json
import os
import time

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
    chat.line("/agents")
    chat.expect("running ")
    chat.expect("sleep 120")
    chat.line("/stop")
    chat.expect("stopped 1 background command(s): ")
    chat.expect("hermes> ")
    chat.line("/stop")
    chat.expect("no background command is running")
    chat.line("/tasks")
    chat.expect("killed, exit -15  sleep 120")  # still listed, with how it ended
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


def test_no_skill_is_named_after_a_chat_command(hermes, tmp_path):
    """A skill named like one of chat's commands, or a built-in plugin's, would be listed as its /NAME and never
    run: the skills plugin leaves those names out."""
    from plugins.skills import RESERVED
    from plugins.terminal.commands import BUILTIN

    assert set(BUILTIN) <= RESERVED
    script = tmp_path / "script.json"
    script.write_text("[]")
    shown = hermes("chat", "--api-mode", "scripted", "--base-url", script, input="/help\n/exit\n").stdout
    commands = {line.split()[0].strip("/,") for line in shown.replace("hermes> ", "\n").splitlines()
                if line.startswith("/")}
    assert len(commands) > 40 and commands - {"exit"} <= RESERVED, commands - RESERVED


def test_paste_attaches_the_clipboards_image(hermes, tmp_path):
    """hermes-agent's /paste: a screenshot on the clipboard goes with the next message. Stand-ins answer as the
    clipboard programs do: wl-paste (no Wayland here: it fails), then xclip with the PNG."""
    import base64
    import os

    from tests.providers.test_images import PNG as png

    tools = tmp_path / "bin"
    tools.mkdir()
    (tmp_path / "shot.png").write_bytes(png)
    (tools / "wl-paste").write_text("#!/bin/sh\necho 'Failed to connect to a Wayland server' >&2\nexit 1\n")
    (tools / "xclip").write_text("#!/bin/sh\n[ \"$4\" = TARGETS ] && exec printf 'TARGETS\\nimage/jpeg\\n"
                                 f"image/png\\n'\n[ \"$4\" = image/png ] && exec cat {tmp_path / 'shot.png'}\nexit 1\n")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["a dot"]))
    env = {"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    out = hermes("chat", "--api-mode", "scripted", "--base-url", script, "-m", "claude-test", env=env,  # it sees
                 input="/paste\nwhat is it?\n/exit\n")
    assert out.returncode == 0 and "attached the clipboard's image (1 KB): it goes with your next message" in out.stdout
    [session] = json.loads(hermes("sessions", "list", "--json").stdout)
    [asked] = [m for m in json.loads(hermes("sessions", "show", session["id"], "--json").stdout)["messages"]
               if m["role"] == "user"]
    assert asked["content"][1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(png).decode()
    from PIL import Image

    Image.new("RGB", (4, 4), "red").save(tmp_path / "photo.jpg", "JPEG")  # a photo copied from a browser: JPEG only
    (tools / "xclip").write_text(f"#!/bin/sh\n[ \"$4\" = TARGETS ] && exec printf 'TARGETS\\nimage/jpeg\\n'\n"
                                 f"[ \"$4\" = image/jpeg ] && exec cat {tmp_path / 'photo.jpg'}\nexit 1\n")
    out = hermes("chat", "--api-mode", "scripted", "--base-url", script, "-m", "claude-test", env=env,
                 input="/paste\n/exit\n")
    assert "attached the clipboard's image (1 KB)" in out.stdout, out.stdout + out.stderr
    (tools / "xclip").write_text("#!/bin/sh\n[ \"$4\" = TARGETS ] && exec printf 'TARGETS\\nUTF8_STRING\\n'\nexit 1\n")
    out = hermes("chat", "--api-mode", "scripted", "--base-url", script, env=env, input="/paste\n/exit\n")
    assert "the clipboard holds no image (wl-paste, xclip asked)" in out.stdout  # text on the clipboard


def test_timestamps_in_the_prompt(terminal, hermes_home):
    """hermes-agent's display.timestamps and /timestamps: the prompt says the time (display.timestamp_format) each
    message went; /timestamps turns it off for this chat, or with --global in config.yaml."""
    import time

    (hermes_home / "config.yaml").write_text("display:\n  timestamps: true\n  timestamp_format: '%Y-%m'\n")
    chat, _ = terminal(["first", "second"])
    chat.expect(f"hermes {time.strftime('%Y-%m')}> ")
    chat.line("one")
    chat.expect("first")
    chat.line("/timestamps")
    chat.expect("timestamps off (this chat)")
    chat.expect("hermes> ")
    chat.line("/timestamps on")
    chat.expect(f"hermes {time.strftime('%Y-%m')}> ")
    chat.line("/timestamps off --global")
    chat.expect("timestamps off (config.yaml)")
    chat.line("/exit")
    assert chat.close() == 0
    assert "timestamps: false" in (hermes_home / "config.yaml").read_text()


def test_a_long_message_sent_stays_as_its_first_and_last_lines(terminal, hermes):
    """hermes-agent's display.user_message_preview: a pasted log is sent whole, and the screen keeps its first and
    last lines and a count of the rest."""
    chat, _ = terminal(["got it"], env={"NO_COLOR": "1"})
    chat.expect("hermes> ")
    pasted = "\n".join(f"log line {n}" for n in range(1, 11))
    chat.keys(f"\x1b[200~{pasted}\x1b[201~\r")  # a bracketed paste, then Enter
    chat.expect("got it")
    chat.line("/exit")
    assert chat.close() == 0
    assert "hermes> log line 1\r\n      . log line 2\r\n      . ... (6 more lines)\r\n      . log line 9\r\n" \
           "      . log line 10\r\n" in chat.seen
    assert stored(hermes, chat.seen)[0] == ("user", pasted)


def test_reasoning_that_comes_whole_is_shown_clamped_or_full(terminal, hermes_home):
    """Not streamed (agent.stream: false), the model's reasoning was never shown; now with display.show_reasoning
    its first 10 lines come before the answer, all of it after hermes-agent's /reasoning full."""
    (hermes_home / "config.yaml").write_text("agent:\n  stream: false\ndisplay:\n  show_reasoning: true\n")
    thought = "\n".join(f"thought {n}" for n in range(1, 13))
    chat, _ = terminal([{"reasoning": thought, "content": "first"}, {"reasoning": thought, "content": "second"}],
                       env={"NO_COLOR": "1"})
    chat.expect("hermes> ")
    chat.line("one")
    chat.expect("thought 10\r\n... (2 more lines; /reasoning full shows all)")
    chat.expect("first")
    chat.line("/reasoning full")
    chat.expect("reasoning that comes whole is shown in full")
    chat.line("two")
    chat.expect("thought 12")
    chat.expect("second")
    chat.line("/exit")
    assert chat.close() == 0
    assert "thought 11" not in chat.seen.split("/reasoning full")[0]


def test_a_note_a_plugin_adds_under_a_streamed_answer_is_shown_alone(terminal, tmp_path):
    """The file-change check adds its note under the answer once it streamed: the terminal shows the note, not the
    whole answer again."""
    (tmp_path / "a.txt").write_text("alpha\n")
    chat, _ = terminal([{"tool_calls": [["patch", {"path": "a.txt", "old_string": "gamma", "new_string": "x"}]]},
                        "Changed it, all good."], env={"NO_COLOR": "1"})
    chat.expect("hermes> ")
    chat.line("change it")
    chat.expect("file change(s) of this turn did not happen")
    chat.expect("hermes> ")
    chat.line("/exit")
    assert chat.close() == 0
    assert chat.seen.count("Changed it, all good.") == 1 and "as finally given" not in chat.seen


def test_model_switch_with_provider_and_global(hermes, hermes_home, tmp_path):
    """hermes-agent's `/model NAME [--provider NAME] [--global]`: --global saves it as `hermes model set` does;
    another provider is checked before the next turn (its key missing: said, the chat stays on its model)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["one"]))
    (hermes_home / "config.yaml").write_text("# mine\nmodel: first\n")
    out = hermes("chat", "--api-mode", "scripted", "--base-url", script, env={"ANTHROPIC_API_KEY": ""},
                 input="/model second --global\n/model claude-sonnet-4-6 --provider anthropic\n/model a b\n"
                       "/model --provider\n/model\n/exit\n")
    assert out.returncode == 0, out.stderr
    assert "model: scripted:second (config.yaml too)" in out.stdout
    assert "cannot use anthropic:claude-sonnet-4-6: " in out.stdout and "ANTHROPIC_API_KEY" in out.stdout
    assert out.stdout.count("usage: /model [NAME] [--provider NAME] [--global]") == 2
    assert out.stdout.endswith("hermes> model: scripted:second\nhermes> ")  # the chat stayed on it
    assert (hermes_home / "config.yaml").read_text() == "# mine\nmodel: second\n"


def test_toolsets_says_which_this_chat_offers(hermes, tmp_path):
    """hermes-agent's /toolsets: the registered toolsets and those the tools name as theirs, with what -t offers."""
    script = tmp_path / "script.json"
    script.write_text("[]")
    out = hermes("chat", "--api-mode", "scripted", "--base-url", script, "-t", "file", input="/toolsets\n/exit\n")
    rows = {line.split()[0].removeprefix("hermes>"): line.split()[1:4] for line in
            out.stdout.replace("hermes> ", "\n").splitlines() if "tools  " in line}
    assert rows["file"][:3] == ["4", "tools", "offered"] and rows["web"][2] == "-" and "browser" in rows


def test_a_big_paste_stands_in_the_line_as_a_placeholder_and_is_sent_whole(terminal, hermes, hermes_home):
    """hermes-agent's paste_collapse_threshold: a paste of 5 line breaks or more is kept in a file and stands in the
    input line as [Pasted text #N: L lines -> FILE]; the message sent holds it whole. A smaller one goes in as it is.
    Pastes older than 30 days go."""
    old = hermes_home / "pastes" / "paste-20261001-120000-1-1.txt"  # 31 days old at the first paste: it goes
    old.parent.mkdir()
    old.write_text("an old paste")
    os.utime(old, (time.time() - 31 * 86400,) * 2)
    chat, _ = terminal(["got the log", "got the note"], env={"NO_COLOR": "1"})
    chat.expect("hermes> ")
    pasted = "\n".join(f"trace line {n}" for n in range(1, 8))
    chat.keys(f"look: \x1b[200~{pasted}\x1b[201~")
    chat.expect("[Pasted text #1: 7 lines \u2192 ")
    chat.keys("\r")
    chat.expect("got the log")
    chat.keys("\x1b[200~a\nb\x1b[201~\r")  # two lines: no placeholder
    chat.expect("got the note")
    chat.line("/exit")
    assert chat.close() == 0
    assert "[Pasted text #2" not in chat.seen
    [kept] = (hermes_home / "pastes").iterdir()
    assert kept.read_text() == pasted and oct(kept.stat().st_mode & 0o777) == "0o600"
    assert [c for r, c in stored(hermes, chat.seen) if r == "user"] == [f"look: {pasted}", "a\nb"]
