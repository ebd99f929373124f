"""``hermes batch`` through the real command line: worker processes, trajectories on disk, reruns, kill -9."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.conftest import kill_9, wait_until


def _prompts(tmp_path, rows) -> Path:
    path = tmp_path / "prompts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _script(tmp_path, steps) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(steps), encoding="utf-8")
    return str(path)


def _lines(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


TOOL_THEN_ANSWER = [{"reasoning": "look first", "tool_calls": [["slow", {"step": 1, "seconds": 0}]]}, "the answer"]


def test_every_prompt_once_in_hermes_agents_format(hermes_sessions, tmp_path):
    prompts = _prompts(tmp_path, [{"prompt": f"question {i}"} for i in range(20)])
    out = tmp_path / "out.jsonl"
    run = hermes_sessions("batch", str(prompts), "--out", str(out), "--workers", "2", "--api-mode", "scripted",
                          "--base-url", _script(tmp_path, TOOL_THEN_ANSWER), "-t", "slow", "--json", timeout=120)
    assert run.returncode == 0 and run.stdout, (run.stdout, run.stderr)
    summary = json.loads(run.stdout)
    assert (summary["prompts"], summary["written"], summary["failed"], summary["already"]) == (20, 20, 0, 0)
    entries = _lines(out)
    assert sorted(e["prompt_index"] for e in entries) == list(range(20))
    e = next(e for e in entries if e["prompt_index"] == 7)
    turns = e["conversations"]
    assert [t["from"] for t in turns] == ["system", "human", "gpt", "tool", "gpt"]
    assert "<tools>" in turns[0]["value"] and '"name": "slow"' in turns[0]["value"]
    assert turns[1]["value"] == "question 7"
    assert turns[2]["value"].startswith("<think>\nlook first\n</think>") and "<tool_call>" in turns[2]["value"]
    call = json.loads(turns[2]["value"].split("<tool_call>\n")[1].split("\n</tool_call>")[0])
    assert call == {"name": "slow", "arguments": {"step": 1, "seconds": 0}}
    response = json.loads(turns[3]["value"].split("<tool_response>\n")[1].split("\n</tool_response>")[0])
    assert response["name"] == "slow" and response["content"]["step"] == 1
    assert turns[4]["value"] == "<think>\n</think>\nthe answer"
    assert (e["completed"], e["partial"], e["exit_reason"], e["api_calls"]) == (True, False, "completed", 2)
    assert e["tool_stats"] == {"slow": {"count": 1, "success": 1, "failure": 0}}
    assert e["tool_error_counts"] == {"slow": 0}
    assert e["toolsets_used"] == ["slow"] and e["usage"]["request_count"] == 2
    # each run is its own session, stored
    listed = json.loads(hermes_sessions("sessions", "list", "--json", "--limit", "50").stdout)
    assert len(listed) == 20 and {r["platform"] for r in listed} == {"batch"}
    assert {r["id"] for r in listed} == {x["metadata"]["session_id"] for x in entries}


def test_out_dash_sends_the_trajectories_to_stdout(hermes_sessions, tmp_path):
    """`--out -` made a file named "-"; now the trajectories go down the pipe (`--out - | jq`), the rest on stderr."""
    prompts = _prompts(tmp_path, [{"prompt": f"q{i}"} for i in range(3)])
    args = ["batch", str(prompts), "--out", "-", "--workers", "2", "--api-mode", "scripted",
            "--base-url", _script(tmp_path, ["ok"]), "--no-save"]
    run = hermes_sessions(*args)
    assert run.returncode == 0, run.stderr
    entries = [json.loads(line) for line in run.stdout.splitlines()]
    assert sorted(e["prompt_index"] for e in entries) == [0, 1, 2] and "3 trajectories written to stdout" in run.stderr
    assert not (tmp_path / "cwd" / "-").exists()
    both = hermes_sessions(*args, "--json")  # two documents on one stdout: refused, before any run
    assert both.returncode == 2 and "give --out a file" in both.stderr and not both.stdout


def test_a_rerun_skips_what_is_written_and_runs_the_rest(hermes_sessions, tmp_path):
    prompts = _prompts(tmp_path, [{"prompt": f"q{i}"} for i in range(8)])
    prompts.write_bytes(b"\xef\xbb\xbf" + prompts.read_bytes())  # saved with a BOM: still its lines
    out, script = tmp_path / "out.jsonl", _script(tmp_path, ["ok"])
    args = ["batch", str(prompts), "--out", str(out), "--api-mode", "scripted", "--base-url", script, "--no-save"]
    assert hermes_sessions(*args).returncode == 0
    again = hermes_sessions(*args)
    assert again.returncode == 0 and "all 8 prompts are in" in again.stderr
    kept = out.read_text().splitlines()
    out.write_text("\n".join(kept[:5]) + "\n" + kept[5][:40])  # three lost, the last one cut short mid-write
    rerun = hermes_sessions(*args, "--json")
    assert rerun.returncode == 0 and "its last line was cut short" in rerun.stderr
    assert (json.loads(rerun.stdout)["already"], json.loads(rerun.stdout)["written"]) == (5, 3)
    assert sorted(e["prompt_index"] for e in _lines(out)) == list(range(8))
    assert json.loads(hermes_sessions("sessions", "list", "--json").stdout) == []  # --no-save: nothing stored

    _prompts(tmp_path, [{"prompt": f"other {i}"} for i in range(8)])  # another dataset, the same --out
    changed = hermes_sessions(*args)
    assert changed.returncode == 2 and "is the trajectory of another prompt 0" in changed.stderr
    assert len(changed.stderr.strip().splitlines()) == 1


def test_per_line_settings_failures_and_a_dying_worker(hermes_sessions, tmp_path):
    prompts = _prompts(tmp_path, [
        {"prompt": "plain", "model": "model-a"},
        {"prompt": "cut short", "max_turns": 1},
        {"prompt": "unknown toolset", "toolsets": ["nope"]},
        {"prompt": "please CRASH now", "toolsets": "crash"},
        {"prompt": "after the crash", "toolsets": ["crash"]},
    ])
    out = tmp_path / "out.jsonl"
    script = _script(tmp_path, [{"tool_calls": [["maybe_crash", {}]]}, {"tool_calls": [["maybe_crash", {}]]},
                                "done"])
    run = hermes_sessions("batch", str(prompts), "--out", str(out), "--api-mode", "scripted", "--base-url", script,
                          "-t", "crash", "--json", timeout=120)
    assert run.returncode == 1, run.stderr
    summary = json.loads(run.stdout)
    assert (summary["written"], summary["failed"]) == (3, 2)
    errors = {e["prompt_index"]: e["error"] for e in summary["errors"]}
    assert "nope" in errors[2] and errors[3] == "its worker died (exit 3)"
    entries = {e["prompt_index"]: e for e in _lines(out)}
    assert set(entries) == {0, 1, 4}  # a failed prompt is not written: a rerun tries it again
    assert entries[0]["metadata"]["model"] == "model-a" and entries[0]["completed"] is True
    budget = entries[1]
    assert (budget["exit_reason"], budget["completed"], budget["partial"]) == ("budget_exhausted", False, True)
    assert entries[4]["tool_stats"]["maybe_crash"] == {"count": 2, "success": 2, "failure": 0}
    rerun = hermes_sessions("batch", str(prompts), "--out", str(out), "--api-mode", "scripted", "--base-url", script,
                            "-t", "crash", timeout=120)  # the failed two run again, and fail again
    assert rerun.returncode == 1 and len(_lines(out)) == 3
    assert "prompt 2 failed: unknown toolset" in rerun.stderr and "prompt 3 failed: its worker died (exit 3)" in rerun.stderr
    assert "2 prompt(s) failed (run the same command to try them again)" in rerun.stderr


@pytest.mark.parametrize("rows, said", [
    (['{"prompt": "ok"}', "not json", '{"no": "prompt"}', '["a list"]', '{"prompt": "x", "max_turns": 0}'],
     "line 2: not JSON (Expecting value); line 3: no \"prompt\" string; line 4: not a JSON object; "
     "line 5: \"max_turns\" must be at least 1"),
    (['{"prompt": "x", "toolsets": 3}'], "line 1: \"toolsets\" is int, not a list or string"),
    (['{"prompt": "x\\ud800y"}'], "line 1: the \"prompt\" holds a lone surrogate escape (\\ud800-\\udfff)"),  # was a traceback
    ([""], "no prompts"),
])
def test_a_bad_prompts_file_is_named_line_by_line_before_any_run(hermes_sessions, tmp_path, rows, said):
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.jsonl"
    run = hermes_sessions("batch", str(prompts), "--out", str(out), "--api-mode", "scripted", "--base-url",
                          _script(tmp_path, ["ok"]))
    assert run.returncode == 2 and said in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert not out.exists()


def _written(out: Path) -> int:
    return out.read_text().count("\n") if out.exists() else 0


def _workers_of(parent: int) -> list:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if f"HERMES_BATCH_PARENT={parent}".encode() in (proc / "environ").read_bytes().split(b"\0"):
                found.append(int(proc.name))
        except (OSError, ValueError):
            pass
    return found


def _slow_batch(tmp_path, jobs: int, seconds: float) -> tuple:
    """(the batch's command line, its --out): ``jobs`` prompts on 2 workers, each one tool call this long."""
    prompts = _prompts(tmp_path, [{"prompt": f"job {i}"} for i in range(jobs)])
    out = tmp_path / "out.jsonl"
    script = _script(tmp_path, [{"tool_calls": [["slow", {"step": 1, "seconds": seconds}]]}, "done"])
    return ["batch", str(prompts), "--out", str(out), "--workers", "2", "--api-mode", "scripted", "--base-url",
            script, "-t", "slow"], out


def test_kill_9_loses_nothing_written_and_the_rerun_finishes_each_prompt_once(hermes_sessions, tmp_path):
    args, out = _slow_batch(tmp_path, 24, 0.15)
    proc = hermes_sessions.start(*args)
    try:
        wait_until(lambda: _written(out) >= 6, proc)
        assert len(_workers_of(proc.pid)) == 2
    finally:
        kill_9(proc)
    wait_until(lambda: not _workers_of(proc.pid), timeout=10)  # the workers die with the command that started them
    before = len(_lines(out)) if out.read_bytes().endswith(b"\n") else None
    rerun = hermes_sessions(*args, "--json", timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    entries = _lines(out)
    assert sorted(e["prompt_index"] for e in entries) == list(range(24))  # each once: none lost, none twice
    if before is not None:
        assert json.loads(rerun.stdout)["already"] == before


def test_ctrl_c_stops_the_batch_and_says_how_to_go_on(hermes_sessions, tmp_path):
    args, out = _slow_batch(tmp_path, 30, 0.2)
    proc = hermes_sessions.start(*args)
    wait_until(lambda: _written(out) >= 3, proc)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=30)[1]
    assert proc.returncode == 130, err
    written = len(_lines(out))
    assert f"interrupted: {written} trajectories written; run the same command to go on" in err
    assert not _workers_of(proc.pid) and 3 <= written < 30


def test_a_distros_batch_runs_its_plugins_and_config_in_every_worker(hermes_sessions, tmp_path):
    distro = tmp_path / "distro.yaml"
    distro.write_text("name: batchy\n"
                      "plugins:\n  only: [batch, scripted-provider, sessions-sqlite, sessions-test-tools]\n"
                      "config:\n  agent:\n    max_turns: 1\n")
    prompts = _prompts(tmp_path, [{"prompt": f"q{i}"} for i in range(4)])
    out = tmp_path / "out.jsonl"
    run = hermes_sessions("--distro", str(distro), "batch", str(prompts), "--out", str(out), "--workers", "2",
                          "--api-mode", "scripted", "--base-url", _script(tmp_path, TOOL_THEN_ANSWER))
    assert run.returncode == 0, run.stderr
    for e in _lines(out):
        assert set(e["tool_stats"]) == {"slow", "maybe_crash", "append", "append_parallel", "session_search"}  # the distro's plugins' tools
        assert e["exit_reason"] == "budget_exhausted"  # its config: one model call a turn


def test_batch_help_offers_runs_options_but_resume(hermes_sessions):
    shown = hermes_sessions("batch", "--help").stdout
    assert "--workers" in shown and "--max-turns" in shown and "--no-save" in shown and "--resume" not in shown


def test_an_out_file_that_cannot_be_written_is_one_line_before_any_run(hermes_sessions, tmp_path):
    prompts = _prompts(tmp_path, [{"prompt": "q"}])
    run = hermes_sessions("batch", str(prompts), "--out", str(tmp_path / "missing" / "out.jsonl"), "--api-mode",
                          "scripted", "--base-url", _script(tmp_path, ["ok"]))
    assert run.returncode == 1 and "cannot write the trajectories there: No such file or directory" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert json.loads(hermes_sessions("sessions", "list", "--json").stdout) == []  # nothing ran


@pytest.mark.parametrize("options, said", [
    (["--api-mode", "nope"], "hermes: error: no model provider named 'nope' is enabled (enabled: "),
    (["-t", "nosuch"], "hermes: error: unknown toolset 'nosuch'; known: "),
])
def test_a_provider_or_toolset_that_cannot_be_had_is_one_line_before_any_prompt_runs(hermes_sessions, tmp_path,
                                                                                      options, said):
    prompts, out = _prompts(tmp_path, [{"prompt": f"q{i}"} for i in range(3)]), tmp_path / "out.jsonl"
    run = hermes_sessions("batch", str(prompts), "--out", str(out), "--workers", "2", "--api-mode", "scripted",
                          "--base-url", _script(tmp_path, ["ok"]), *options, timeout=120)
    assert run.returncode == 1 and run.stderr.startswith(said), run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert out.read_text() == "" and json.loads(hermes_sessions("sessions", "list", "--json").stdout) == []


def test_the_configured_mcp_servers_start_in_the_workers_alone(hermes_sessions, home, tmp_path):
    """The command's own process runs no prompt: it starts no MCP server (each worker starts its own)."""
    import sys

    import yaml

    from tests.mcp.conftest import SERVER

    started = tmp_path / "started"
    server = {"command": "/bin/sh", "args": ["-c", f'echo $PPID >> "{started}"; exec "{sys.executable}" "{SERVER}"']}
    (home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"t": server}}))
    prompts, out = _prompts(tmp_path, [{"prompt": f"q{i}"} for i in range(4)]), tmp_path / "out.jsonl"
    run = hermes_sessions("batch", str(prompts), "--out", str(out), "--workers", "2", "--api-mode", "scripted",
                          "--base-url", _script(tmp_path, ["ok"]), "--json", timeout=120)
    assert run.returncode == 0 and json.loads(run.stdout)["written"] == 4, run.stderr
    assert all("mcp__t__echo" in e["conversations"][0]["value"] for e in _lines(out))  # the workers' runs had them
    parents = started.read_text().split()
    assert len(parents) == 2 and len(set(parents)) == 2  # one per worker, none for the command


def test_a_key_the_model_types_into_a_call_is_masked_in_the_trajectory(hermes_sessions, tmp_path):
    """The store masks a key in a tool call's arguments; a trajectory (a training set, shared) did not."""
    key = "sk-batch-trajectory-0123456789"
    hermes_sessions.env["HERMES_TEST_API_KEY"] = key  # a name that says it holds a key
    prompts = _prompts(tmp_path, [{"prompt": "go"}])
    steps = [{"tool_calls": [["slow", {"step": 1, "seconds": 0, "note": key}]]}, "done"]
    run = hermes_sessions("batch", str(prompts), "--out", "-", "--workers", "1", "--api-mode", "scripted",
                          "--base-url", _script(tmp_path, steps), "-t", "slow", "--no-save")
    assert run.returncode == 0, run.stderr
    assert key not in run.stdout
    (entry,) = [json.loads(line) for line in run.stdout.splitlines()]
    call = json.loads(entry["conversations"][2]["value"].split("<tool_call>\n")[1].split("\n</tool_call>")[0])
    assert call["arguments"]["note"] == "[hermes: the value of $HERMES_TEST_API_KEY was masked]"
