"""hermes cron: schedules in hermes-agent's forms, jobs in a file any number of processes share, each run its own
agent with its answer kept; `tick` and `daemon` as subprocesses, two ticks at once, a run killed midway; and the
model's cronjob tool."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from plugins import cron
from plugins.cron.schedule import parse
from plugins_providers.testserver import reply
from tests.conftest import ROOT, hermes_command, kill_9, wait_until

SAT = datetime(2026, 12, 5, 23, 30).astimezone()  # a Saturday evening


@pytest.mark.parametrize("text, first, then", [
    ("30m", "2026-12-06 00:00", None),
    ("90s", "2026-12-05 23:31:30", None),
    ("2 hours", "2026-12-06 01:30", None),
    ("every 2h", "2026-12-06 01:30", "2026-12-06 03:30"),
    ("every 30 minutes", "2026-12-06 00:00", "2026-12-06 00:30"),
    ("0 9 * * 1-5", "2026-12-07 09:00", "2026-12-08 09:00"),  # Monday to Friday
    ("*/15 * * * *", "2026-12-05 23:45", "2026-12-06 00:00"),
    ("0 0 1 jan *", "2027-01-01 00:00", "2028-01-01 00:00"),
    ("30 8 * * 7", "2026-12-06 08:30", "2026-12-13 08:30"),  # 7 is Sunday too
    ("0 12 13 * fri", "2026-12-11 12:00", "2026-12-13 12:00"),  # both days given: either (POSIX)
    ("0 0 29 2 *", "2028-02-29 00:00", "2032-02-29 00:00"),
    ("2026-12-24T09:00", "2026-12-24 09:00", None),
])
def test_schedules_in_hermes_agents_forms(text, first, then):
    schedule = parse(text)
    start = schedule.first(SAT)
    assert start.strftime("%Y-%m-%d %H:%M:%S").startswith(first)
    following = schedule.after(start, start)
    assert (following.strftime("%Y-%m-%d %H:%M") if following else None) == then


def test_runs_missed_while_nothing_ran_are_not_made_up():
    every = parse("every 1h")
    late = datetime(2026, 12, 6, 5, 10).astimezone()
    assert every.after(datetime(2026, 12, 6, 0, 0).astimezone(), late) == datetime(2026, 12, 6, 6, 10).astimezone()
    daily = parse("0 9 * * *")
    assert daily.after(datetime(2026, 12, 1, 9, 0).astimezone(), late).strftime("%d %H:%M") == "06 09:00"


@pytest.mark.parametrize("text, said", [
    ("every 10s", "'every' takes a duration of at least a minute"),
    ("61 * * * *", "'61' is outside 0-59"),
    ("*/0 * * * *", "the step in '*/0' is not a whole number above 0"),
    ("1-x * * * *", "'x' is not a number it takes"),
    ("* * * *", "is not a schedule: use 30m (once), every 2h"),
    ("tomorrow", "is not a schedule"),
])
def test_a_schedule_that_cannot_be_read_says_how_to_write_one(text, said):
    with pytest.raises(ValueError, match=said.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        parse(text)


@pytest.fixture
def scripted(hermes_home, tmp_path):
    """config.yaml's provider is the scripted one: ``scripted(steps)`` sets what each run's model answers."""
    script = tmp_path / "script.json"

    def write(steps):
        script.write_text(json.dumps(steps))
        (hermes_home / "config.yaml").write_text(f"api_mode: scripted\nbase_url: {script}\nmodel: test\n")

    write(["the build is fine"])
    return write


def jobs_file(hermes_home) -> dict:
    return json.loads((hermes_home / "cron" / "schedule.json").read_text())


def test_add_list_pause_resume_run_and_remove(hermes, hermes_home, scripted, tmp_path):
    # a data folder shared with hermes-agent: its own cron/jobs.json is neither read nor written
    theirs = json.dumps({"jobs": [{"id": "abc123def456", "schedule": {"kind": "interval", "minutes": 60},
                                   "next_run_at": "2026-12-06T00:00:00"}]})
    (hermes_home / "cron").mkdir()
    (hermes_home / "cron" / "jobs.json").write_text(theirs)
    added = hermes("cron", "add", "every 1h", "check", "the", "build", "--name", "build", "--json")
    assert added.returncode == 0, added.stderr
    job = json.loads(added.stdout)
    assert (job["name"], job["prompt"], job["status"]) == ("build", "check the build", "scheduled")
    assert "nothing has run the jobs lately: start `hermes cron daemon`" in added.stderr
    listed = hermes("cron", "list")
    assert listed.stdout.startswith(f"{job['id']}  scheduled every 1h") and "build" in listed.stdout
    assert (hermes_home / "cron" / "jobs.json").read_text() == theirs
    assert hermes("cron", "pause", "build").returncode == 0  # by name, id or id prefix
    assert json.loads(hermes("cron", "list", "--json").stdout)["jobs"][0]["status"] == "paused"
    # resumed after its time passed while paused: from its next time after now, not at once
    state = jobs_file(hermes_home)
    state["jobs"][0]["next_run"] = "2026-01-01T09:00:00+00:00"
    (hermes_home / "cron" / "schedule.json").write_text(json.dumps(state))
    assert hermes("cron", "resume", job["id"][:4]).returncode == 0
    resumed = jobs_file(hermes_home)["jobs"][0]
    assert resumed["enabled"] and datetime.fromisoformat(resumed["next_run"]) > datetime.now().astimezone()
    assert json.loads(hermes("cron", "tick", "--json").stdout)["ran"] == []
    scripted([{"tool_calls": [["terminal", {"command": "echo compiled"}]]}, "The build is fine."])
    with open(hermes_home / "config.yaml", "a") as config:  # hermes-agent's key: the answers kept of each job
        config.write("cron:\n  output_retention: 2\n")
    outputs = hermes_home / "cron" / "output" / job["id"]
    outputs.mkdir(parents=True)
    for day in ("20260101", "20260102", "20260103"):
        (outputs / f"{day}-090000.md").write_text("an earlier answer")
    ran = hermes("cron", "run", "build", "--json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    done = json.loads(ran.stdout)
    assert sorted(p.name for p in outputs.iterdir()) == ["20260103-090000.md", os.path.basename(done["last_output"])]
    assert (done["runs"], done["last_status"], done["status"]) == (1, "ok", "scheduled")
    text = open(done["last_output"], encoding="utf-8").read()
    assert text.startswith("# build\n") and "## Prompt\n\ncheck the build" in text and "The build is fine." in text
    assert done["next_run"] == resumed["next_run"]  # running it by hand leaves its schedule alone
    shown = hermes("cron", "show", "build")
    assert shown.returncode == 0 and "runs      1, last " in shown.stdout and shown.stdout.rstrip().endswith(
        "The build is fine.")
    assert json.loads(hermes("cron", "show", "build", "--json").stdout)["output"] == text
    listed_in_chat = cron._slash_cron("", None)
    assert listed_in_chat.startswith(f"{job['id']}  scheduled every 1h") and "(last: ok)" in listed_in_chat
    assert hermes("cron", "remove", job["id"]).returncode == 0 and jobs_file(hermes_home)["jobs"] == []
    assert cron._slash_cron("", None).startswith("No cron jobs")
    assert os.path.exists(done["last_output"])  # its outputs stay
    # mistakes: one line each
    for args, said in ((("add", "bogus", "x"), "'bogus' is not a schedule"), (("add", "2020-01-01T00:00", "x"),
                       "is in the past"), (("remove", "nope"), "no cron job 'nope' (there are: none)"),
                       (("run", "nope"), "no cron job 'nope'")):
        out = hermes("cron", *args)
        assert out.returncode == 2 and said in out.stderr and "Traceback" not in out.stderr, (args, out.stderr)
    (hermes_home / "cron" / "schedule.json").write_text("{not json")
    out = hermes("cron", "list")
    assert out.returncode == 1 and "schedule.json cannot be read" in out.stderr and "Traceback" not in out.stderr


def test_tick_runs_what_is_due_once_and_says_a_failure(hermes, hermes_home, scripted, tmp_path):
    nothing = hermes("cron", "tick", "--json")  # no jobs yet: nothing written (hermes serve ticks every data folder)
    assert nothing.returncode == 0 and json.loads(nothing.stdout)["ran"] == []
    assert not (hermes_home / "cron").exists()
    assert hermes("cron", "add", "1s", "once soon").returncode == 0
    assert hermes("cron", "add", "every 1h", "later").returncode == 0
    time.sleep(1.2)
    ticked = hermes("cron", "tick", "--json")
    assert ticked.returncode == 0, ticked.stderr
    [ran] = json.loads(ticked.stdout)["ran"]
    assert (ran["prompt"], ran["last_status"], ran["status"], ran["next_run"]) == ("once soon", "ok", "done", None)
    assert json.loads(hermes("cron", "tick", "--json").stdout)["ran"] == []  # done: not again
    listed = json.loads(hermes("cron", "list", "--json").stdout)
    assert listed["nothing_ticks"] is False and listed["last_tick"]
    doctor = json.loads(hermes("doctor", "--offline", "--json").stdout)
    [line] = [c for c in doctor if c["name"] == "cron"]
    assert line["status"] == "ok" and line["detail"].startswith("2 job(s); the last tick was ")
    # a run that fails is recorded with why, and the tick goes on
    scripted([{"error": {"reason": "auth", "message": "the key was refused", "status_code": 401}}])
    assert hermes("cron", "add", "1s", "fails").returncode == 0
    time.sleep(1.2)
    [failed] = json.loads(hermes("cron", "tick", "--json").stdout)["ran"]
    assert failed["last_status"] == "error" and "the key was refused" in failed["last_error"]
    assert "## Error" in open(failed["last_output"], encoding="utf-8").read()
    # a job spoilt by a hand edit is paused with why; the others still run
    state = jobs_file(hermes_home)
    state["jobs"][1]["schedule"] = "every blue moon"
    state["jobs"][1]["next_run"] = "2000-01-01T00:00:00+00:00"
    (hermes_home / "cron" / "schedule.json").write_text(json.dumps(state))
    scripted(["fine again"])
    assert hermes("cron", "add", "1s", "still runs").returncode == 0
    time.sleep(1.2)
    assert [j["prompt"] for j in json.loads(hermes("cron", "tick", "--json").stdout)["ran"]] == ["still runs"]
    spoilt = jobs_file(hermes_home)["jobs"][1]
    assert (spoilt["enabled"], spoilt["last_error"]) == (False, "paused: 'every blue moon': 'every' takes a duration "
                                                                "of at least a minute (every 30m, every 2h)")


def _hermes(*args, env_home, cwd=None):
    env = {**os.environ, "HERMES_HOME": str(env_home),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}
    return subprocess.Popen(hermes_command() + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=cwd)


def test_two_ticks_at_once_run_a_job_once_and_a_killed_run_is_said(hermes, hermes_home, scripted, tmp_path):
    scripted([{"tool_calls": [["terminal", {"command": "sleep 2; echo slow"}]]}, "done"])
    assert hermes("cron", "add", "1s", "slow job", "--json").returncode == 0
    time.sleep(1.2)
    ticks = [_hermes("cron", "tick", "--json", env_home=hermes_home, cwd=tmp_path) for _ in range(2)]
    ran = [json.loads(t.communicate(timeout=60)[0])["ran"] for t in ticks]
    assert sorted(len(r) for r in ran) == [0, 1]
    [job] = jobs_file(hermes_home)["jobs"]
    assert job["runs"] == 1 and job["running"] == 0
    # kill -9 of the process running a job: the next tick says it was cut short
    assert hermes("cron", "add", "1s", "killed job").returncode == 0
    time.sleep(1.2)
    tick = _hermes("cron", "tick", env_home=hermes_home, cwd=tmp_path)
    wait_until(lambda: any(j["running"] for j in jobs_file(hermes_home)["jobs"]), tick)
    kill_9(tick)
    hermes("cron", "tick")
    cut = [j for j in jobs_file(hermes_home)["jobs"] if j["prompt"] == "killed job"][0]
    assert (cut["last_status"], cut["running"]) == ("interrupted", 0)
    assert cut["last_error"] == "its process ended before it did"


def test_the_daemon_runs_jobs_as_they_come_due_until_stopped(hermes, hermes_home, scripted, tmp_path):
    daemon = _hermes("cron", "daemon", "--every", "1", env_home=hermes_home, cwd=tmp_path)
    try:
        assert hermes("cron", "add", "2s", "from the daemon").returncode == 0
        wait_until(lambda: jobs_file(hermes_home)["jobs"][0]["runs"] == 1, daemon, timeout=30)
        assert jobs_file(hermes_home)["jobs"][0]["last_status"] == "ok"
        daemon.send_signal(signal.SIGINT)
        assert daemon.wait(timeout=20) != 0 and "Traceback" not in daemon.stderr.read()
    finally:
        kill_9(daemon)


def test_the_model_schedules_lists_pauses_and_removes_jobs(make_agent, hermes_home):
    steps = [{"tool_calls": [["cronjob", {"action": "create", "schedule": "every 1d", "prompt": "summarise the news",
                                          "name": "news", "skills": ["news-digest"]}],
                             ["cronjob", {"action": "create", "schedule": "someday", "prompt": "x"}],
                             ["cronjob", {"action": "list"}]]},
             {"tool_calls": [["cronjob", {"action": "update", "job_id": "news", "schedule": "every 2d",
                                          "skills": ["digest"], "prompt": "summarise the news in French"}],
                             ["cronjob", {"action": "update", "job_id": "news", "workdir": "relative/folder"}],
                             ["cronjob", {"action": "update", "job_id": "news", "skills": "digest"}]]},
             {"tool_calls": [["cronjob", {"action": "pause", "job_id": "news"}],
                             ["cronjob", {"action": "remove", "job_id": "news"}],
                             ["cronjob", {"action": "remove", "job_id": "news"}],
                             ["cronjob", {"action": "explode"}]]},
             "done"]
    agent = make_agent(cron, script=steps)
    created, bad, listed, updated, no_folder, no_list, paused, removed, again, unknown = [
        json.loads(m["content"]) for m in agent.run_conversation("go")["messages"] if m["role"] == "tool"]
    changed = updated["updated"]  # hermes-agent's update: what is given changes, the rest stays
    assert (changed["schedule"], changed["skills"], changed["prompt"], changed["name"]) == (
        "every 2d", ["digest"], "summarise the news in French", "news")
    assert "is no folder" in no_folder["error"] and "skills" in no_list["error"]
    assert created["created"]["name"] == "news" and created["created"]["status"] == "scheduled"
    assert created["created"]["skills"] == ["news-digest"]
    assert "no process runs the jobs yet" in created["note"]
    assert bad["error"].startswith("cronjob: 'someday' is not a schedule")
    assert [j["name"] for j in listed["jobs"]] == ["news"]
    assert paused == {"paused": created["created"]["id"]}  # no job waits now: no note
    assert removed["removed"] == created["created"]["id"] and "no cron job 'news'" in again["error"]
    assert unknown == {"error": "cronjob: unknown action 'explode'; use create, list, update, pause, resume, remove"}
    # a scheduled run cannot change the schedule
    agent = make_agent(cron, platform="cron", script=[{"tool_calls": [["cronjob", {
        "action": "create", "schedule": "1m", "prompt": "again"}]]}, "done"])
    [refused] = [json.loads(m["content"]) for m in agent.run_conversation("go")["messages"] if m["role"] == "tool"]
    assert refused == {"error": "cronjob: a scheduled run cannot change the schedule (ask the user)"}


def test_schedules_are_read_in_the_users_time_zone(hermes, hermes_home):
    """hermes-agent's timezone key (and HERMES_TIMEZONE): `0 9 * * *` is nine in the user's zone, not the machine's
    (UTC here); so is an ISO time without an offset."""
    (hermes_home / "config.yaml").write_text("timezone: Asia/Kolkata\n")
    assert hermes("cron", "add", "0 9 * * *", "morning").returncode == 0
    assert hermes("cron", "add", "2099-01-02T09:30", "later").returncode == 0
    jobs = json.loads(hermes("cron", "list", "--json").stdout)["jobs"]
    runs = {j["prompt"]: datetime.fromisoformat(j["next_run"]) for j in jobs}
    assert runs["morning"].utcoffset().total_seconds() == 5.5 * 3600 and runs["morning"].hour == 9
    assert runs["later"].isoformat() == "2099-01-02T09:30:00+05:30"
    out = hermes("cron", "add", "0 9 * * *", "west", env={"HERMES_TIMEZONE": "America/Los_Angeles"})
    assert out.returncode == 0, out.stderr
    west = [j for j in json.loads(hermes("cron", "list", "--json").stdout)["jobs"] if j["prompt"] == "west"][0]
    assert datetime.fromisoformat(west["next_run"]).hour == 9 and west["next_run"].endswith(("-08:00", "-07:00"))


def test_a_jobs_flagged_command_is_refused_unless_approvals_cron_mode_approves(hermes, hermes_home, scripted,
                                                                              tmp_path):
    """Nobody is there to answer a cron run's approval question: refused (hermes-agent's approvals.cron_mode: deny,
    the default), or with cron_mode: approve run, each said in the log."""
    steps = [{"tool_calls": [["terminal", {"command": "echo LAUNCH"}]]}, "done"]
    job = json.loads(hermes("cron", "add", "every 1h", "launch", "--name", "launch", "--json").stdout)
    for mode, ran in (("deny", False), ("approve", True)):
        scripted(steps)
        with open(hermes_home / "config.yaml", "a") as config:
            config.write(f"approvals:\n  cron_mode: {mode}\n  extra_patterns: {{launch: LAUNCH}}\n")
        done = hermes("cron", "run", job["id"], "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
        [result] = [m["content"] for m in json.loads(hermes("sessions", "show", session, "--json").stdout)["messages"]
                    if m["role"] == "tool"]
        assert ('"output": "LAUNCH' in result) is ran and ("nobody was available to approve it" in result) is not ran
        assert ("approved without asking (approvals.cron_mode: approve)" in done.stderr) is ran
    scripted(steps)
    with open(hermes_home / "config.yaml", "a") as config:
        config.write("approvals:\n  cron_mode: maybe\n")
    wrong = hermes("cron", "run", job["id"])
    assert wrong.returncode == 2 and "approvals.cron_mode" in wrong.stderr and "deny, approve" in wrong.stderr


def test_jobs_due_together_run_side_by_side_up_to_max_parallel_jobs(hermes, hermes_home, scripted, tmp_path):
    """A long job does not hold back those due with it (hermes-agent runs them in parallel); cron.max_parallel_jobs
    bounds how many at once, 1 one after another."""
    log = tmp_path / "ran.log"
    scripted([{"tool_calls": [["terminal", {"command": f"echo start >> {log}; sleep 1; echo end >> {log}"}]]}, "done"])
    config = (hermes_home / "config.yaml").read_text()
    for parallel, order in ((None, ["start", "start", "end", "end"]), (1, ["start", "end", "start", "end"])):
        if parallel:
            (hermes_home / "config.yaml").write_text(config + f"cron:\n  max_parallel_jobs: {parallel}\n")
        log.unlink(missing_ok=True)
        for name in ("a", "b"):
            assert hermes("cron", "add", "1s", f"job {name}").returncode == 0
        time.sleep(1.2)
        ticked = hermes("cron", "tick", "--json", cwd=tmp_path)
        assert ticked.returncode == 0, ticked.stderr
        ran = json.loads(ticked.stdout)["ran"]
        assert sorted(j["prompt"] for j in ran) == ["job a", "job b"] and {j["last_status"] for j in ran} == {"ok"}
        assert log.read_text().split() == order, parallel


def test_hermes_agents_jobs_are_imported_once(hermes, hermes_home, tmp_path):
    """`hermes cron import`: hermes-agent's jobs.json jobs with their prompt, name, schedule, model and toolsets,
    paused when they were; a script job and a once job whose time passed left out, a delivery to Telegram kept, one
    elsewhere said; a second import adds nothing."""
    (hermes_home / "cron").mkdir(exist_ok=True)
    agents = hermes_home / "cron" / "jobs.json"  # a data folder shared with hermes-agent
    agents.write_text(json.dumps({"jobs": [
        {"id": "a1", "name": "build", "prompt": "check the build", "schedule": {"kind": "interval", "minutes": 30},
         "enabled": True, "model": "gpt-5.2", "enabled_toolsets": ["terminal"], "deliver": "whatsapp",
         "skills": ["ci-triage"], "provider": "openrouter", "workdir": "/srv/app"},
        {"id": "a2", "name": "standup", "workdir": str(tmp_path), "prompt": "write the standup notes",
         "enabled": False, "state": "paused",
         "schedule": {"kind": "cron", "expr": "0 9 * * 1-5"}, "deliver": "origin",
         "origin": {"platform": "telegram", "chat_id": "-1001234", "thread_id": "17"}},
        {"id": "a3", "name": "later", "prompt": "remind me", "schedule": {"kind": "once",
                                                                           "run_at": "2099-01-01T09:00:00+00:00"},
         "deliver": "matrix:!ops:example.org"},  # a Matrix room's id holds a colon
        {"id": "a4", "name": "past", "prompt": "too late", "schedule": {"kind": "once",
                                                                         "run_at": "2020-01-01T09:00:00+00:00"}},
        {"id": "a5", "name": "disk", "prompt": "", "script": "df -h", "no_agent": True,
         "schedule": {"kind": "interval", "minutes": 60}},
        {"id": "a6", "name": "watch", "prompt": "", "script": "watch.sh", "no_agent": True,
         "schedule": {"kind": "interval", "minutes": 60}, "context_from": ["a1"], "repeat": {"times": 5, "completed": 2}},
        {"id": "a7", "name": "spent", "prompt": "twice", "schedule": {"kind": "interval", "minutes": 60},
         "repeat": {"times": 2, "completed": 2}}]}))
    (hermes_home / "scripts").mkdir()
    (hermes_home / "scripts" / "watch.sh").write_text("echo fine\n")
    assert hermes("cron", "list").stdout.endswith(f"hermes-agent's are in {agents}: `hermes cron import` brings them "
                                                  "here.\n")
    out = hermes("cron", "import")
    assert out.returncode == 0 and out.stdout == f"Imported 4 jobs from {agents}.\n", out.stderr
    assert "left out: past: a once job whose time has passed" in out.stderr
    assert "left out: disk: the job's script 'df -h' is no file in " in out.stderr  # not in scripts/: not run
    assert "note: watch: of the jobs its prompt follows (context_from)" not in out.stderr  # a1 came too
    assert "note: build: its answers are kept in cron/output, not sent to whatsapp" in out.stderr
    assert "note: build: its workdir /srv/app is no folder here: it runs where the runs start" in out.stderr
    jobs = {j["name"]: j for j in json.loads(hermes("cron", "list", "--json").stdout)["jobs"]}
    assert (jobs["build"]["schedule"], jobs["build"]["model"], jobs["build"]["toolsets"]) == ("every 30m", "gpt-5.2",
                                                                                             ["terminal"])
    assert (jobs["build"]["skills"], jobs["build"]["provider"]) == (["ci-triage"], "openrouter")
    assert jobs["standup"]["status"] == "paused" and jobs["standup"]["schedule"] == "0 9 * * 1-5"
    assert jobs["standup"]["deliver"] == "telegram:-1001234" and jobs["build"]["deliver"] == ""
    assert (jobs["standup"]["workdir"], jobs["build"]["workdir"]) == (os.path.realpath(tmp_path), "")
    assert jobs["later"]["deliver"] == "matrix:!ops:example.org"
    assert jobs["later"]["next_run"].startswith("2099-01-01") and set(jobs) == {"build", "standup", "later", "watch"}
    assert (jobs["watch"]["script"], jobs["watch"]["no_agent"]) == ("watch.sh", True)
    assert jobs["watch"]["context_from"] == [jobs["build"]["id"]]  # hermes-agent's id a1, as it is called here
    assert jobs["watch"]["repeat"] == 3 and jobs["build"]["repeat"] is None  # the runs it had left
    assert "left out: spent: it made its 2 runs" in out.stderr
    again = json.loads(hermes("cron", "import", "--json").stdout)
    assert (again["imported"], again["already_here"]) == (0, 4)
    assert hermes("cron", "import", tmp_path / "none.json").stderr.startswith("hermes: error: ")


def test_a_job_loads_its_skills_and_reaches_its_own_endpoint(hermes, hermes_home, wire_server, tmp_path):
    """hermes-agent's per-job skills, provider and base_url: the job's run loads its skill with the prompt and asks
    the endpoint the job names, not config's (real openai SDK against the wire-protocol server)."""
    bees = hermes_home / "skills" / "bees"
    bees.mkdir(parents=True)
    (bees / "SKILL.md").write_text("---\nname: bees\ndescription: Bees.\n---\nSmoke the hive first.\n")
    (hermes_home / "config.yaml").write_text("model: big\napi_mode: chat_completions\n"
                                             "base_url: http://127.0.0.1:9/v1\n")  # nothing answers there
    env = {"OPENAI_API_KEY": "sk-test"}
    added = hermes("cron", "add", "every 1h", "check", "the", "hive", "--skill", "bees", "--base-url",
                   wire_server.openai_url, "--json", env=env)
    assert added.returncode == 0, added.stderr
    job = json.loads(added.stdout)
    assert (job["skills"], job["base_url"]) == (["bees"], wire_server.openai_url)
    wire_server.script([reply("the hive is calm")])
    ran = hermes("cron", "run", job["id"], "--json", env=env, cwd=tmp_path)
    assert ran.returncode == 0 and json.loads(ran.stdout)["last_status"] == "ok", ran.stdout + ran.stderr
    sent = json.dumps(wire_server.requests[0].body["messages"])
    assert "Smoke the hive first." in sent and "check the hive" in sent
    shown = hermes("cron", "show", job["id"]).stdout
    assert "  skills    bees\n" in shown and f"  model     {wire_server.openai_url}" in shown


def test_a_job_with_a_workdir_runs_there_and_the_others_where_they_did(hermes, hermes_home, wire_server, tmp_path):
    """hermes-agent's per-job workdir: the run reads that folder's AGENTS.md and its tools start there, whatever
    terminal.cwd says, in a process of its own (a tick's other jobs, on threads beside it, keep terminal.cwd); a
    folder gone since is the run's error, not a run elsewhere."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "AGENTS.md").write_text("Run the tests with make check.\n")
    (hermes_home / "config.yaml").write_text(f"model: m\napi_mode: chat_completions\n"
                                             f"base_url: {wire_server.openai_url}\n"
                                             f"terminal:\n  cwd: {elsewhere}\nsandbox:\n  mode: off\n")
    env = {"OPENAI_API_KEY": "sk-test"}
    wrong = hermes("cron", "add", "every 1h", "x", "--workdir", "relative/folder")
    assert wrong.returncode == 2 and "the job's workdir 'relative/folder' is no folder (give one by its absolute " \
        "path)" in wrong.stderr
    job = json.loads(hermes("cron", "add", "every 1h", "run", "the", "tests", "--workdir", str(project), "--json",
                            env=env).stdout)
    assert job["workdir"] == os.path.realpath(project)
    assert f"  workdir   {os.path.realpath(project)}\n" in hermes("cron", "show", job["id"]).stdout
    edited = hermes("cron", "edit", job["id"], "--workdir", "", "--add-skill", "ci", "--json")
    assert edited.returncode == 0 and (json.loads(edited.stdout)["workdir"], json.loads(edited.stdout)["skills"]) == (
        "", ["ci"]), edited.stderr  # hermes-agent's `cron edit`: what is given changes
    assert hermes("cron", "edit", job["id"], "--schedule", "someday").stderr.startswith(
        "hermes: error: 'someday' is not a schedule")
    assert json.loads(hermes("cron", "edit", job["id"], "--workdir", str(project), "--clear-skills",
                             "--json").stdout)["skills"] == []
    wire_server.script([reply(tool_calls=[("terminal", {"command": "pwd"})]), reply("tests pass")])
    ran = hermes("cron", "run", job["id"], "--json", env=env, cwd=tmp_path)
    assert ran.returncode == 0 and json.loads(ran.stdout)["last_status"] == "ok", ran.stdout + ran.stderr
    assert "Run the tests with make check." in wire_server.requests[0].body["messages"][0]["content"]
    [result] = [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] == "tool"]
    assert os.path.realpath(project) in result and str(elsewhere) not in result
    other = json.loads(hermes("cron", "add", "every 1h", "where", "--json", env=env).stdout)
    state = jobs_file(hermes_home)
    for each in state["jobs"]:
        each["next_run"] = "2026-01-01T09:00:00+00:00"
    (hermes_home / "cron" / "schedule.json").write_text(json.dumps(state))
    with open(hermes_home / "config.yaml", "a") as config:  # one after the other: each its scripted answers
        config.write("cron:\n  max_parallel_jobs: 1\n")
    wire_server.script([reply(tool_calls=[("terminal", {"command": "pwd"})]), reply("done"),
                        reply(tool_calls=[("terminal", {"command": "pwd"})]), reply("done")])
    ticked = hermes("cron", "tick", "--json", env=env, cwd=tmp_path)
    assert sorted(j["last_status"] for j in json.loads(ticked.stdout)["ran"]) == ["ok", "ok"], ticked.stderr
    results = [m["content"] for r in wire_server.requests[2:] for m in r.body["messages"] if m["role"] == "tool"]
    assert [os.path.realpath(project) in r for r in results] == [True, False] and str(elsewhere) in results[1]
    assert other["workdir"] == ""
    project.joinpath("AGENTS.md").unlink()
    project.rmdir()
    gone = json.loads(hermes("cron", "run", job["id"], "--json", env=env).stdout)
    assert (gone["last_status"], gone["last_error"]) == ("error", f"its workdir {os.path.realpath(project)} is no "
                                                                  "folder now: not run")


def test_a_jobs_script_feeds_its_prompt_gates_its_run_or_is_the_whole_job(hermes, hermes_home, wire_server, tmp_path):
    """hermes-agent's job scripts (in the data folder's scripts/, in a tool's environment): what one prints goes
    before the prompt; nothing printed, or {"wakeAgent": false} last, is a silent run with no model call; a failure
    is an error for the model to report; with --no-agent what it prints is the answer, no model at all."""
    scripts = hermes_home / "scripts"
    scripts.mkdir()
    (scripts / "disk.sh").write_text('echo "disk 91% full"; echo "key=${OPENAI_API_KEY:-none}"\n')
    (scripts / "quiet.py").write_text("pass\n")
    (scripts / "gate.py").write_text('print("checked 3 feeds"); print(\'{"wakeAgent": false}\')\n')
    (scripts / "broken.sh").write_text("echo 'no route to host' >&2; exit 3\n")
    (hermes_home / "config.yaml").write_text(f"model: m\napi_mode: chat_completions\nbase_url: {wire_server.openai_url}\n")
    env = {"OPENAI_API_KEY": "sk-secret-test"}

    def job(*args) -> dict:
        added = hermes("cron", "add", "every 1h", *args, "--json", env=env)
        assert added.returncode == 0, added.stderr
        return json.loads(added.stdout)

    def run(job_id: str) -> dict:
        ran = hermes("cron", "run", job_id, "--json", env=env, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        return json.loads(ran.stdout)

    wire_server.script([reply("Disk is nearly full: clean /var/log."), reply("The feed check failed: no route.")])
    fed = run(job("summarise", "the", "disk", "--script", "disk.sh")["id"])
    sent = wire_server.requests[0].body["messages"][-1]["content"]
    assert fed["last_status"] == "ok" and "## Script output" in sent and "disk 91% full" in sent
    assert sent.endswith("summarise the disk") and "key=none" in sent  # the script never saw the key
    assert run(job("anything new?", "--script", "quiet.py")["id"])["last_status"] == "silent"
    assert run(job("anything new?", "--script", "gate.py")["id"])["last_status"] == "silent"
    assert len(wire_server.requests) == 1  # neither asked the model
    failed = run(job("check", "the", "feeds", "--script", "broken.sh")["id"])
    sent = wire_server.requests[1].body["messages"][-1]["content"]
    assert failed["last_status"] == "ok" and "## Script error" in sent and "exit code 3: no route to host" in sent

    alone = job("--script", "disk.sh", "--no-agent", "--name", "disk watch")
    done = run(alone["id"])
    assert done["last_status"] == "ok" and len(wire_server.requests) == 2  # no model
    assert "disk 91% full" in Path(done["last_output"]).read_text()
    assert run(job("--script", "quiet.py", "--no-agent")["id"])["last_status"] == "silent"
    shown = hermes("cron", "show", alone["id"]).stdout
    assert "  script    disk.sh (the whole job: no model)\n" in shown
    for args, said in ((["x", "--script", "../config.yaml"], "the job's script '../config.yaml' is no file in"),
                       (["--no-agent"], "a job without the agent runs a script"),
                       (["x", "--script", "nope.sh"], "the job's script 'nope.sh' is no file in")):
        refused = hermes("cron", "add", "every 1h", *args, env=env)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
    assert hermes("cron", "edit", alone["id"], "--agent", "--prompt", "say it kindly").returncode == 0
    edited = json.loads(hermes("cron", "list", "--json").stdout)["jobs"]
    assert next(j for j in edited if j["id"] == alone["id"])["no_agent"] is False


def test_a_job_follows_the_last_answers_of_the_jobs_it_names(hermes, hermes_home, wire_server, tmp_path):
    """hermes-agent's context_from: a chain of jobs, the first finds, the next works on what it answered."""
    (hermes_home / "config.yaml").write_text(f"model: m\napi_mode: chat_completions\nbase_url: {wire_server.openai_url}\n")
    env = {"OPENAI_API_KEY": "sk-test"}
    first = json.loads(hermes("cron", "add", "every 1h", "find", "new", "issues", "--name", "finder", "--json",
                              env=env).stdout)
    second = hermes("cron", "add", "every 1h", "triage", "them", "--context-from", "finder", "--json", env=env)
    assert second.returncode == 0, second.stderr
    second = json.loads(second.stdout)
    assert second["context_from"] == [first["id"]]
    wire_server.script([reply("Nothing yet."), reply("Issues 12 and 14 are new."), reply("12 first.")])
    hermes("cron", "run", second["id"], env=env, cwd=tmp_path)  # the first never answered: its prompt alone
    assert wire_server.requests[0].body["messages"][-1]["content"] == "triage them"
    hermes("cron", "run", first["id"], env=env, cwd=tmp_path)
    hermes("cron", "run", second["id"], env=env, cwd=tmp_path)
    sent = wire_server.requests[2].body["messages"][-1]["content"]
    assert f"## The last answer of the job finder ({first['id']})" in sent and "Issues 12 and 14 are new." in sent
    assert sent.endswith("triage them")
    unknown = hermes("cron", "add", "every 1h", "x", "--context-from", "nope", env=env)
    assert unknown.returncode == 2 and "context_from: no cron job 'nope'" in unknown.stderr
    assert "  after     " + first["id"] in hermes("cron", "show", second["id"]).stdout
    assert hermes("cron", "edit", second["id"], "--context-from", "").returncode == 0
    listed = json.loads(hermes("cron", "list", "--json").stdout)["jobs"]
    assert next(j for j in listed if j["id"] == second["id"])["context_from"] == []


def test_a_job_that_repeats_n_times_stops_after_its_last_run(hermes, hermes_home, wire_server, tmp_path):
    """hermes-agent's repeat: the job runs its N times (by the schedule or by hand), then its schedule ends."""
    (hermes_home / "config.yaml").write_text(f"model: m\napi_mode: chat_completions\nbase_url: {wire_server.openai_url}\n")
    env = {"OPENAI_API_KEY": "sk-test"}
    job = json.loads(hermes("cron", "add", "every 1h", "ping", "--repeat", "2", "--json", env=env).stdout)
    assert job["repeat"] == 2 and job["next_run"]
    wire_server.script([reply("one"), reply("two"), reply("three")])
    first = json.loads(hermes("cron", "run", job["id"], "--json", env=env, cwd=tmp_path).stdout)
    assert first["runs"] == 1 and first["next_run"] and first["status"] == "scheduled"
    second = json.loads(hermes("cron", "run", job["id"], "--json", env=env, cwd=tmp_path).stdout)
    assert second["runs"] == 2 and second["next_run"] is None and second["status"] == "done"
    assert "  runs      2 of 2, last " in hermes("cron", "show", job["id"]).stdout
    again = json.loads(hermes("cron", "edit", job["id"], "--repeat", "3", "--json").stdout)
    assert again["next_run"] and again["status"] == "scheduled"  # one run left again
    refused = hermes("cron", "add", "every 1h", "x", "--repeat", "many")
    assert refused.returncode == 2 and "'many' is not a valid integer" in refused.stderr
