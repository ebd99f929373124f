"""display.inline_diffs: in a terminal, `hermes run` shows under a write_file or patch call's line what it changed
(new file, rewrite, patch), a long diff cut with a count; off, only the lines; the model's results are as before.
display.tool_preview_length: how much of each argument the call's line shows."""

from __future__ import annotations

import json


def test_a_file_tools_change_is_shown_under_its_line(terminal, hermes, hermes_home, tmp_path):
    (tmp_path / "app.py").write_text("-- a comment of a SQL file's kind\ndef total():\n    return 1\n")
    long = "".join(f"line {n}\n" for n in range(60))
    steps = [{"tool_calls": [["patch", {"path": "app.py", "old_string": "return 1", "new_string": "return 2"}]]},
             {"tool_calls": [["patch", {"path": "app.py", "old_string": "-- a comment of a SQL file's kind\n",
                                        "new_string": ""}]]},
             {"tool_calls": [["write_file", {"path": "notes.txt", "content": "first\nsecond\n"}]]},
             {"tool_calls": [["write_file", {"path": "notes.txt", "content": "first\nthird\n"}]]},
             {"tool_calls": [["write_file", {"path": "long.txt", "content": long}]]},
             {"tool_calls": [["write_file", {"path": "broken.py", "content": "def f(:\n"}]]},
             "done"]
    run, _ = terminal(steps, "-t", "file", "change it", command=("run",), env={"NO_COLOR": "1"})
    run.expect("done", timeout=30)
    assert run.close() == 0
    seen = run.seen.replace("\r\n", "\n")
    assert "     -    return 1\n     +    return 2\n" in seen  # patch's own diff
    assert "     --- a comment of a SQL file's kind\n" in seen  # a removed line that starts with "--"
    assert "     +first\n     +second\n" in seen  # a new file: every line added
    assert "      first\n     -second\n     +third\n" in seen  # a rewrite: what changed
    assert "     +line 38\n     ... 21 more lines of the diff\n" in seen and "+line 39" not in seen
    assert "     syntax: " in seen  # what the model reads of the file it broke, the user reads too
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    stored = json.loads(hermes("sessions", "show", session, "--json").stdout)["messages"]
    results = [m["content"] for m in stored if m["role"] == "tool"]
    assert len(results) == 6 and "bytes_written" in results[2] and "-second" not in results[3]  # the model's: as before

    assert "-> patch(path='app.py', old_string='return 1'" in seen
    (hermes_home / "config.yaml").write_text("display:\n  inline_diffs: false\n  tool_preview_length: 4\n")
    (tmp_path / "app.py").write_text("def total():\n    return 1\n")
    run, _ = terminal(steps[:1] + ["done"], "-t", "file", "again", command=("run",), name="two.json")
    run.expect("done", timeout=30)
    assert run.close() == 0 and "patch done" in run.seen and "+    return 2" not in run.seen
    assert "-> patch(path='app....', old_string='retu...', new_string='retu...')" in run.seen
