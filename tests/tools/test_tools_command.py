"""``hermes tools``: what a session here would offer the model, and turning tools and toolsets off and on in
config.yaml; the CLI as a subprocess, and a run afterwards to see the model really gets (or misses) them."""

from __future__ import annotations

import json


def listed(hermes, *flags) -> dict:
    out = hermes("tools", "list", "--json", *flags)
    assert out.returncode == 0, out.stderr
    return {row["name"]: row for row in json.loads(out.stdout)["tools"]}


def offered_in_a_run(hermes, tmp_path) -> set:
    """The tool names the model was offered in a `hermes run` (its request, as the scripted provider got it)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["terminal", {"command": "echo hi"}]]}, "done"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "go", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    [result] = [m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
    return result


def test_list_says_what_is_offered_and_why_the_rest_is_not(hermes, hermes_home):
    rows = listed(hermes)
    assert rows["terminal"] == {**rows["terminal"], "toolset": "terminal", "plugin": "core-tools", "offered": True,
                                "why": ""}
    assert rows["read_file"]["description"].startswith("Read a text file")
    (hermes_home / "config.yaml").write_text("toolsets: [file, terminal]\nagent:\n  disabled_tools: [patch, gone]\n")
    rows = listed(hermes)
    assert rows["web_extract"]["why"] == "not in toolsets" and not rows["web_extract"]["offered"]
    assert rows["patch"]["why"] == rows["gone"]["why"] == "disabled (agent.disabled_tools)"
    assert rows["read_file"]["offered"] and rows["terminal"]["offered"]
    assert listed(hermes, "-t", "web")["web_extract"]["offered"]  # -t as for run
    text = hermes("tools")
    assert text.returncode == 0 and "  - patch" in text.stdout and "off: disabled (agent.disabled_tools)" in text.stdout
    assert "(toolsets: file, terminal)" in text.stdout
    bad = hermes("tools", "list", "-t", "fiel")
    assert bad.returncode == 2 and "unknown toolset 'fiel' (did you mean 'file'" in bad.stderr


def test_disable_and_enable_a_toolset_and_a_tool(hermes, hermes_home, tmp_path):
    (hermes_home / "config.yaml").write_text("# my settings\nagent:\n  max_turns: 20  # enough\n")
    out = hermes("tools", "disable", "terminal", "web_search")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["disabled: terminal (process, terminal)", "disabled: web_search"]
    text = (hermes_home / "config.yaml").read_text()
    assert "# my settings" in text and "# enough" in text  # its comments kept
    rows = listed(hermes)
    assert {n for n, r in rows.items() if r["why"] == "disabled (agent.disabled_tools)"} == {
        "process", "terminal", "web_search"}
    assert "unknown tool 'terminal'" in offered_in_a_run(hermes, tmp_path)  # the model was not offered it
    assert hermes("tools", "enable", "terminal", "web_search").returncode == 0
    assert "disabled_tools" not in (hermes_home / "config.yaml").read_text()
    assert '"output": "hi\\n"' in offered_in_a_run(hermes, tmp_path)
    # with toolsets set, enabling one it leaves out adds it there
    (hermes_home / "config.yaml").write_text("toolsets: [file]\n")
    assert hermes("tools", "enable", "terminal").returncode == 0
    assert listed(hermes)["terminal"]["offered"]
    assert "- terminal" in (hermes_home / "config.yaml").read_text()


def test_an_unknown_name_changes_nothing(hermes, hermes_home):
    (hermes_home / "config.yaml").write_text("toolsets: [file]\n")
    out = hermes("tools", "disable", "read_file", "webb")
    assert out.returncode == 2 and "no tool or toolset 'webb' (did you mean 'web'?)" in out.stderr
    assert (hermes_home / "config.yaml").read_text() == "toolsets: [file]\n"
    assert hermes("tools", "enable").returncode == 2  # a name is needed
