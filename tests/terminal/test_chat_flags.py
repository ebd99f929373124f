"""hermes-agent's chat flags that scripts pass: -q PROMPT with -Q prints only the answer; -Q alone no banner and
each answer whole; --source names the sessions' platform; --checkpoints snapshots the folder before a change."""

from __future__ import annotations

import json


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
