"""``hermes memory``: what the agent keeps, shown, edited and cleared through the real command line."""

from __future__ import annotations

import json


def test_show_edit_and_clear_what_the_agent_remembers(hermes, hermes_home, tmp_path):
    memories = hermes_home / "memories"
    memories.mkdir()
    (memories / "MEMORY.md").write_text("Project uses pytest\n§\nDeploy with make\n")
    (memories / "USER.md").write_text("Name: Ana\n")
    shown = hermes("memory")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "external backend (memory.provider): none",
        f"{memories / 'MEMORY.md'} (2 entries, 38/2200 chars)", "  - Project uses pytest", "  - Deploy with make",
        f"{memories / 'USER.md'} (1 entry, 9/1375 chars)", "  - Name: Ana"]
    rows = json.loads(hermes("memory", "show", "--json").stdout)
    assert [(r["target"], r["entries"]) for r in rows] == [
        ("memory", ["Project uses pytest", "Deploy with make"]), ("user", ["Name: Ana"])]

    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'a').write('§\\nPrefers short answers\\n')\n")
    edited = hermes("memory", "edit", "user", env={"EDITOR": f"python3 {editor}", "VISUAL": ""})
    assert edited.returncode == 0 and "  - Prefers short answers" in edited.stdout, edited.stderr

    refused = hermes("memory", "clear", input="")
    assert refused.returncode == 1 and "nothing was cleared: no answer came (end of input); pass --yes" in refused.stderr
    cleared = hermes("memory", "clear", "user", "--yes")
    assert cleared.stdout.strip() == f"{memories / 'USER.md'}: 2 entries removed"
    assert (memories / "USER.md").read_text() == "" and "Deploy with make" in (memories / "MEMORY.md").read_text()
    off = hermes("memory", "edit", env={"EDITOR": "no-such-editor", "VISUAL": ""})
    assert off.returncode == 1 and off.stderr.startswith("hermes: error: cannot open an editor (no-such-editor: ")


def test_the_external_backend_is_chosen_checked_and_turned_off(hermes, hermes_home):
    """hermes-agent's `hermes memory setup|status|off|reset`."""
    (hermes_home / "config.yaml").write_text("# my settings\nagent:\n  max_turns: 30\n")
    status = json.loads(hermes("memory", "status", "--json").stdout)
    assert status["provider"] is None and {"fts", "mem0"} <= set(status["backends"])
    chosen = hermes("memory", "setup", "mem0", env={"MEM0_API_KEY": ""})
    assert chosen.returncode == 0 and chosen.stdout == (
        "memory.provider: mem0; it still needs MEM0_API_KEY (in the data folder's .env), or MEM0_HOST for a Mem0 "
        "server of your own\n"), chosen.stderr
    assert (hermes_home / "config.yaml").read_text().startswith("# my settings\n")  # comments kept
    ready = json.loads(hermes("memory", "status", "--json", env={"MEM0_API_KEY": "m0-key"}).stdout)
    assert (ready["provider"], ready["available"], ready["needs"]) == ("mem0", True, None)
    assert hermes("memory", "status", env={"MEM0_API_KEY": ""}).stdout.startswith(
        "memory.provider: mem0: not available here (MEM0_API_KEY")
    unknown = hermes("memory", "setup", "honcho")
    assert unknown.returncode == 2 and unknown.stderr.startswith("hermes: error: no memory backend 'honcho'; there "
                                                                 "are: fts, mem0")
    assert hermes("memory", "setup", input="").returncode == 2  # no terminal to choose at: which one is asked
    assert hermes("memory", "off").stdout == "memory.provider: none (MEMORY.md and USER.md only)\n"
    assert json.loads(hermes("memory", "status", "--json").stdout)["provider"] is None
    (hermes_home / "memories").mkdir()
    (hermes_home / "memories" / "USER.md").write_text("Name: Ana\n")
    assert hermes("memory", "reset", "--target", "user", "--yes").returncode == 0
    assert (hermes_home / "memories" / "USER.md").read_text() == ""
