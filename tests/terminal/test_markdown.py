"""display.final_response_markdown: at a terminal the answer's Markdown is rendered (render, the default) or its
markers taken away (strip, and render without colour); raw, or piped to a file, the answer is as the model wrote it.
The answer streams in pieces of 16 characters, so a marker is often cut between two of them."""

from __future__ import annotations

import json

import pytest

from plugins.terminal.markdown import Markdown

ANSWER = ("# Plan\n"
          "Use **pytest -x** and `make check`; see [the docs](https://example.org/docs).\n"
          "- first *step*\n"
          "| Tool | Runs |\n|---|---:|\n| `pytest` | 12 |\n| make check | 3 |\n"
          "```python\n"
          "total = a**2 * `b`\n"
          "```\n"
          "0 * * * * runs it hourly; snake_case_name stays\n"
          "* * * * *\n"
          + "word " * 40 + "**the end**\n")


def test_the_answers_markdown_at_a_terminal_and_not_when_piped(terminal, hermes, hermes_home, tmp_path):
    run, _ = terminal([ANSWER], "hi", command=("run",))  # render, with colour
    run.expect("the end", timeout=30)
    assert run.close() == 0
    seen = run.seen.replace("\r\n", "\n")
    assert "\x1b[1m\x1b[4mPlan\x1b[0m\n" in seen and "\x1b[1mpytest -x\x1b[0m" in seen
    assert "\x1b[36mmake check\x1b[0m" in seen and "\x1b[4mthe docs\x1b[0m\x1b[2m (https://example.org/docs)" in seen
    assert "• first \x1b[3mstep\x1b[0m\n" in seen and "\x1b[36mtotal = a**2 * `b`\x1b[0m\n" in seen  # code as it is
    assert "```" not in seen and "**" not in seen.replace("a**2", "")
    assert "0 * * * * runs it hourly; snake_case_name stays\n* * * * *\n" in seen
    assert "word word \x1b[1mthe end\x1b[0m" in seen  # a line wider than the terminal, shown before its newline
    assert "\x1b[1mTool        Runs\x1b[0m\n\x1b[2m──────────  ────\x1b[0m\n\x1b[36mpytest\x1b[0m        12\n" \
           "make check     3\n" in seen  # the columns lined up (---: to the right), the header bold

    run, _ = terminal([ANSWER], env={"NO_COLOR": "1"}, name="two.json")  # chat; no colour: strip
    run.expect("hermes> ", timeout=30)
    run.line("hi")
    run.expect("the end", timeout=30)
    run.expect("hermes> ")
    run.line("/exit")
    assert run.close() == 0
    seen = run.seen.replace("\r\n", "\n")
    assert "Plan\nUse pytest -x and make check; see the docs (https://example.org/docs).\n• first step\n" \
           "Tool        Runs\n──────────  ────\npytest        12\nmake check     3\n" \
           "total = a**2 * `b`\n0 * * * *" in seen and "\x1b[36m" not in seen  # no colour

    (hermes_home / "config.yaml").write_text("display:\n  final_response_markdown: raw\n")
    run, _ = terminal([ANSWER], "hi", command=("run",), name="three.json")
    run.expect("the end", timeout=30)
    assert run.close() == 0 and ANSWER.rstrip("\n") in run.seen.replace("\r\n", "\n")

    (hermes_home / "config.yaml").write_text("display:\n  final_response_markdown: render\n")
    script = tmp_path / "piped.json"
    script.write_text(json.dumps([ANSWER]))
    piped = hermes("chat", "-q", "hi", "--api-mode", "scripted", "--base-url", script)  # hermes-agent's one turn
    assert piped.returncode == 0 and piped.stdout == ANSWER, piped.stderr  # a file gets the model's Markdown
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    stored = json.loads(hermes("sessions", "show", session, "--json").stdout)["messages"]
    assert stored[-1]["content"] == ANSWER


@pytest.mark.parametrize("line, shown", [
    ("## Two ##", "Two"),
    ("> a _quote_", "│ a quote"),
    ("  + nested **item**", "  • nested item"),
    ("---", "─" * 24),
    ("2*3*4 and a * b * c", "2*3*4 and a * b * c"),
    ("~~old~~ [https://a.b](https://a.b)", "old https://a.b"),
    ("``a `tick` b``", "a `tick` b"),
])
def test_one_line_stripped(line, shown):
    assert Markdown("strip", colour=True).line(line) == shown  # strip never paints


def test_a_table_wider_than_the_terminal_is_a_row_at_a_time_and_a_pipe_in_code_is_no_column():
    md = Markdown("strip", colour=False, width=20)
    rows = ["| Name | Note |", "| --- | --- |", "| one | `a|b` and more words |", "| two |"]
    assert [md.line(row) for row in rows] == [None] * 4
    assert md.line("after") == "Name: one\nNote: a|b and more words\n\nName: two\nNote:\nafter"
    assert md.finish() is None
    assert md.line("| grep x") is None and md.finish() == "| grep x"  # no divider: no table


def test_a_tables_columns_are_aligned_as_its_divider_says():
    md = Markdown("strip", colour=False)
    rows = ["| Item | Price | Note |", "| :--- | ---: | :--: |", "| tea | 3.50 | hot |", "| cake | 12.00 | x |"]
    assert [md.line(row) for row in rows] == [None] * 4
    assert md.finish() == "Item  Price  Note\n────  ─────  ────\ntea    3.50  hot\ncake  12.00   x"


def test_a_fence_closes_only_on_its_own_kind():
    md = Markdown("strip", colour=False)
    shown = [md.line(line) for line in ["````", "```", "# inside", "~~~", "````", "# outside"]]
    assert shown == [None, "```", "# inside", "~~~", None, "outside"]
