"""hermes-agent's chat flags that scripts pass: -q PROMPT with -Q prints only the answer; -Q alone no banner and
each answer whole; --source names the sessions' platform; --checkpoints snapshots the folder before a change."""

from __future__ import annotations

import json

from tests.conftest import no_titles


def test_hermes_agents_chat_flags(hermes, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["just this"]))
    model = ("--api-mode", "scripted", "--base-url", script)
    out = hermes("chat", "-Q", "-q", "hi", *model)
    assert (out.returncode, out.stdout, out.stderr) == (0, "just this\n", "")

    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("before\n")
    script.write_text(json.dumps([{"tool_calls": [["write_file", {"path": "a.txt", "content": "after\n"}]]}, "done"]))
    out = hermes("chat", "-Q", "--source", "tool", "--checkpoints", *model, cwd=work, input="change it\n/exit\n")
    assert out.returncode == 0 and out.stdout == "hermes> done\nhermes> " and "/help for commands" not in out.stderr
    [session] = json.loads(hermes("sessions", "list", "--json").stdout)[:1]
    assert session["platform"] == "tool" and (work / "a.txt").read_text() == "after\n"
    [snapshot] = json.loads(hermes("checkpoints", "list", "--json", cwd=work).stdout)["checkpoints"]
    assert snapshot["reason"] == "before write_file: a.txt"


def test_a_resumed_chat_works_where_its_session_started(hermes, tmp_path):
    """hermes-agent goes back to a resumed session's folder (its relative paths mean what they meant there), with -r,
    -c and chat's /resume; --no-restore-cwd stays; a folder gone since is said."""
    first, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    first.mkdir()
    elsewhere.mkdir()
    script = tmp_path / "script.json"
    model = ("--api-mode", "scripted", "--base-url", script)
    script.write_text(json.dumps(["hello"]))
    assert hermes("chat", *model, cwd=first, input="hi\n/exit\n").returncode == 0
    [session] = json.loads(hermes("sessions", "list", "--json").stdout)
    write = {"tool_calls": [["write_file", {"path": "notes.txt", "content": "x\n"}]]}
    script.write_text(json.dumps([write, "wrote", write, "wrote"]))
    out = hermes("chat", "-r", session["id"], *model, cwd=elsewhere, input="note it\n/exit\n")
    assert f"working in {first}, where the session started (--no-restore-cwd stays where you are)" in out.stderr
    assert (first / "notes.txt").exists() and not (elsewhere / "notes.txt").exists()
    out = hermes("chat", "-c", "--no-restore-cwd", *model, cwd=elsewhere, input="note it\n/exit\n")
    assert out.returncode == 0 and "working in" not in out.stderr and (elsewhere / "notes.txt").exists()
    (first / "notes.txt").unlink()
    out = hermes("chat", *model, cwd=elsewhere, input=f"/resume {session['id']}\nnote it\n/exit\n")  # chat's own
    assert f"working in {first}, where the session started" in out.stderr and (first / "notes.txt").exists()
    (first / "notes.txt").unlink()
    first.rmdir()
    out = hermes("chat", "-r", session["id"], *model, cwd=elsewhere, input="/exit\n")
    assert f"the session started in {first}, which is gone: working here" in out.stderr


def test_an_image_given_on_the_command_line_goes_with_the_first_message(hermes, tmp_path):
    """hermes-agent's `chat -q PROMPT --image FILE`, and `chat --image FILE` (the first message takes it)."""
    from tests.providers.test_images import PNG as png

    (tmp_path / "dot.png").write_bytes(png)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["a dot", "one", "two"]))
    model = ("--api-mode", "scripted", "--base-url", script, "-m", "claude-test", "--image", tmp_path / "dot.png")
    assert hermes("chat", "-q", "what is it?", *model).stdout == "a dot\n"
    assert hermes("chat", *model, input="and now?\nagain?\n/exit\n").returncode == 0
    asked = []
    for session in json.loads(hermes("sessions", "list", "--json").stdout):
        shown = json.loads(hermes("sessions", "show", session["id"], "--json").stdout)["messages"]
        asked += [m["content"] for m in shown if m["role"] == "user"]
    with_image = [c[0]["text"] for c in asked if isinstance(c, list) and c[1]["type"] == "image_url"]
    assert sorted(with_image) == ["and now?", "what is it?"] and "again?" in asked  # the first message only
    assert hermes("chat", "--image", tmp_path / "nothing.png").returncode == 2  # a file that is not there: usage


def test_quiet_query_at_a_terminal_shows_the_answer_alone(terminal):
    """`hermes chat -q PROMPT -Q` at a terminal: no spinner nor tool lines, as piped (run showed both)."""
    chat, _ = terminal([{"tool_calls": [["terminal", {"command": "echo hi"}]]}, "the answer alone"], "-Q", "-q",
                       "work")
    chat.expect("the answer alone")
    assert chat.close() == 0
    assert "terminal" not in chat.seen and "thinking" not in chat.seen, chat.seen


def test_a_turn_without_an_answer_says_why(hermes, hermes_home, tmp_path):
    """hermes-agent's display.turn_completion_explainer: an empty answer left a blank in chat; now it is said (off:
    nothing)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": ""}]))
    model = ("--api-mode", "scripted", "--base-url", script)
    out = hermes("chat", *model, input="hi\n/exit\n")
    assert "(the model's answer was empty; /retry asks again)" in out.stderr
    (hermes_home / "config.yaml").write_text("display:\n  turn_completion_explainer: false\n")
    assert "empty" not in hermes("chat", *model, input="hi\n/exit\n").stderr


def test_exit_delete_takes_the_chats_sessions_away(hermes, hermes_home, tmp_path):
    """hermes-agent's /quit --delete: the chat ends and the sessions its turns ran in are deleted; other words after
    /exit are a usage line, and the chat goes on."""
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["first", "second"]))
    no_titles(hermes_home)
    kept = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "an older session")
    older = json.loads(kept.stdout)["session_id"]
    out = hermes("chat", "--api-mode", "scripted", "--base-url", script,
                 input="hello\n/exit now\n/new\nagain\n/quit --delete\n")
    assert out.returncode == 0, out.stderr
    assert "usage: /exit [--delete] (--delete: the sessions of this chat are deleted too)" in out.stderr
    assert "deleted 2 sessions of this chat: " in out.stderr and "resume it with" not in out.stderr
    assert [s["id"] for s in json.loads(hermes("sessions", "list", "--json").stdout)] == [older]
