"""chat's /background (hermes-agent's, also /bg) in a pseudo-terminal over the real openai SDK: a prompt worked on
by an agent and a session of its own while the user chats on; its answer shown at the prompt above the line being
typed, or after the chat's turn when one runs; a command that needs approval refused (nobody to ask); leaving the
chat stops what still runs, its session kept to resume."""

from __future__ import annotations

import json

from plugins_providers.testserver import reply
from tests.conftest import no_titles

ANSWERS = {"capital of France?": reply("**Paris**, as ever.", delay=2),  # the background's, while the user types
           "count the moons": reply("Jupiter has 95.", delay=1),  # the background's, during a 4 s turn
           "quick question": reply("the turn's answer", delay=4),
           "hello": reply("hi there"),
           "push it": reply(tool_calls=[("terminal", {"command": "git push --force origin main"})]),
           "never ends": reply("too late", delay=60)}


def answer(request):
    last = request.body["messages"][-1]
    return reply("it was refused") if last["role"] == "tool" else ANSWERS[last["content"]]


def test_background_tasks_answer_beside_the_chat(terminal, wire_server, hermes_home, hermes):
    no_titles(hermes_home)
    wire_server.script([answer] * (len(ANSWERS) + 1))
    chat, _ = terminal([], "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "gpt-test",
                       env={"OPENAI_API_KEY": "sk-test"})
    chat.expect("hermes> ")
    chat.line("/bg capital of France?")
    chat.expect("background #1 started in session ")
    chat.expect("hermes> ")
    chat.keys("hel")  # typing when the answer comes: it is shown above, the line stays
    chat.expect("── background #1  done")
    chat.expect("Paris")
    assert "**" not in chat.seen.split("── background #1  done")[1]  # its Markdown shown as the chat's answers are
    chat.keys("lo\r")
    chat.expect("hi there")
    chat.expect("hermes> ")
    chat.line("/background count the moons")
    chat.expect("background #2 started")
    chat.line("quick question")
    chat.expect("the turn's answer")
    chat.expect("── background #2  done")  # held until the turn ended
    chat.expect("Jupiter has 95.")
    chat.line("/bg push it")  # nobody can approve it in the background
    chat.expect("── background #3  done")
    chat.expect("it was refused")
    chat.line("/bg never ends")
    chat.expect("background #4 started")
    chat.line("/agents")
    chat.expect("background #4  running")
    chat.line("/exit")
    chat.expect("background #4 stopped; resume it with: hermes chat --resume ")
    assert chat.close() == 0
    sessions = json.loads(hermes("sessions", "list", "--json").stdout)
    assert len(sessions) == 5  # the chat's and each task's
    said = {}
    for session in sessions:
        shown = json.loads(hermes("sessions", "show", session["id"], "--json").stdout)["messages"]
        said[shown[0]["content"]] = [m["content"] for m in shown[1:]]
    assert said["capital of France?"] == ["**Paris**, as ever."]
    assert said["count the moons"] == ["Jupiter has 95."]
    assert said["hello"] == ["hi there", "quick question", "the turn's answer"]  # the tasks are not in the chat's
    assert "nobody was available to approve it" in said["push it"][1] and said["push it"][2] == "it was refused"
    assert said["never ends"] == ["[hermes: interrupted by the user before an answer]"]  # stopped, kept to resume


def test_a_background_tasks_session_is_titled_as_a_chats_is(terminal, wire_server, hermes):
    def answering(request):
        asked = request.body["messages"][-1]["content"]
        return reply("Moons of Jupiter") if asked.startswith("User: count the moons") else reply("Jupiter has 95.")

    wire_server.script([answering] * 2)
    chat, _ = terminal([], "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "gpt-test",
                       env={"OPENAI_API_KEY": "sk-test"})
    chat.expect("hermes> ")
    chat.line("/bg count the moons")
    chat.expect("── background #1  done")
    chat.expect("hermes> ")
    chat.line("/exit")
    assert chat.close() == 0
    [session] = json.loads(hermes("sessions", "list", "--json").stdout)
    assert session["title"] == "Moons of Jupiter"
