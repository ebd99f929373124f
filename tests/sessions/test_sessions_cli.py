"""``hermes sessions ...`` through the click group the plugin registers."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

import plugins.sessions as plugin
from hermes.host.config import Config


@pytest.fixture
def cli(home):
    group = click.Group("hermes")
    plugin.register_commands(group, Config())
    runner = CliRunner()

    def run(*args, input=None):
        return runner.invoke(group, ["sessions", *args], input=input)

    return run


@pytest.fixture
def data(home):
    s = plugin.get_store(home)
    s.ensure_session("20261129_100000_aaaa", model="gpt-x", provider="openai", platform="cli")
    s.append("20261129_100000_aaaa", [
        {"role": "user", "content": "Plan the garden layout"},
        {"role": "assistant", "content": None, "reasoning": "need the size",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "measure", "arguments": '{"m": 3}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "3 by 4 metres"},
        {"role": "assistant", "content": "Tomatoes along the south wall."},
    ])
    s.end_session("20261129_100000_aaaa", "completed", {"input_tokens": 42, "output_tokens": 7, "request_count": 2})
    s.ensure_session("20261129_110000_bbbb", model="claude", platform="telegram")
    s.append("20261129_110000_bbbb", [{"role": "user", "content": "Weather for the garden?"}])
    return s


def test_list(cli, data):
    out = cli("list")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("20261129_110000_bbbb") and lines[1].startswith("20261129_100000_aaaa")
    assert "Plan the garden layout" in lines[1] and "4 msgs" in lines[1]
    assert len(cli("list", "--limit", "1").output.splitlines()) == 1
    rows = json.loads(cli("list", "--json").output)
    assert [r["id"] for r in rows] == ["20261129_110000_bbbb", "20261129_100000_aaaa"]
    assert rows[1]["input_tokens"] == 42 and rows[1]["api_call_count"] == 2
    assert [r["id"] for r in json.loads(cli("list", "--json", "--platform", "cli").output)] == ["20261129_100000_aaaa"]
    bad = cli("list", "--limit", "0")
    assert bad.exit_code == 2


def test_list_empty(cli):
    out = cli("list")
    assert (out.exit_code, out.output.strip()) == (0, "No sessions yet.")
    assert json.loads(cli("list", "--json").output) == []


def test_show(cli, data):
    out = cli("show", "20261129_100000_aaaa")
    assert out.exit_code == 0, out.output
    text = out.output
    assert "model gpt-x" in text and "tokens in 42 out 7" in text
    assert "[0] user: Plan the garden layout" in text
    assert '-> measure({"m": 3})' in text and "reasoning: need the size" in text
    assert "[2] tool (c1): 3 by 4 metres" in text
    doc = json.loads(cli("show", "20261129_100000", "--json").output)  # a unique prefix works
    assert doc["session"]["id"] == "20261129_100000_aaaa"
    assert doc["messages"] == data.load("20261129_100000_aaaa")


@pytest.mark.parametrize("args", [("show", "nope"), ("show", "20261129"), ("delete", "nope", "--yes"),
                                  ("title", "nope", "x")])
def test_unknown_or_ambiguous_ids(cli, data, args):
    out = cli(*args)
    assert out.exit_code == 1
    assert out.output.startswith("hermes: error: ") and len(out.output.strip().splitlines()) == 1
    assert "Traceback" not in out.output


def test_search(cli, data):
    out = cli("search", "garden")
    assert out.exit_code == 0
    assert len(out.output.splitlines()) == 2 and "[garden]" in out.output
    hits = json.loads(cli("search", "tomatoes", "--json").output)
    assert [(h["session_id"], h["seq"], h["role"]) for h in hits] == [("20261129_100000_aaaa", 3, "assistant")]
    for odd in ('"garden', "AND OR", "garden*", "col:val", "(", "NEAR("):
        res = cli("search", odd)
        assert res.exit_code == 0, (odd, res.output)
    assert cli("search", "zzzz").output.strip() == "No matches."
    empty = cli("search", '  ""  ')
    assert empty.exit_code == 1 and "empty" in empty.output


def test_title(cli, data):
    out = cli("title", "20261129_110000", "Garden weather")
    assert out.exit_code == 0, out.output
    assert data.get_session("20261129_110000_bbbb")["title"] == "Garden weather"
    assert "Garden weather" in cli("list").output


def test_rename_takes_the_words_after_the_id(cli, data):  # hermes-agent's `sessions rename ID WORDS...`
    out = cli("rename", "20261129_110000", "Garden", "weather", "in", "May")
    assert out.exit_code == 0, out.output
    assert data.get_session("20261129_110000_bbbb")["title"] == "Garden weather in May"


def test_compact_gives_a_deleted_sessions_space_back(cli, data):
    data.ensure_session("20261130_big", model="gpt-x", platform="cli")
    data.append("20261130_big", [{"role": "user", "content": f"{i} " + "words " * 2000} for i in range(200)])
    assert cli("delete", "20261130_big", "--yes").exit_code == 0
    out = cli("optimize")
    assert out.exit_code == 0, out.output
    before, after = (float(x.split()[0]) for x in out.output.split(": ", 1)[1].split(" -> "))
    assert before > 2 and after < 1, out.output  # MB: the 2.4 MB of the deleted session went back


def test_delete(cli, data):
    kept = cli("delete", "20261129_100000_aaaa", input="n\n")
    assert kept.exit_code == 1 and data.load("20261129_100000_aaaa") is not None
    unanswered = cli("delete", "20261129_100000_aaaa", input="")  # a script with nothing on stdin
    assert unanswered.exit_code == 1 and data.load("20261129_100000_aaaa") is not None
    assert "session 20261129_100000_aaaa was not deleted: no answer came (end of input); pass --yes" in unanswered.output
    gone = cli("delete", "20261129_100000_aaaa", input="y\n")
    assert gone.exit_code == 0 and "Deleted 20261129_100000_aaaa" in gone.output
    assert data.load("20261129_100000_aaaa") is None
    assert cli("search", "tomatoes").output.strip() == "No matches."
    assert cli("delete", "20261129_110000_bbbb", "--yes").exit_code == 0
    assert cli("list").output.strip() == "No sessions yet."


def test_stats_adds_up_the_sessions_active_since(cli, data, home):
    import sqlite3
    import time

    data.ensure_session("20261001_090000_old", model="gpt-x", provider="openai", platform="cli")
    data.end_session("20261001_090000_old", "completed", {"input_tokens": 1000, "request_count": 9})
    data.close()
    with sqlite3.connect(home / "state.db") as conn:  # last active 40 days ago
        conn.execute("UPDATE sessions SET updated_at = ?, started_at = ? WHERE id = ?",
                     (time.time() - 40 * 86400,) * 2 + ("20261001_090000_old",))
    out = cli("stats", "--json")
    assert out.exit_code == 0, out.output
    used = json.loads(out.output)
    assert (used["sessions"], used["api_calls"], used["input_tokens"], used["output_tokens"]) == (2, 2, 42, 7)
    assert used["by_model"]["openai:gpt-x"]["input_tokens"] == 42 and used["by_model"]["claude"]["sessions"] == 1
    assert used["by_platform"] == {"cli": 1, "telegram": 1} and sum(used["by_day"].values()) == 2
    older = json.loads(cli("stats", "--since", "60d", "--json").output)
    assert older["sessions"] == 3 and older["by_model"]["openai:gpt-x"] == {
        "sessions": 2, "api_calls": 11, "input_tokens": 1042, "output_tokens": 7, "cache_read_tokens": 0,
        "cache_write_tokens": 0, "reasoning_tokens": 0}
    text = cli("stats").output
    assert "2 sessions, 2 model calls" in text and "openai:gpt-x" in text and "by platform: cli 1, telegram 1" in text
    bad = cli("stats", "--since", "lately")
    assert bad.exit_code == 2 and "'--since'" in bad.output


def test_write_json_snapshots_keeps_each_session_as_hermes_agents_file(hermes, hermes_home, tmp_path):
    """``sessions.write_json_snapshots``: after each turn, the session whole in sessions/session_ID.json."""
    (hermes_home / "config.yaml").write_text("sessions:\n  write_json_snapshots: true\n")
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"content": "an answer"}]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", str(script), "--json", "hello")
    assert out.returncode == 0, out.stderr
    session = json.loads(out.stdout)["session_id"]
    assert hermes("run", "--api-mode", "scripted", "--base-url", str(script), "-r", session, "again").returncode == 0
    snap = json.loads((hermes_home / "sessions" / f"session_{session}.json").read_text())
    assert snap["session_id"] == session and snap["message_count"] == 4
    assert [m["content"] for m in snap["messages"]] == ["hello", "an answer", "again", "an answer"]
    assert {"session_id", "model", "platform", "last_updated", "tools", "messages"} <= set(snap)
