"""hermes-agent's file-change check (display.file_mutation_verifier): a patch or write_file of a turn that failed,
and was not made after all, is named under the answer the model gave, shown and stored; one made on a later try is
not; off in config or by HERMES_FILE_MUTATION_VERIFIER=0, nothing is added."""

from __future__ import annotations

import json


def test_a_failed_file_change_is_named_under_the_answer(hermes, hermes_home, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    script = tmp_path / "script.json"
    failing = ["patch", {"path": "a.txt", "old_string": "gamma", "new_string": "delta"}]
    steps = [{"tool_calls": [failing, ["patch", {"path": "b.txt", "old_string": "zeta", "new_string": "eta"}]]},
             {"tool_calls": [["patch", {"path": "b.txt", "old_string": "beta", "new_string": "eta"}]]},
             "I changed both files."]
    script.write_text(json.dumps(steps))
    model = ("--api-mode", "scripted", "--base-url", script, "-t", "file")
    out = hermes("run", *model, "change them", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    answer, note = out.stdout.split("\n\n", 1)
    assert answer == "I changed both files."
    assert note.startswith("[hermes: 1 file change(s) of this turn did not happen, whatever the answer above says")
    assert "  - a.txt: patch failed: " in note and "b.txt" not in note  # b.txt was made on the second try
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    stored = json.loads(hermes("sessions", "show", session, "--json").stdout)["messages"][-1]["content"]
    assert stored == out.stdout.rstrip("\n")  # the model reads it next turn too

    assert hermes("run", *model, "again", cwd=tmp_path, env={"HERMES_FILE_MUTATION_VERIFIER": "0"}).stdout == \
        "I changed both files.\n"
    (hermes_home / "config.yaml").write_text("display:\n  file_mutation_verifier: false\n")
    assert hermes("run", *model, "again", cwd=tmp_path).stdout == "I changed both files.\n"
