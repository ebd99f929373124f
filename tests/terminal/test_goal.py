"""chat's /goal (hermes-agent's standing goal) over the real openai SDK: after each answer the judge model
(auxiliary.goal_judge) says whether the goal is done; not yet, the chat asks for the next step, up to
goals.max_turns, then pauses until /goal resume; a judge that answers no verdict three times pauses it too."""

from __future__ import annotations

import json
import time

from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

MODEL = ("--api-mode", "chat_completions", "-m", "gpt-test")
CONFIG = ("goals:\n  max_turns: {turns}\nauxiliary:\n  goal_judge:\n    model: judge-model\n"
          "  title_generation:\n    enabled: false\n")  # the title's call would take a step


def judged(answers, verdicts):
    """A step for the next request: the judge model's next verdict, or the chat's next answer."""
    return lambda request: (reply(next(verdicts)) if request.body["model"] == "judge-model"
                            else reply(next(answers)))


def test_a_goal_is_worked_on_until_the_judge_finds_it_done(hermes, hermes_home, wire_server, cli_env):  # noqa: F811
    (hermes_home / "config.yaml").write_text(CONFIG.format(turns=2))
    env = {**cli_env, "OPENAI_API_KEY": "sk-test"}
    answers = iter(["I wrote the parser.", "The tests run: 2 fail.", "All 3 tests pass."])
    verdicts = iter(['{"done": false, "reason": "the tests were not run"}',
                     'Sure! {"done": false, "reason": "two tests fail"}',
                     '{"done": true, "reason": "all tests pass"}'])
    wire_server.script([judged(answers, verdicts)] * 6)
    out = hermes("chat", "--base-url", wire_server.openai_url, *MODEL, env=env,
                 input="/goal make the parser's tests pass\n/goal\n/exit\n")
    assert out.returncode == 0 and "All 3 tests pass." in out.stdout, out.stderr
    assert "goal set (2 turns at most; a judge checks each answer): make the parser's tests pass" in out.stderr
    assert "goal: not done yet (the tests were not run); next step 1 of 2" in out.stderr
    assert "goal: not done yet (two tests fail); next step 2 of 2" in out.stderr
    assert "goal done: all tests pass" in out.stderr and "no goal: /goal TEXT sets one" in out.stdout
    chat = [r.body for r in wire_server.requests if r.body["model"] == "gpt-test"]
    judge = [r.body for r in wire_server.requests if r.body["model"] == "judge-model"]
    assert len(chat) == len(judge) == 3 and all("tools" not in body for body in judge)
    assert chat[0]["messages"][-1]["content"] == "make the parser's tests pass"
    assert chat[1]["messages"][-1]["content"].startswith("[Still working toward the goal you were given]\n"
                                                         "Goal: make the parser's tests pass\n")
    assert judge[2]["messages"][1]["content"].endswith("The agent's latest answer:\nAll 3 tests pass.")
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    stored = json.loads(hermes("sessions", "show", session, "--json").stdout)["messages"]
    assert [m["role"] for m in stored] == ["user", "assistant"] * 3  # the judge's calls are not in the history

    # the budget pauses it; /goal resume goes on with a new one; a judge with no verdict three times pauses it
    wire_server.requests.clear()
    answers = iter(f"step {n}" for n in range(1, 7))
    verdicts = iter(['{"done": false, "reason": "more to do"}'] * 3 + ["I think so?", "", "maybe"])
    wire_server.script([judged(answers, verdicts)] * 12)
    out = hermes("chat", "--base-url", wire_server.openai_url, *MODEL, env=env,
                 input="/goal write six steps\n/goal status\n/subgoal\n/subgoal keep   each step short\n"
                       "/subgoal remove 2\n/goal resume\n/goal clear\n/subgoal more\n/exit\n")
    assert out.returncode == 0, out.stderr
    assert "goal paused: 2 turns (goals.max_turns) went by without it done" in out.stderr
    assert "goal: write six steps\npaused (2 turns (goals.max_turns) went by without it done): /goal resume goes on" \
           in out.stdout
    assert "goal resumed (2 more turns at most): write six steps" in out.stderr
    assert "goal paused: the judge gave no verdict 3 times (the judge answered no verdict: 'maybe'); check " \
           "auxiliary.goal_judge" in out.stderr
    assert "step 6" in out.stdout and "goal cleared" in out.stdout and len(wire_server.requests) == 12
    # hermes-agent's /subgoal: a criterion the judge and the next step's message carry from then on
    assert "no subgoals: /subgoal TEXT adds one" in out.stdout and "usage: /subgoal remove N (1 to 1)" in out.stdout
    assert "subgoal 1 added: the judge weighs it from the next answer on (/goal resume goes on)" in out.stdout
    assert "no goal: /goal TEXT sets one, then /subgoal TEXT adds to it" in out.stdout
    bodies = [r.body["messages"] for r in wire_server.requests]
    also = "write six steps\nAlso required:\n1. keep each step short"
    assert [also in m[1]["content"] for m in bodies if len(m) == 2 and m[0]["content"].startswith("You check")] \
        == [False] * 3 + [True] * 3  # the judge's, before and after it was added
    assert also in bodies[6][-1]["content"] and also not in bodies[4][-1]["content"]  # the next steps' messages


def test_ctrl_c_while_the_judge_reads_pauses_the_goal_and_the_chat_goes_on(terminal, hermes_home, wire_server):
    (hermes_home / "config.yaml").write_text(CONFIG.format(turns=5))
    answers, verdicts = iter(["first step", "after"]), iter(["never read"])
    wire_server.script([lambda request: reply(next(verdicts), delay=30) if request.body["model"] == "judge-model"
                        else reply(next(answers))] * 2)
    chat, _ = terminal([], *MODEL, "--base-url", wire_server.openai_url, env={"OPENAI_API_KEY": "sk-test"})
    chat.expect("hermes> ")
    chat.line("/goal do the thing")
    chat.expect("first step")
    wait = 0
    while len(wire_server.requests) < 2 and wait < 100:  # the judge's call is on its way
        time.sleep(0.1)
        wait += 1
    chat.ctrl_c()
    chat.expect("goal paused: interrupted while the judge read the answer")
    chat.expect("hermes> ")
    chat.line("/goal")
    chat.expect("paused (interrupted while the judge read the answer): /goal resume goes on")
    chat.line("/exit")
    assert chat.close() == 0


def test_a_goal_not_done_is_kept_with_its_session(hermes, hermes_home, wire_server, cli_env):  # noqa: F811
    """A chat resuming the session finds its goal paused; /goal resume goes on; /goal clear forgets it."""
    (hermes_home / "config.yaml").write_text(CONFIG.format(turns=0))
    env = {**cli_env, "OPENAI_API_KEY": "sk-test"}
    answers, verdicts = iter(["step 1", "step 2"]), iter(['{"done": false, "reason": "more to do"}'] * 2)
    wire_server.script([judged(answers, verdicts)] * 4)
    out = hermes("chat", "--base-url", wire_server.openai_url, *MODEL, env=env,
                 input="/goal write two steps\n/subgoal number them\n/exit\n")
    assert out.returncode == 0 and "goal paused: 0 turns (goals.max_turns)" in out.stderr, out.stderr
    session = json.loads(hermes("sessions", "list", "--json").stdout)[0]["id"]
    assert (hermes_home / "goals" / f"{session}.json").is_file()
    out = hermes("chat", "--base-url", wire_server.openai_url, *MODEL, "-r", session, env=env,
                 input="/goal status\n/goal resume\n/goal clear\n/exit\n")
    assert out.returncode == 0, out.stderr
    assert "this session's goal, paused (0 turns (goals.max_turns) went by without it done): write two steps; " \
           "/goal resume goes on, /goal clear drops it" in out.stderr
    assert "goal: write two steps\nAlso required:\n1. number them" in out.stdout  # its subgoal kept too
    assert "step 2" in out.stdout and "goal cleared" in out.stdout
    assert not (hermes_home / "goals" / f"{session}.json").exists()


def test_a_new_session_leaves_the_goal_with_the_one_it_was_set_in(hermes, hermes_home, wire_server, cli_env):  # noqa: F811
    """/new (and /clear) start without the goal; it stays with its session, where /resume finds it."""
    (hermes_home / "config.yaml").write_text(CONFIG.format(turns=0))
    env = {**cli_env, "OPENAI_API_KEY": "sk-test"}
    answers, verdicts = iter(["step 1", "other work"]), iter(['{"done": false, "reason": "more to do"}'])
    wire_server.script([judged(answers, verdicts)] * 3)
    out = hermes("chat", "--base-url", wire_server.openai_url, *MODEL, env=env,
                 input="/goal write two steps\n/new\n/goal status\nsomething else\n/exit\n")
    assert out.returncode == 0, out.stderr
    first = json.loads(hermes("sessions", "list", "--json").stdout)[-1]["id"]  # the oldest
    assert f"the goal stays with session {first} (/resume {first} brings it back)" in out.stdout
    assert "no goal: /goal TEXT sets one" in out.stdout and "other work" in out.stdout
    assert sorted(p.name for p in (hermes_home / "goals").iterdir()) == [f"{first}.json"]
