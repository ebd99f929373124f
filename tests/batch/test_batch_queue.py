"""``hermes batch`` on a DBOS queue in a real PostgreSQL: the command puts the prompts on the queue and writes the
trajectories, two ``hermes batch worker`` processes run them, one is killed halfway; every prompt is written once
and every tool's side effect happened once."""

from __future__ import annotations

import json
import subprocess

import pytest

from plugins_providers.testserver import WireServer, reply
from tests.conftest import kill_9, wait_until

PROMPTS = 200
HELD = 100  # prompts from this index wait in their tool until the test lets them go


@pytest.fixture
def model(tmp_path):
    """A model that answers by the conversation: a prompt "q<i>" first calls the append tool with "q<i>", then
    answers "done q<i>" (stateless: a prompt resumed by another worker gets the answer its place asks for)."""
    effects, started, hold = tmp_path / "effects.txt", tmp_path / "started.txt", tmp_path / "hold"

    def answer(request):
        messages = request.body["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        if messages[-1]["role"] == "tool":
            return reply(f"done {prompt}")
        args = {"path": str(effects), "started": str(started), "text": prompt}
        if int(prompt[1:]) >= HELD:
            args["hold"] = str(hold)
        return reply(tool_calls=[("append", args)])

    server = WireServer(default=answer).start()
    server.effects, server.started, server.hold = effects, started, hold
    yield server
    server.stop()


def _pending_on(url: str, pid: int) -> int:
    import psycopg

    with psycopg.connect(url) as db:
        return db.execute("select count(*) from dbos.workflow_status where status = 'PENDING' and executor_id like %s",
                          (f"%-{pid}-%",)).fetchone()[0]


def test_two_workers_run_a_batch_once_when_one_is_killed_halfway(hermes_sessions, home, tmp_path, model,  # noqa: F811
                                                                  postgres_url):
    (home / "config.yaml").write_text(f"durable:\n  engine: dbos\n  database_url: {postgres_url}\n"
                                      f"sessions:\n  store: postgres\n  database_url: {postgres_url}\n")
    hermes_sessions.env["OPENAI_API_KEY"] = "k"
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"prompt": f"q{i}"}) + "\n" for i in range(PROMPTS)))
    out = tmp_path / "out.jsonl"
    model.hold.touch()

    def start(*args):
        return subprocess.Popen([*hermes_sessions.argv, *args], env=hermes_sessions.env, cwd=hermes_sessions.cwd,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    workers = [start("batch", "worker", "--workers", "2") for _ in range(2)]
    command = start("batch", str(prompts), "--out", str(out), "--workers", "0", "--base-url", model.openai_url,
                    "--api-mode", "chat_completions", "-m", "test-model", "-t", "effects", "--json")
    try:
        def halfway() -> bool:  # the first prompts are done, and the first worker waits in a held prompt
            done = model.effects.exists() and len(model.effects.read_text().splitlines()) >= HELD
            return done and _pending_on(postgres_url, workers[0].pid) > 0

        wait_until(halfway, command, timeout=240, every=0.2)
        kill_9(workers[0])
        model.hold.unlink()
        summary_text, err = command.communicate(timeout=240)
        assert command.returncode == 0, err
    finally:
        for proc in [command, *workers]:
            kill_9(proc)
    summary = json.loads(summary_text)
    assert (summary["written"], summary["failed"]) == (PROMPTS, 0)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(e["prompt_index"] for e in lines) == list(range(PROMPTS))  # every prompt written once
    appended = model.effects.read_text().splitlines()
    assert sorted(appended) == sorted(f"q{i}" for i in range(PROMPTS))  # every side effect once
    assert all(e["completed"] and "done q" in e["conversations"][-1]["value"] for e in lines), lines[0]["conversations"][-1]
    # the same command again: everything is written; nothing runs
    again = subprocess.run([*hermes_sessions.argv, "batch", str(prompts), "--out", str(out), "--workers", "0",
                            "--api-mode", "chat_completions", "-m", "test-model"], env=hermes_sessions.env,
                           cwd=hermes_sessions.cwd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and f"all {PROMPTS} prompts are in" in again.stderr


def test_a_worker_without_a_queue_says_how_to_get_one(hermes_sessions):  # noqa: F811
    done = hermes_sessions("batch", "worker")
    assert done.returncode == 2 and "set durable.engine: dbos and durable.database_url: postgresql://" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_workers_0_is_for_a_queue(hermes_sessions, tmp_path):  # noqa: F811
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"prompt": "x"}\n')
    script = tmp_path / "s.json"
    script.write_text('["hi"]')
    done = hermes_sessions("batch", str(prompts), "--out", str(tmp_path / "o.jsonl"), "--workers", "0",
                           "--api-mode", "scripted", "--base-url", str(script))
    assert done.returncode == 2 and "--workers 0 runs nothing here" in done.stderr
