"""`hermes chat` on a terminal, as a person uses it: line editing, history kept
across chats, multi-line input and paste, completion, Ctrl+C and Ctrl+D at the
prompt, colour (and none under NO_COLOR or without a terminal), and every
chat command."""

from __future__ import annotations

import json
import re
from tests.conftest import TITLES_OFF, no_titles

LEFT, UP, ALT_ENTER = "\x1b[D", "\x1b[A", "\x1b\r"


def said(hermes, session: str) -> list:
    """The user's messages stored for a session."""
    shown = hermes("sessions", "show", session, "--json")
    assert shown.returncode == 0, shown.stderr
    return [m["content"] for m in json.loads(shown.stdout)["messages"] if m["role"] == "user"]


def resume_id(seen: str) -> str:
    return re.match(r"\w+", seen.rsplit("resume it with: hermes chat --resume ", 1)[1]).group()


def test_on_an_sdk_provider_the_prompt_does_not_wait_for_the_sdk(terminal, first_imports, wire_server):
    """The provider's settings and key are checked before the prompt; its SDK (the openai package: about half a
    second to import) comes in off the main thread, while the user types (bench/bench_chat_prompt.py)."""
    from plugins_providers.testserver import reply

    wire_server.push(reply("the answer is kiwi"))
    env, seen = first_imports("prompt_toolkit", "openai")
    chat, _ = terminal([], "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "gpt-test",
                       env={**env, "OPENAI_API_KEY": "sk-test"})
    chat.expect("hermes> ")
    chat.line("hi")
    chat.expect("the answer is kiwi")  # the real SDK made the call
    chat.expect("hermes> ")
    chat.keys("\x04")
    assert chat.close() == 0
    assert seen(chat.child.pid) == [("prompt_toolkit", "main"), ("openai", "other")]


def test_reasoning_effort_for_this_chat_or_from_now_on(terminal, wire_server, hermes_home):
    """hermes-agent's `/reasoning high [--global]`: the next request carries it in its API's words (a Claude 4.7:
    adaptive thinking at that effort); --global writes config.yaml, comments kept."""
    from plugins_providers.testserver import reply

    (hermes_home / "config.yaml").write_text("# mine\nagent:\n  reasoning_overrides: {claude-opus-4.7: low}\n")
    no_titles(hermes_home)
    wire_server.push(reply("light"), reply("deep"), reply("deeper"))
    chat, _ = terminal([], "--api-mode", "anthropic_messages", "--base-url", wire_server.url, "-m", "claude-opus-4-7",
                       env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    chat.expect("hermes> ")
    chat.line("one")
    chat.expect("light")
    chat.line("/reasoning high")
    chat.expect('reasoning effort (this chat) high: sent as {"thinking": {"type": "adaptive", "display": '
                '"summarized"}, "output_config": {"effort": "high"}}')
    chat.line("two")
    chat.expect("deep")
    chat.line("/reasoning xhigh --global")
    chat.expect("reasoning effort (config.yaml) xhigh: sent as")
    chat.line("three")
    chat.expect("deeper")
    chat.line("/exit")
    assert chat.close() == 0
    first, second, third = (r.body for r in wire_server.requests)
    assert first["output_config"] == {"effort": "low"}  # config.yaml's level for this model
    assert second["thinking"]["type"] == "adaptive" and second["output_config"] == {"effort": "high"}  # the chat's
    assert third["output_config"] == {"effort": "xhigh"}
    assert (hermes_home / "config.yaml").read_text() == (
        "# mine\nagent:\n  reasoning_overrides: {claude-opus-4.7: low}\n  reasoning_effort: xhigh\n" + TITLES_OFF)


def test_fast_mode_for_this_chat_or_from_now_on(terminal, wire_server, hermes_home):
    """hermes-agent's `/fast [on|off] [--global]`: OpenAI's own API (the wire server behind HTTP_PROXY) is asked for
    priority processing from the next request; --global writes agent.service_tier to config.yaml."""
    from plugins_providers.testserver import reply

    (hermes_home / "config.yaml").write_text("# mine\n")
    no_titles(hermes_home)
    wire_server.push(reply("plain"), reply("quick"), reply("still quick"))
    proxy = {"HTTP_PROXY": wire_server.url, "http_proxy": wire_server.url, "NO_PROXY": "", "no_proxy": ""}
    chat, _ = terminal([], "--api-mode", "chat_completions", "--base-url", "http://api.openai.com/v1", "-m", "gpt-5.2",
                       env={"OPENAI_API_KEY": "sk-test", **proxy})
    chat.expect("hermes> ")
    chat.line("/fast")
    chat.expect("fast mode off (agent.service_tier: standard)")
    chat.line("one")
    chat.expect("plain")
    chat.line("/fast now")
    chat.expect("usage: /fast [on|off] [--global]")
    chat.line("/fast on")
    chat.expect("fast mode (this chat) on: OpenAI's own API is asked for priority processing")
    chat.line("two")
    chat.expect("quick")
    chat.line("/fast on --global")
    chat.expect("fast mode (config.yaml) on")
    chat.line("three")
    chat.expect("still quick")
    chat.line("/exit")
    assert chat.close() == 0
    first, second, third = (r.body for r in wire_server.requests)
    assert "service_tier" not in first and second["service_tier"] == third["service_tier"] == "priority"
    assert (hermes_home / "config.yaml").read_text() == "# mine\n" + TITLES_OFF + "agent:\n  service_tier: fast\n"


def test_a_personality_of_config_is_the_prompt_from_now_on_and_none_goes_back(terminal, wire_server, hermes_home):
    """hermes-agent's `/personality NAME`: a prompt of config.yaml's personalities is the identity from the next
    request on (the chat goes on in a linked session), saved as agent.system_prompt; `none` goes back."""
    from plugins_providers.testserver import reply

    (hermes_home / "config.yaml").write_text("# mine\npersonalities:\n  pirate: Answer as a pirate would.\n"
                                             "  Teacher: {system_prompt: Explain slowly., tone: patient}\n")
    no_titles(hermes_home)
    wire_server.push(reply("plain"), reply("arr"), reply("plain again"))
    chat, _ = terminal([], "--api-mode", "chat_completions", "--base-url", wire_server.openai_url, "-m", "gpt-test",
                       env={"OPENAI_API_KEY": "sk-test"})
    chat.expect("hermes> ")
    chat.line("/personality")
    chat.expect("teacher  Explain slowly. Tone: patient")
    chat.line("one")
    chat.expect("plain")
    chat.line("/personality pirat")
    chat.expect("no personality 'pirat' (did you mean 'pirate'?); there are: none, pirate, teacher")
    chat.line("/personality pirate")
    chat.expect("personality pirate (saved in config.yaml as agent.system_prompt); the chat goes on in session")
    chat.line("two")
    chat.expect("arr")
    chat.line("/personality none")
    chat.expect("personality none")
    chat.line("three")
    chat.expect("plain again")
    chat.line("/exit")
    assert chat.close() == 0
    systems = [r.body["messages"][0]["content"] for r in wire_server.requests]
    assert systems[0].startswith("You are hermes") and systems[1].startswith("Answer as a pirate would.")
    assert systems[2].startswith("You are hermes")
    assert [m["content"] for m in wire_server.requests[1].body["messages"][1:]] == ["one", "plain", "two"]  # kept
    assert (hermes_home / "config.yaml").read_text().endswith(  # comments kept; pirate's was written, then none's
        "tone: patient}\n" + TITLES_OFF + "agent:\n  system_prompt: \"\"\n")


def test_quick_commands_of_config_run_a_command_or_stand_for_another(terminal, hermes_home, tmp_path):
    """hermes-agent's quick_commands: `exec` runs the user's shell command (no keys in its environment, its output
    masked) without asking the model; `alias` runs another chat command with the arguments."""
    (hermes_home / "config.yaml").write_text(
        "quick_commands:\n  disk: {type: exec, command: 'echo used 42%; echo \"key=[$MY_API_KEY]\"', description: "
        "how full the disk is}\n  fails: {type: exec, command: 'echo nope >&2; exit 3'}\n"
        "  m: {type: alias, target: /model}\n  broken: {type: exec}\n  ping: {type: alias, target: /pong}\n"
        "  pong: {type: alias, target: /ping}\n")
    chat, _ = terminal([], env={"MY_API_KEY": "sk-quick-0123456789"})  # the model is never asked
    chat.expect("hermes> ")
    chat.line("/help")
    chat.expect("how full the disk is")
    chat.line("/disk")
    chat.expect("used 42%")
    chat.expect("key=[]")  # the keys are not in its environment
    chat.line("/fails")
    chat.expect("nope")
    chat.expect("(exit 3)")
    chat.line("/m")
    chat.expect("model: ")
    chat.line("/broken")
    chat.expect("/broken: quick_commands.broken needs type: exec with a command, or type: alias with a target")
    chat.line("/ping")  # two aliases of each other ran until Python's recursion limit ended the chat
    chat.expect("/ping: its target /pong is an alias too; aim quick_commands.ping.target at a command")
    chat.line("/exit")
    assert chat.close() == 0


def test_a_key_the_model_types_into_a_tool_call_is_masked_on_its_line(terminal):
    key = "sk-typed-by-the-model-0123456789"
    chat, _ = terminal([{"tool_calls": [["read_file", {"path": f"/nowhere/{key}.env"}]]}, "done"], "-t", "file",
                       env={"SOME_API_KEY": key})
    chat.expect("hermes> ")
    chat.line("go")
    chat.expect("-> read_file(path='/nowhere/[hermes: the value")
    chat.expect("done")
    chat.line("/exit")
    assert chat.close() == 0
    assert key not in chat.seen


def test_editing_history_multiline_paste_and_completion(terminal, hermes):
    chat, home = terminal(["one", "two", "three", "four"])
    chat.expect("hermes> ")
    chat.keys("helo wrld" + LEFT * 3 + "o" + LEFT * 4 + "l\r")  # fixed in place, not sent as escape codes
    chat.expect("one")
    chat.expect("hermes> ")
    chat.keys("first line" + ALT_ENTER + "second line\r")
    chat.expect("two")
    chat.expect("hermes> ")
    chat.keys("\x1b[200~pasted a\npasted b\x1b[201~\r")  # a bracketed paste keeps its newline and is not sent early
    chat.expect("three")
    chat.expect("hermes> ")
    chat.keys("/us")
    chat.expect("tokens used in this chat")  # the completion menu, with each command's help
    chat.keys("\t\r")  # Tab takes /usage, the first Enter closes the menu, the second sends it
    chat.keys("\r")
    chat.expect("tokens in this chat: input 30")
    chat.expect("; model requests: 3")  # requests are not tokens
    chat.expect("hermes> ")
    chat.keys("\x04")  # Ctrl+D leaves
    assert chat.close() == 0
    session = resume_id(chat.seen)
    assert said(hermes, session) == ["hello world", "first line\nsecond line", "pasted a\npasted b"]
    history = (home / "chat_history").read_text()
    assert "+hello world" in history and "+pasted a\n+pasted b" in history

    # the history is the next chat's too: Up brings back the last line sent
    chat, _ = terminal(["again"], name="second.json")
    chat.expect("hermes> ")
    chat.keys(UP * 2 + "\r")  # /usage, then the paste before it
    chat.expect("again")
    chat.line("/exit")
    assert chat.close() == 0
    assert said(hermes, resume_id(chat.seen)) == ["pasted a\npasted b"]


def test_ctrl_c_at_the_prompt_drops_the_line_and_the_chat_goes_on(terminal, hermes):
    chat, _ = terminal(["answered"])
    chat.expect("hermes> ")
    chat.keys("never sent")
    chat.expect("never sent")
    chat.keys("\x03")  # raw mode at the prompt: Ctrl+C is a key, not a signal
    chat.line("kept")
    chat.expect("answered")
    chat.line("/exit")
    assert chat.close() == 0
    assert said(hermes, resume_id(chat.seen)) == ["kept"]


def test_tool_lines_have_colour_on_a_terminal_and_none_under_no_color(terminal, hermes_home):
    steps = [{"tool_calls": [["read_file", {"path": "nope.txt"}]]}, "done"]
    for env, coloured in (({}, True), ({"NO_COLOR": "1"}, False)):
        chat, _ = terminal(steps, "-t", "file", env=env, name=f"colour{coloured}.json")
        chat.expect("hermes> ")
        chat.line("read it")
        chat.expect("done")
        chat.line("/exit")
        assert chat.close() == 0
        failed = chat.seen[chat.seen.index("read_file error"):].split("\n", 1)[0]
        assert "nope.txt" in failed  # the failure says why, on its line
        assert ("\x1b[31m" in chat.seen) is coloured and ("\x1b[36m-> read_file" in chat.seen) is coloured


def test_no_escape_codes_when_stdin_and_stdout_are_not_a_terminal(hermes, tmp_path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool_calls": [["read_file", {"path": "x"}]]}, "plain"]))
    out = hermes("chat", "--api-mode", "scripted", "--base-url", script, "-t", "file", input="hi\n/help\n/exit\n")
    assert out.returncode == 0, out.stderr
    assert "plain" in out.stdout and "/retry" in out.stdout
    assert "\x1b" not in out.stdout + out.stderr


def test_history_shows_what_was_said_even_of_a_resumed_session_before_its_first_turn(terminal):
    chat, _ = terminal(["the first answer", "the second answer"])
    chat.expect("hermes> ")
    chat.line("/history")
    chat.expect("nothing said yet in this session")
    chat.line("alpha")
    chat.expect("the first answer")
    chat.line("beta")
    chat.expect("the second answer")
    chat.line("/history 1")
    chat.expect("the last 2 of 4 messages (clipped; all of it: hermes sessions show ")
    chat.expect("you: beta")
    for bad in ("/history many", "/history 0"):  # 0 showed one exchange
        chat.line(bad)
        chat.expect("usage: /history [N]")
    chat.line("/exit")
    assert chat.close() == 0
    resumed, _ = terminal(["unused"], "--resume", resume_id(chat.seen), name="again.json")
    resumed.expect("resuming: alpha")
    resumed.expect("hermes> ")
    resumed.line("/history")  # no turn yet: the stored messages are read for it
    resumed.expect("4 messages (clipped; all of it")  # what follows is /history's, after the recap
    for line in ("you: alpha", "hermes: the first answer", "you: beta", "hermes: the second answer"):
        resumed.expect(line)
    resumed.line("/exit")
    assert resumed.close() == 0


def test_retry_undo_resume_and_a_plugins_command(terminal, hermes):
    chat, _ = terminal(["first", "second", "second again", "after undo", "back in the first"])
    chat.expect("hermes> ")
    chat.line("alpha")
    chat.expect("first")
    first_session = re.search(r"session (\w+)", chat.seen).group(1)
    chat.line("beta")
    chat.expect("second")
    chat.line("/retry")  # beta is sent again, its first answer taken back
    chat.expect("again: beta")
    chat.expect("second again")
    chat.line("/undo")
    chat.expect("took back: beta")
    chat.expect("beta")  # on the line, to edit and send again; Ctrl+C drops it
    chat.ctrl_c()
    chat.line("gamma")
    chat.expect("after undo")
    chat.line("/title garden plans")  # a plugin's command (sessions)
    chat.expect("garden plans")
    chat.line("/resume")  # the recent sessions, to choose from
    chat.expect("garden plans  (this one)")
    chat.expect("/resume ID (or a unique start of it, or a title) goes on in one")
    chat.line("/resume nope-no-such")
    chat.expect("no session 'nope-no-such'")
    chat.line(f"/resume {first_session}")
    chat.expect("resuming: alpha")  # the recap of the session resumed
    chat.line("delta")
    chat.expect("back in the first")
    chat.line("/exit")
    assert chat.close() == 0
    assert resume_id(chat.seen) == first_session
    # undo is not destructive: the first session keeps beta; its continuation does not
    assert said(hermes, first_session) == ["alpha", "beta", "delta"]
    listed = json.loads(hermes("sessions", "list", "--json").stdout)
    undone = [s for s in listed if s["parent_session_id"]]
    assert undone and all(s["start_reason"] == "undo" for s in undone)
    assert said(hermes, undone[0]["id"]) == ["alpha", "gamma"]  # the newest: after /retry and /undo
    # the lineage: each continuation says which session goes on from it; the first, written to after, is current
    by_id = {s["id"]: s for s in listed}
    assert by_id[first_session]["continued_in"] is None
    assert by_id[undone[1]["id"]]["continued_in"] == undone[0]["id"]
    assert by_id[undone[0]["id"]]["continued_in"] is None
    lines = hermes("sessions", "list").stdout
    assert f"[continued in {undone[0]['id']}]" in lines and f"after undo of {undone[1]['id']}]" in lines
    shown = hermes("sessions", "show", undone[1]["id"]).stdout
    assert f"continued in {undone[0]['id']}: that session is the current one" in shown


def test_continue_picks_the_latest_chat_not_a_later_run(hermes, tmp_path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["chatted", "ran", "continued"]))
    model = ("--api-mode", "scripted", "--base-url", script)
    chatted = hermes("chat", *model, input="in the chat\n/exit\n")
    session = resume_id(chatted.stderr)
    assert hermes("run", *model, "one-shot").returncode == 0  # later, but not a chat
    out = hermes("chat", *model, "--continue", input="more\n/exit\n")
    assert out.returncode == 0, out.stderr
    assert f"session {session}" in out.stderr and "resuming: in the chat" in out.stderr
    assert said(hermes, session) == ["in the chat", "more"]
    out = hermes("sessions", "list", "--json", "--platform", "run")
    assert [s["preview"] for s in json.loads(out.stdout)] == ["one-shot"]


def test_the_built_in_plugins_chat_commands(terminal):
    chat, home = terminal(["hi there"])
    chat.expect("hermes> ")
    chat.line("hello")
    chat.expect("hi there")
    for command, answer in (("/context", "of 128000 tokens"), ("/compress", "nothing to compress"),
                            ("/memory", "MEMORY.md (0 entries"), ("/search hello", "user: [hello]"),
                            ("/search", "usage: /search WORDS"),  # was "cannot search: the search query is empty"
                            ("/title my chat", "is now titled: my chat"), ("/nope", "unknown command /nope")):
        chat.line(command)
        chat.expect(answer)
        chat.expect("hermes> ")
    chat.line("/quit")
    assert chat.close() == 0
    assert "failed" not in chat.seen


def test_on_slash_command_fires_before_every_chat_command(make_agent, capsys):
    import plugins.terminal as terminal_plugin
    from kernel import hookimpl
    from plugins.terminal.chat import Chat

    seen = []

    class Observer:
        __name__ = "observer"

        @hookimpl
        def on_slash_command(self, name, args, agent):
            seen.append((name, args, agent.session_id))

        @hookimpl
        def register_slash_commands(self, register):
            register("echo", lambda args, agent: f"echo {args}", "say it back")

    agent = make_agent(terminal_plugin, Observer(), script=["ok"])
    chat = Chat(None, agent, console=None)
    for line in ("/echo  hi there ", "/tools", "/nope x", "/ehco", "/hsitory 2"):
        chat.slash(line)
    out = capsys.readouterr()
    assert seen == [("echo", "hi there", agent.session_id), ("tools", "", agent.session_id),
                    ("nope", "x", agent.session_id), ("ehco", "", agent.session_id),
                    ("hsitory", "2", agent.session_id)]  # unknown commands too: an observer sees what was typed
    assert "echo hi there" in out.out and "unknown command /nope (try /help)" in out.err
    # a typo of a plugin's command or the chat's own is named (the exact /help list is long)
    assert "unknown command /ehco (did you mean /echo?)" in out.err
    assert "unknown command /hsitory (did you mean /history?)" in out.err


def test_a_stop_signal_during_a_tool_ends_the_chat_after_killing_the_tool(terminal, tmp_path):
    import signal
    import time

    started, victim = tmp_path / "started", tmp_path / "victim"
    chat, _ = terminal([{"tool_calls": [["terminal", {"command": f"touch {started}; sleep 4; touch {victim}"}]]},
                        "never reached"], "--yolo")
    chat.expect("hermes> ")
    chat.line("go")
    deadline = time.monotonic() + 20
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), chat.seen
    chat.child.kill(signal.SIGTERM)
    assert chat.close() == 128 + signal.SIGTERM
    assert "stopped by SIGTERM" in chat.seen
    time.sleep(4.5)  # past the moment the command would have touched the victim
    assert not victim.exists()


def test_ctrl_c_during_a_turn_keeps_it_a_turn_of_its_own_and_a_stopped_tool_shows_interrupted(terminal, hermes):
    from kernel.messages import UNANSWERED

    chat, _ = terminal([{"content": "never shown", "delay": 30}, "five answered",
                        {"tool_calls": [["terminal", {"command": "sleep 30"}]]}, "after the tool"], "--yolo")
    chat.expect("hermes> ")
    chat.line("three")
    chat.expect("thinking  0.3s")  # not at once: the call's thread must have taken its step from the script
    chat.ctrl_c()
    chat.expect("(interrupted)")
    chat.line("five")
    chat.expect("five answered")
    chat.line("run it")
    chat.expect("-> terminal(")
    chat.ctrl_c()
    chat.expect("terminal interrupted")
    chat.expect("(interrupted)")
    chat.line("/exit")
    assert chat.close() == 0
    assert "terminal done" not in chat.seen
    shown = json.loads(hermes("sessions", "show", resume_id(chat.seen), "--json").stdout)["messages"]
    assert [(m["role"], m["content"]) for m in shown[:4]] == [
        ("user", "three"), ("assistant", UNANSWERED), ("user", "five"), ("assistant", "five answered")]


def test_reasoning_is_hidden_until_asked_for_and_the_config_key_shows_it_from_the_start(terminal, hermes_home):
    """The keys of the second chat also ring the bell when its answer is done (display.bell_on_complete)."""
    steps = [{"content": "first answer", "reasoning": "secret plan one"},
             {"content": "second answer", "reasoning": "secret plan two"}]
    chat, _ = terminal(steps)
    chat.expect("hermes> ")
    chat.line("one")
    chat.expect("first answer")
    chat.line("/reasoning")  # hermes-agent's: what is set, and how to change it
    chat.expect("reasoning effort the model's own")
    chat.expect("the reasoning is hidden")
    chat.line("/reasoning show")
    chat.expect("the model's reasoning is shown")
    chat.line("two")
    chat.expect("secret plan two")
    chat.expect("second answer")
    chat.line("/reasoning off")
    chat.expect("the model's reasoning is hidden")
    chat.line("/reasoning loud")
    chat.expect("usage: /reasoning [none|minimal|low|medium|high|xhigh|max] [--global] or /reasoning show|hide")
    chat.line("/exit")
    assert chat.close() == 0
    assert "secret plan one" not in chat.seen and "\a" not in chat.seen
    (hermes_home / "config.yaml").write_text("display:\n  show_reasoning: true\n  bell_on_complete: true\n")
    chat, _ = terminal([{"content": "third answer", "reasoning": "secret plan three"}], name="again.json")
    chat.expect("hermes> ")
    chat.line("three")
    chat.expect("secret plan three")
    chat.expect("third answer")
    chat.expect("\a")  # hermes-agent's display.bell_on_complete: the answer is done
    chat.line("/exit")
    assert chat.close() == 0


REMINDER_PLUGIN = '''
import json
from pathlib import Path

NOTES = Path.home() / ".hermes" / "reminders.txt"   # hard-coded, as some published plugins do

def register(ctx):
    def remind(raw_args):
        return "queued" if ctx.inject_message("remind me: " + raw_args) else "not queued"

    def nudge(args, **kwargs):
        return json.dumps({"queued": ctx.inject_message("nudged by a tool")})

    ctx.register_command("remind", remind, description="queue a reminder as the next message")
    ctx.register_command("flood", lambda raw: [ctx.inject_message(f"flood {i}") for i in range(7)] and "flooding")
    ctx.register_tool(name="nudge", toolset="reminder", handler=nudge,
                      schema={"name": "nudge", "description": "queue a message", "parameters": {"type": "object"}})
'''


def test_a_hermes_plugins_inject_message_becomes_the_chats_next_turn(terminal, hermes, hermes_home):
    """hermes-agent's ctx.inject_message (the terminal-ui's queue_user_message), from a slash command and from
    a tool, is sent by chat as the user's
    next message once the command or turn ends; hermes run has no chat, so it says False and why; the plugin
    that names ~/.hermes in its code is listed with how to point hermes at that folder."""
    folder = hermes_home / "plugins" / "reminder"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: reminder\nversion: 0.1.0\ndescription: reminders\n")
    (folder / "__init__.py").write_text(REMINDER_PLUGIN)
    assert hermes("plugins", "enable", "reminder").returncode == 0
    listed = hermes("plugins", "list").stdout
    assert "reminders [reads ~/.hermes itself, hermes-agent's data folder: HERMES_HOME=~/.hermes" in listed

    chat, home = terminal(["first answer", {"tool_calls": [["nudge", {}]]}, "nudge done", "answer to the nudge",
                           *[f"flood answer {i}" for i in range(5)]], "--yolo")
    chat.expect("hermes> ")
    chat.line("/remind milk")
    chat.expect("queued")
    chat.expect("(a plugin sends) remind me: milk")
    chat.expect("first answer")
    chat.expect("hermes> ")
    chat.line("use the tool")
    chat.expect("nudge done")
    chat.expect("(a plugin sends) nudged by a tool")
    chat.expect("answer to the nudge")
    chat.expect("hermes> ")
    chat.line("/flood")  # a plugin queueing without end is stopped after 5 in a row
    chat.expect("flood answer 4")
    chat.expect("(dropped 2 more messages plugins queued: 5 in a row is the most)")
    chat.expect("hermes> ")
    chat.line("/exit")
    assert chat.close() == 0
    sessions = json.loads(hermes("sessions", "list", "--json").stdout)
    messages = json.loads(hermes("sessions", "show", sessions[0]["id"], "--json").stdout)["messages"]
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users == ["remind me: milk", "use the tool", "nudged by a tool", *[f"flood {i}" for i in range(5)]]

    script = home / "run.json"
    script.write_text(json.dumps([{"tool_calls": [["nudge", {}]]}, "done"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "go")
    assert out.returncode == 0, out.stderr
    tool = [json.loads(m["content"]) for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
    assert tool == [{"queued": False}]
    assert "plugin reminder: inject_message: no chat to send it to (hermes run takes no next message)" in out.stderr


def test_resume_in_a_chat_says_when_the_session_was_started_with_other_toolsets(terminal, hermes, tmp_path):
    """``/resume`` keeps the chat's own model and toolsets (a chat started with ``-t`` must not widen to a
    session's every tool unasked), and says so when the session was started with others; with the same, no note."""
    script = tmp_path / "run.json"
    script.write_text(json.dumps(["stored"]))
    res = hermes("run", "--api-mode", "scripted", "--base-url", script, "-t", "todo", "--json", "alpha")
    assert res.returncode == 0, res.stderr
    started = json.loads(res.stdout)["session_id"]
    chat, _ = terminal(["unused"])
    chat.expect("hermes> ")
    chat.line(f"/resume {started}")
    chat.expect("resuming: alpha")
    chat.expect(f"note: that session was started with toolsets todo; this chat keeps every toolset (`hermes chat "
                f"--resume {started}` starts with the session's)")
    chat.line("/exit")
    assert chat.close() == 0
    same, _ = terminal(["unused"], "-t", "todo", name="same.json")
    same.expect("hermes> ")
    same.line(f"/resume {started}")
    same.expect("resuming: alpha")
    same.line("/exit")
    assert same.close() == 0 and "note:" not in same.seen


def test_hermes_alone_at_a_terminal_chats_and_takes_the_chats_options(terminal, hermes, tmp_path):
    """hermes-agent's `hermes` and `hermes -c` are its chat: here too, at a terminal (without one: the help)."""
    def one_exchange(args: tuple, said: str, answer: str, name: str, command: tuple = ()) -> None:
        chat, _ = terminal([answer] if answer else [], *args, command=command, name=name)
        chat.expect("hermes> ")
        if said:
            chat.line(said)
            chat.expect(answer)
            chat.expect("hermes> ")
        chat.keys("\x04")
        assert chat.close() == 0

    one_exchange((), "remember kiwi", "the first answer", "first.json")
    one_exchange(("-c",), "and now?", "the second answer", "second.json")
    listed = json.loads(hermes("sessions", "list", "--json").stdout)
    assert len(listed) == 1 and said(hermes, listed[0]["id"]) == ["remember kiwi", "and now?"]
    alone = hermes()  # not a terminal: the help on stderr, exit 2, as before
    assert alone.returncode == 2 and "Commands:" in alone.stderr and alone.stdout == ""
    one_exchange(("-r", listed[0]["id"]), "", "", "third.json", ("chat",))  # -r is --resume, as in hermes-agent
    (tmp_path / "mine.yaml").write_text("name: mine\n")
    one_exchange((), "in a distro", "the distro's answer", "fourth.json", ("--distro", str(tmp_path / "mine.yaml")))


def test_an_image_goes_with_the_next_message_by_image_or_dragged_into_the_terminal(terminal, hermes, tmp_path):
    """hermes-agent's chat takes an image file dragged into the terminal (its path pasted); ours had no way to show
    the model an image."""
    import base64

    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
                           "rkJggg==")
    (tmp_path / "dot.png").write_bytes(png)
    (tmp_path / "My Pic.png").write_bytes(png)
    (tmp_path / "fake.png").write_text("not an image")
    chat, _ = terminal(["one dot", "two dots", "again"], "-m", "claude-test")  # a model known to see: native
    chat.expect("hermes> ")
    chat.line("/image")
    chat.expect("usage: /image FILE")
    chat.line(f"/image {tmp_path / 'fake.png'}")
    chat.expect("fake.png: not an image a model takes")
    chat.keys(f"/image {tmp_path}/do")
    chat.expect("dot.png")  # Tab completes the file's name
    chat.keys("\t\r")
    chat.keys("\r")
    chat.expect("attached dot.png: it goes with your next message")
    chat.line("what is it?")
    chat.expect("one dot")
    chat.line(f"'{tmp_path / 'My Pic.png'}' and this?")  # as a terminal pastes a dragged file
    chat.expect("attached My Pic.png")
    chat.expect("two dots")
    chat.line(str(tmp_path / "dot.png"))  # a path alone: the next line is its message
    chat.expect("attached dot.png: it goes with your next message")
    chat.line("/image clear")
    chat.expect("no image goes with your next message")
    chat.line("/retry")  # the last message again, its image too
    chat.expect("again")
    chat.line("/exit")
    assert chat.close() == 0
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}}
    stored = json.loads(hermes("sessions", "show", resume_id(chat.seen), "--json").stdout)["messages"]
    assert [m["content"] for m in stored if m["role"] == "user"] == [
        [{"type": "text", "text": "what is it?"}, image], [{"type": "text", "text": "and this?"}, image]]


def test_hermes_agents_chat_commands_prompt_copy_yolo_clear_version_and_pointers(terminal, hermes, tmp_path):
    """/prompt, /copy, /yolo, /clear, /version and /status are hermes-agent's chat commands a user reaches for; its
    /save said only "unknown command"."""
    import base64
    import sys

    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'w').write('written in the editor\\n')\n")
    marker = tmp_path / "ran.txt"
    command = f"python3 -c \"open('{marker}', 'w').write('ran')\""  # inline code: it needs approval
    chat, _ = terminal(["the answer", "the edited answer", {"tool_calls": [["terminal", {"command": command}]]},
                        "it ran"], env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""})
    chat.expect("hermes> ")
    chat.line("/copy")
    chat.expect("no answer to copy yet")
    chat.line("hello")
    chat.expect("the answer")
    chat.line("/copy")
    chat.expect("copied the last answer (10 characters")
    assert f"\x1b]52;c;{base64.b64encode(b'the answer').decode()}\x07" in chat.seen
    chat.line("/prompt")
    chat.expect("the edited answer")
    chat.line("/yolo")
    chat.expect("approvals are off in this chat")
    chat.line("run it")
    chat.expect("it ran")  # not asked
    assert marker.read_text() == "ran"
    chat.line("/yolo")
    chat.expect("approvals are back to config's: manual")
    chat.line("/version")
    chat.expect(f"hermes {__import__('kernel').__version__}")
    chat.line("/status")
    chat.expect(": 8 messages")
    chat.expect("model: scripted")
    chat.expect("model requests: 4")
    chat.expect(f"working in {tmp_path}")
    chat.expect("context: ~")
    chat.line("/save")
    chat.expect("hermes-agent's /save: here, /export [FILE.md]")
    chat.line("/snapshot")
    chat.expect("hermes-agent's /snapshot: here, `hermes backup` (and `hermes import ZIP`)")
    chat.line("/clear")
    chat.expect("new session ")
    chat.line("/exit")
    assert chat.close() == 0
    listed = json.loads(hermes("sessions", "list", "--json").stdout)
    assert [said(hermes, s["id"]) for s in listed] == [["hello", "written in the editor", "run it"]]  # /clear's: none


def test_the_recap_of_a_resumed_chat_follows_hermes_agents_resume_keys(hermes, hermes_home, tmp_path):
    """display.resume_exchanges, resume_max_user_chars, resume_max_assistant_chars, resume_max_assistant_lines and
    resume_skip_tool_only shape the recap a resumed chat starts with; resume_display: minimal leaves the title line
    alone."""
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["first answer " + "x" * 50, "second answer", "third answer", "more"]))
    model = ("--api-mode", "scripted", "--base-url", script)
    assert hermes("chat", *model, input="one " + "y" * 50 + "\ntwo\nthree\n/exit\n").returncode == 0

    def recap(config: str) -> list:
        (hermes_home / "config.yaml").write_text(config)
        out = hermes("chat", *model, "--continue", input="/exit\n")
        assert out.returncode == 0, out.stderr
        shown = ("resuming:", "  you:", "  hermes:", " " * 10)  # the last: an answer's next lines
        return [line for line in out.stderr.splitlines() if line.startswith(shown)]

    assert recap("") == ["resuming: one " + "y" * 50 + " (6 messages)", "  you: two", "  hermes: second answer",
                         "  you: three", "  hermes: third answer"]
    assert recap("display:\n  resume_exchanges: 3\n  resume_max_user_chars: 10\n  resume_max_assistant_chars: 12\n")[1:3] \
        == ["  you: one yyyyyy...", "  hermes: first answer..."]
    assert recap("display:\n  resume_display: minimal\n") == ["resuming: one " + "y" * 50 + " (6 messages)"]

    # an answer shows 3 lines (resume_max_assistant_lines), the last one all of its; tool-only answers on request
    script.write_text(json.dumps([{"tool_calls": [["terminal", {"command": "true"}]]}, "1\n2\n3\n4", "a\nb\nc\nd"]))
    assert hermes("chat", *model, input="first\nsecond\n/exit\n").returncode == 0
    assert recap("")[1:] == ["  you: first", "  hermes: 1", "          2", "          3 ...", "  you: second",
                             "  hermes: a", "          b", "          c", "          d"]
    assert recap("display:\n  resume_skip_tool_only: false\n  resume_max_assistant_lines: 1\n")[1:5] == [
        "  you: first", "  hermes: [1 tool call: terminal]", "  hermes: 1 ...", "  you: second"]


def test_undo_n_exchanges_leaves_the_first_message_to_edit(terminal, hermes):
    """hermes-agent's /undo N: the last N exchanges taken back; the first of their messages waits on the input line,
    edited there and sent again."""
    chat, _ = terminal(["a1", "a2", "a3", "again"])
    for message, answer in (("one", "a1"), ("two", "a2"), ("three", "a3")):
        chat.expect("hermes> ")
        chat.line(message)
        chat.expect(answer)
    chat.line("/undo 0")
    chat.expect("usage: /undo [N]")
    chat.line("/undo 2")
    chat.expect("took back: two")
    chat.expect("two")  # on the line
    chat.line(" more")  # the end of the line the user edits
    chat.expect("again")
    chat.line("/exit")
    assert chat.close() == 0
    assert said(hermes, resume_id(chat.seen)) == ["one", "two more"]


def test_sessions_browse_finds_a_session_and_goes_on_in_it(hermes, hermes_home, tmp_path):
    """hermes-agent's `sessions browse`: at a terminal, the latest sessions by number, words to find others; a number
    goes on in that session (its recap, then the chat); without a terminal, one line saying what to run."""
    import os

    from tests.conftest import ROOT, hermes_command
    from tests.terminal.conftest import Terminal

    for prompt, answer in (("plan the garden", "beans by the fence"), ("fix the bike", "new chain")):
        script = tmp_path / f"{answer[:3]}.json"
        script.write_text(json.dumps([answer]))
        assert hermes("run", "--api-mode", "scripted", "--base-url", script, prompt).returncode == 0
    assert "browse asks at a terminal" in hermes("sessions", "browse").stderr
    env = {**os.environ, "HERMES_HOME": str(hermes_home), "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1",
           "PYTHONPATH": str(ROOT)}
    browse = Terminal([*hermes_command(), "sessions", "browse"], env, tmp_path)
    browse.expect("2. ")
    browse.expect("Enter leaves")
    browse.line("zebra")
    browse.expect("No sessions hold 'zebra'.")
    browse.line("garden")
    browse.expect("plan the [garden]")  # the match, its words marked
    browse.expect("Enter leaves")
    browse.line("1")
    browse.expect("plan the garden")  # the recap of the session resumed
    browse.expect("hermes> ")
    browse.line("/exit")
    assert browse.close() == 0
