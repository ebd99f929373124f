"""The gateway on Telegram, end to end: `hermes gateway run` receives from a loopback Bot API by long polling and
answers through the wire-protocol server's model, one conversation per chat."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import time

import yaml

from plugins_providers.testserver import error, reply
from tests.gateway.conftest import eventually


def user_texts(request) -> list:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


def test_a_chat_is_one_conversation_answered_in_order_and_kept_across_a_restart(gateway, bot_api, wire_server,
                                                                                  hermes, hermes_home):
    wire_server.push(reply("Hi, Alice."), reply("Still here."), reply("Back again."))
    running = gateway()
    bot_api.say("hello")
    bot_api.say("are you there?")
    assert bot_api.wait_sent(2) == [("42", "Hi, Alice."), ("42", "Still here.")]
    assert user_texts(wire_server.requests[1]) == ["hello", "are you there?"]  # one conversation
    assert "You are talking to a person on Telegram" in wire_server.requests[0].body["messages"][0]["content"]
    assert any(m == "sendChatAction" for m, *_ in bot_api.calls)
    second = gateway().ended()  # on the same data folder: it would answer the same inbox again
    assert second.returncode == 1 and second.stderr.strip().endswith(
        f"a gateway already runs on this data folder (pid {running.process.pid})")
    env = {"TELEGRAM_BOT_TOKEN": bot_api.token}
    assert {r["running"] for r in json.loads(hermes("gateway", "status", "--json", env=env).stdout)} == {
        running.process.pid}
    assert "gateway on telegram as @hermes_test_bot (1 user(s) allowed)" in running.stop()
    assert {r["running"] for r in json.loads(hermes("gateway", "status", "--json", env=env).stdout)} == {None}
    [session] = json.loads(hermes("sessions", "list", "--json").stdout)
    assert session["platform"] == "telegram" and session["message_count"] == 4
    gateway()
    bot_api.say("and now?")
    assert bot_api.wait_sent(3)[-1] == ("42", "Back again.")
    assert user_texts(wire_server.requests[2]) == ["hello", "are you there?", "and now?"]  # the same session


def test_answers_are_marked_up_as_telegram_shows_them_and_plain_when_it_refuses(gateway, bot_api, wire_server):
    answer = "**Done**: `a < b` holds.\n```python\nprint(1 < 2)\n```\n| a | b |\n|---|---|\n| 1 | 2 |"
    wire_server.push(reply(answer), reply("*again*"))
    gateway()
    bot_api.say("check it")
    bot_api.wait_sent(1)
    assert bot_api.sent_raw() == [("42", '<b>Done</b>: <code>a &lt; b</code> holds.\n<pre><code class="language-'
                                         'python">print(1 &lt; 2)</code></pre>\n<pre>| a | b |\n|---|---|\n| 1 | 2 '
                                         '|</pre>', "HTML")]
    bot_api.fail("sendMessage", 400, "Bad Request: can't parse entities: unsupported start tag")
    bot_api.say("again")
    bot_api.wait_sent(2)
    assert bot_api.sent_raw()[-1] == ("42", "*again*", None)  # refused marked up: sent as written


def test_an_answer_is_shown_as_it_is_written(gateway, bot_api, wire_server):
    """hermes-agent's display.platforms.telegram.streaming: a draft sent and edited with a cursor, the model's words
    before a tool call left as their own message, the call in the turn's list of calls, the answer marked up in the
    last draft at the end."""
    wire_server.push(reply(["Let me ", "look ", "at it."], tool_calls=[("read_file", {"path": "/nowhere"})],
                           frame_delay=0.5),
                     reply(["The answer ", "comes ", "slowly, ", "**word** by word."], frame_delay=0.5))
    gateway(config={"display": {"tool_progress": "all"}, "streaming": {"edit_interval": 0.3, "cursor": "  ▉"}})
    bot_api.say("explain")
    assert bot_api.wait_sent(3) == [("42", "Let me look at it."), ("42", "⚙️ read_file: /nowhere"),
                                    ("42", "The answer comes slowly, word by word.")]
    drafts = [c["text"] for m, c, ok in bot_api.calls if m in ("sendMessage", "editMessageText") and ok]
    assert any(d.endswith("  ▉") and d.startswith("Let me") for d in drafts), drafts  # written as it came
    assert len({d for d in drafts if d.endswith("  ▉") and d.startswith("The answer")}) >= 3, drafts  # every 0.3 s
    assert bot_api.sent_raw()[-1][1:] == ("The answer comes slowly, <b>word</b> by word.", "HTML")
    assert wire_server.requests[0].body["stream"] is True


def test_a_picture_reaches_the_model_with_its_caption(gateway, bot_api, wire_server, hermes_home):
    from tests.providers.test_images import PNG

    wire_server.push(reply("A red dot."), reply("I could not see it."))
    gateway(config={"agent": {"image_input_mode": "native"}})
    bot_api.picture(PNG, caption="what is this?")
    assert bot_api.wait_sent(1) == [("42", "A red dot.")]
    [asked] = [m for m in wire_server.requests[0].body["messages"] if m["role"] == "user"]
    assert asked["content"][0] == {"type": "text", "text": "what is this?"}
    assert asked["content"][1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    bot_api.picture(b"not a picture")
    bot_api.wait_sent(2)
    [_, asked] = [m for m in wire_server.requests[1].body["messages"] if m["role"] == "user"]
    assert asked["content"] == ("[the user sent a picture, which could not be fetched: not a picture a model takes "
                                "(PNG, JPEG, GIF or WebP)]")
    assert len(list((hermes_home / "images").iterdir())) == 1  # kept until its turn started (and 30 days)


def test_a_voice_note_is_heard_shown_and_answered(gateway, bot_api, wire_server):
    """hermes-agent's stt: a voice note goes to an OpenAI-compatible transcription endpoint (the real openai SDK, a
    multipart upload) and its words are the message; without stt.provider: openai the chat is told how."""
    running = gateway()
    bot_api.files["v1"] = b"OggS voice bytes"
    bot_api.say("", voice={"file_id": "v1", "duration": 2, "mime_type": "audio/ogg"})
    assert bot_api.wait_sent(1) == [("42", "voice notes are not transcribed here: set stt.provider: openai (a "
                                           "Whisper endpoint, OPENAI_API_KEY)")]
    running.stop()
    wire_server.push(reply("remind me to buy milk"), reply("Noted: milk."))
    gateway(config={"stt": {"provider": "openai", "openai": {"base_url": wire_server.openai_url}}})
    bot_api.say("", voice={"file_id": "v1", "duration": 2, "mime_type": "audio/ogg"})
    assert bot_api.wait_sent(3)[1:] == [("42", "🎤 remind me to buy milk"), ("42", "Noted: milk.")]
    heard, answered = wire_server.requests
    assert heard.path == "/v1/audio/transcriptions" and heard.body["model"] == "whisper-1"
    assert heard.body["file"] == {"filename": "voice.ogg", "bytes": len(b"OggS voice bytes")}
    assert [m["content"] for m in answered.body["messages"] if m["role"] == "user"] == ["remind me to buy milk"]


def test_the_files_the_tools_make_and_the_model_names_follow_the_answer(gateway, bot_api, wire_server, tmp_path):
    from tests.providers.test_images import PNG

    notes = tmp_path / "notes.txt"
    notes.write_text("the notes")
    old = tmp_path / "old" / "key.pem"  # not changed lately, nor in an allowed folder: not sent
    old.parent.mkdir()
    old.write_text("a key")
    os.utime(old, (time.time() - 86400,) * 2)
    wire_server.push(reply(tool_calls=[("image_generate", {"prompt": "a red dot"})]),
                     reply(base64.b64encode(PNG).decode()),  # the images endpoint's picture
                     reply(f"Here is the dot, and your notes.\nMEDIA:{notes}\nMEDIA:{tmp_path}/gone.pdf\nMEDIA:{old}"))
    gateway(config={"image_gen": {"base_url": wire_server.openai_url}})
    bot_api.say("draw a dot and send my notes")
    assert bot_api.wait_sent(3) == [
        ("42", "Here is the dot, and your notes."),
        ("42", f"(not sent: {old} was not changed in the last 600 s and is not under gateway.media_delivery_allow_dirs)"),
        ("42", f"(could not send {tmp_path}/gone.pdf: No such file or directory)")]
    photo, document = bot_api.sent_files()
    assert photo[:2] == ("42", "sendPhoto") and photo[3] == PNG and photo[2].endswith("-a-red-dot.png")
    assert document == ("42", "sendDocument", "notes.txt", b"the notes")


def test_strangers_are_told_their_id_once_and_never_reach_the_model(gateway, bot_api, wire_server):
    gateway(config={"telegram": {"allowed_chats": "-100,-300", "channel_prompts": {-100: "Answer in French."},
                                 "extra": {"base_url": bot_api.base_url}}})
    bot_api.say("let me in", user=7, username="mallory")
    bot_api.say("please", user=7, username="mallory")
    bot_api.say("", user=42, document={"file_id": "x", "file_name": "a.zip", "mime_type": "application/zip"})
    sent = bot_api.wait_sent(2)
    assert sent[0] == ("7", "I only answer the people my owner allowed. Your telegram user id is 7: the owner adds it "
                            "to TELEGRAM_ALLOWED_USERS.")
    assert sent[1] == ("42", "only text, pictures and voice notes are read here (another file is not)")
    bot_api.say("in a group, not to me", user=42, chat=-100, chat_type="group")
    bot_api.say("@hermes_test_bot what is 6 times 7?", user=42, chat=-100, chat_type="group")
    wire_server.push(reply("42."))
    assert bot_api.wait_sent(3)[-1] == ("-100", "42.")
    assert [user_texts(r) for r in wire_server.requests] == [["what is 6 times 7?"]]
    assert "Answer in French." in wire_server.requests[0].body["messages"][0]["content"]  # telegram.channel_prompts
    bot_api.say("@hermes_test_bot hello?", user=42, chat=-200, chat_type="group")  # a group not in allowed_chats
    bot_api.say("/status", user=42)
    assert bot_api.wait_sent(4)[-1][0] == "42" and len(wire_server.requests) == 1


def test_a_flagged_command_asks_the_chat_and_its_answer_decides(gateway, bot_api, wire_server):
    command = "python3 -c 'print(6 * 7)'"  # inline code: the approval check asks
    wire_server.push(reply(tool_calls=[("terminal", {"command": command})]), reply("It was refused."),
                     reply(tool_calls=[("terminal", {"command": command})]), reply("It printed 42."))
    gateway(config={"sandbox": {"mode": "off"}})
    bot_api.say("run it")
    asked = bot_api.wait_sent(1)[0][1]
    assert asked.startswith("⚠️ terminal needs your yes: ") and command in asked and "/deny" in asked
    bot_api.say("/deny")
    assert bot_api.wait_sent(2)[-1] == ("42", "It was refused.")
    bot_api.say("run it again")
    bot_api.wait_sent(3)
    assert bot_api.buttons()[2] == ["/approve", "/approve session", "/approve always", "/deny"]
    bot_api.press("/approve")  # the button under the question
    assert bot_api.wait_sent(4)[-1] == ("42", "It printed 42.")
    assert bot_api.buttons()[2] == []  # one answer per question
    results = [m["content"] for m in wire_server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "42" not in results[0] and "42" in results[1]
    bot_api.say("/approve")
    assert bot_api.wait_sent(5)[-1] == ("42", "nothing waits for your approval")


def test_a_subagents_flagged_command_asks_the_chat_of_its_parent(gateway, bot_api, wire_server):
    command = "python3 -c 'print(6 * 7)'"
    wire_server.push(reply(tool_calls=[("delegate_task", {"goal": "compute it"})]),  # the chat's agent delegates
                     reply(tool_calls=[("terminal", {"command": command})]),  # the subagent's flagged command
                     reply("It printed 42."), reply("The subagent says 42."))
    gateway(config={"sandbox": {"mode": "off"}})
    bot_api.say("delegate it")
    asked = bot_api.wait_sent(1)[0][1]
    assert asked.startswith("⚠️ terminal needs your yes: ") and command in asked  # not refused unasked
    bot_api.say("/approve")
    assert bot_api.wait_sent(2)[-1] == ("42", "The subagent says 42.")
    [child_result] = [m["content"] for m in wire_server.requests[2].body["messages"] if m["role"] == "tool"]
    assert "42" in child_result


def test_stop_new_and_the_plugins_commands(gateway, bot_api, wire_server, hermes):
    wire_server.push(reply(tool_calls=[("terminal", {"command": "sleep 30"})]), reply("Fresh start."))
    gateway()
    bot_api.say("wait a while")
    bot_api.say("this waits its turn")
    bot_api.wait_sent(0)
    while not wire_server.requests:
        bot_api.wait_sent(0, timeout=1)
    bot_api.say("/stop")
    sent = bot_api.wait_sent(2)
    assert sent == [("42", "stopping (and 1 message(s) waiting dropped)"), ("42", "stopped")]
    bot_api.say("/new")
    assert bot_api.wait_sent(3)[-1][1].startswith("a new conversation (session ")
    bot_api.say("hi")
    assert bot_api.wait_sent(4)[-1] == ("42", "Fresh start.")
    assert user_texts(wire_server.requests[-1]) == ["hi"]
    bot_api.say("/insights")  # the sessions plugin's command, as in chat
    assert "model calls" in bot_api.wait_sent(5)[-1][1]
    bot_api.say("/stauts")
    assert bot_api.wait_sent(6)[-1] == ("42", "unknown command /stauts (did you mean /status?)")
    wire_server.push(reply("Fresh again."))
    bot_api.say("/retry")  # chat's own: the last exchange taken back and sent again
    assert bot_api.wait_sent(8)[-2:] == [("42", "again: hi"), ("42", "Fresh again.")]
    assert user_texts(wire_server.requests[-1]) == ["hi"]
    bot_api.say("/undo")
    assert bot_api.wait_sent(9)[-1][1].startswith("took back: hi (the chat goes on in session ")
    bot_api.say("/model gpt-other")
    assert bot_api.wait_sent(10)[-1] == ("42", "model: chat_completions:gpt-other")
    wire_server.push(reply("\n".join(f"line {n:04} " + "x" * 40 for n in range(200))))  # 10 000 characters
    bot_api.say("a long one, please")
    parts = [text for _, text in bot_api.wait_sent(13)[10:]]
    assert wire_server.requests[-1].body["model"] == "gpt-other"
    assert all(len(p) <= 4096 for p in parts) and len(parts) == 3
    assert "".join(parts).splitlines() == [f"line {n:04} " + "x" * 40 for n in range(200)]


def test_a_message_received_before_a_kill_is_answered_once_after_the_restart(gateway, bot_api, wire_server):
    wire_server.push(reply("slow answer", delay=30), reply("Second, answered."))
    running = gateway()
    bot_api.say("first")
    bot_api.say("second")
    while not wire_server.requests:
        bot_api.wait_sent(0, timeout=1)
    while bot_api.pending():  # both received and confirmed: the second waits in the inbox
        bot_api.wait_sent(0, timeout=1)
    running.stop(signal.SIGKILL)
    gateway()
    assert bot_api.wait_sent(1) == [("42", "Second, answered.")]
    assert [user_texts(r)[-1] for r in wire_server.requests] == ["first", "second"]  # neither asked twice


def test_a_long_turn_says_it_still_works_and_one_idle_too_long_is_stopped(gateway, bot_api, wire_server):
    wire_server.push(reply(tool_calls=[("terminal", {"command": "sleep 3"})]), reply("Slept."),
                     reply("too late", delay=30), reply("Next."))
    gateway(config={"agent": {"gateway_notify_interval": 1, "gateway_timeout_warning": 1.5, "gateway_timeout": 4.5}},
            env={"TELEGRAM_REACTIONS": "true"})  # hermes-agent's variable for telegram.reactions
    first = bot_api.say("sleep a little")
    notice, warned, answer = bot_api.wait_sent(3)
    notices = [p["text"] for m, p, _ in bot_api.calls if m in ("sendMessage", "editMessageText")
               and p["text"].startswith("⏳ still")]
    assert len(notices) >= 2 and all(re.fullmatch(r"⏳ still working: \d s(, terminal)?", n) for n in notices)
    assert any(n.endswith(", terminal") for n in notices)  # the tool running then
    assert notice[1] == notices[-1] and [m for m, p, _ in bot_api.calls if p.get("text") in notices] == [
        "sendMessage"] + ["editMessageText"] * (len(notices) - 1)
    assert warned[1] == "⏳ nothing has happened for 1.5 s (the tool terminal runs); /stop ends it"
    assert answer[1] == "Slept."
    stopped = bot_api.say("think hard")  # a model that answers after 30 s: told at 1.5 s, stopped at 4.5 s
    notice, *said = [text for _, text in bot_api.wait_sent(6)[3:]]
    assert re.fullmatch(r"⏳ still working: \d s", notice) and said == [
        "⏳ nothing has happened for 1.5 s (waiting for the model); /stop ends it",
        "⏱️ stopped: nothing happened for 4.5 s (waiting for the model); agent.gateway_timeout says how long a turn "
        "may stay idle (0: no limit)"]
    again = bot_api.say("again")
    assert bot_api.wait_sent(7)[-1] == ("42", "Next.")
    eventually(lambda: bot_api.reactions.get(again) == ["👍"])
    assert bot_api.reactions[first] == ["👍"] and bot_api.reactions[stopped] == []  # 👀 while it ran: gone
    assert [p["reaction"] for m, p, _ in bot_api.calls if m == "setMessageReaction" and p["message_id"] == first] == [
        [{"type": "emoji", "emoji": "👀"}], [{"type": "emoji", "emoji": "👍"}]]


def test_its_failures_are_one_line(gateway, bot_api, wire_server, hermes, hermes_home):
    refused = gateway(env={"TELEGRAM_BOT_TOKEN": "999:wrong"}).ended()
    assert refused.returncode == 1 and refused.stderr == ("hermes: error: telegram: the Bot API refused TELEGRAM_BOT_TOKEN "
                                                          "(Unauthorized): check it with @BotFather\n")
    bot_api.fail("getUpdates", 409, "Conflict: can't use getUpdates method while webhook is active")
    conflict = gateway().ended()
    assert conflict.returncode == 1 and conflict.stderr.splitlines()[-1] == (
        "hermes: error: telegram: another program takes this bot's messages (a second gateway, or a webhook set for it): "
        "Conflict: can't use getUpdates method while webhook is active")
    bot_api.fail("getUpdates", 502, "Bad Gateway", times=2)
    bot_api.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)  # flood control: it waits
    wire_server.push(reply("Through."))
    state = hermes_home / "gateway" / "state.json"
    state.parent.mkdir(exist_ok=True)
    state.write_text('{"sessions": {"telegram:42": ')  # cut short: kept aside, never written over
    flaky = gateway()
    bot_api.say("hello")
    assert bot_api.wait_sent(1) == [("42", "Through.")]
    said = flaky.stop()
    assert said.count("telegram: getUpdates: 502 Bad Gateway (trying again)") == 1, said
    assert "gateway: " + str(state) + " could not be read" in said
    [aside] = state.parent.glob("state.unreadable-*")
    assert aside.read_text() == '{"sessions": {"telegram:42": ' and json.loads(state.read_text())["offsets"]
    doctor = {c["name"]: c for c in json.loads(hermes("doctor", "--json", env={
        "TELEGRAM_BOT_TOKEN": "999:wrong", "TELEGRAM_ALLOWED_USERS": "42"}).stdout)}
    assert doctor["gateway telegram"]["status"] == "fail" and "refused TELEGRAM_BOT_TOKEN" in \
        doctor["gateway telegram"]["detail"]
    doctor = {c["name"]: c for c in json.loads(hermes("doctor", "--json", env={
        "TELEGRAM_BOT_TOKEN": bot_api.token, "TELEGRAM_ALLOWED_USERS": ""}).stdout)}
    assert doctor["gateway telegram"] == {"name": "gateway telegram", "status": "warn", "detail": (
        "nobody may talk to @hermes_test_bot yet: set TELEGRAM_ALLOWED_USERS=ID,... (a stranger is told their id)")}
    unreachable = gateway(config={"telegram": {"extra": {"base_url": "http://127.0.0.1:9"}}}).ended()
    assert unreachable.returncode == 1 and "telegram: getMe: cannot reach the Bot API" in unreachable.stderr
    assert bot_api.token not in unreachable.stderr
    wire_server.push(error(400, message="This model's context is too long."))
    failing = gateway()
    bot_api.say("something")
    said = bot_api.wait_sent(2)[-1][1]
    assert said.startswith("⚠️ ") and "This model's context is too long." in said and "\n" not in said
    failing.stop()
    none = hermes("gateway", "run", env={"TELEGRAM_BOT_TOKEN": ""})
    assert none.returncode == 1 and none.stderr.strip() == (
        "hermes: error: no platform to answer on: `hermes gateway setup [--platform NAME]` (or set "
        "TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, ..., in the environment or the data folder's .env)")
    (hermes_home / "config.yaml").write_text("")  # no model at all: said once, before any chat
    nothing = hermes("gateway", "run", env={"TELEGRAM_BOT_TOKEN": bot_api.token})
    assert nothing.returncode == 1 and nothing.stderr.startswith("hermes: error: no model: pass -m MODEL") and \
        nothing.stderr.count("\n") == 1, nothing.stderr


def test_a_forum_groups_topics_are_conversations_of_their_own(gateway, bot_api, wire_server):
    wire_server.push(reply("In seven."), reply("In nine."), reply("Seven again."))
    gateway()
    topic = {"chat": -100, "chat_type": "supergroup", "is_topic_message": True}
    bot_api.say("@hermes_test_bot first", **topic, message_thread_id=7)
    assert bot_api.wait_sent(1) == [("-100", "In seven.")] and bot_api.messages[0]["topic"] == 7
    bot_api.say("@hermes_test_bot other", **topic, message_thread_id=9)
    assert bot_api.wait_sent(2)[-1] == ("-100", "In nine.") and bot_api.messages[1]["topic"] == 9
    bot_api.say("@hermes_test_bot second", **topic, message_thread_id=7)
    assert bot_api.wait_sent(3)[-1] == ("-100", "Seven again.") and bot_api.messages[2]["topic"] == 7
    assert user_texts(wire_server.requests[2]) == ["first", "second"]  # topic 7's conversation, not 9's


def test_the_model_can_be_given_on_the_command_line(gateway, bot_api, wire_server):
    wire_server.push(reply("Hi."))
    gateway(config={"model": ""}, args=("-m", "gpt-given"))  # as the "no model" line says
    bot_api.say("hello")
    assert bot_api.wait_sent(1) == [("42", "Hi.")] and wire_server.requests[0].body["model"] == "gpt-given"


def test_a_job_scheduled_from_a_chat_sends_its_answers_there(gateway, bot_api, wire_server, hermes, hermes_home):
    """hermes-agent's cron delivery: the cronjob tool in a Telegram conversation makes a job whose answers go to that
    chat (deliver: origin, sent through the gateway plugin's deliver_message), from whichever process runs it; one
    that cannot be delivered says why."""
    wire_server.push(reply(tool_calls=[("cronjob", {"action": "create", "schedule": "every 1h", "name": "time check",
                                                    "prompt": "say the time"})]), reply("Scheduled."),
                     reply("It is noon."), reply("Nobody hears this."))
    running = gateway()
    bot_api.say("tell me the time every hour")
    assert bot_api.wait_sent(1) == [("42", "Scheduled.")]
    [job] = json.loads(hermes("cron", "list", "--json").stdout)["jobs"]
    assert job["deliver"] == "telegram:42"
    env = {"TELEGRAM_BOT_TOKEN": bot_api.token, "OPENAI_API_KEY": "sk-test"}
    ran = hermes("cron", "run", job["id"], "--json", env=env)  # another process than the gateway's
    assert ran.returncode == 0 and json.loads(ran.stdout)["last_delivery"] == "sent", ran.stderr
    assert bot_api.wait_sent(2)[-1] == ("42", "⏰ time check\n\nIt is noon.")
    added = json.loads(hermes("cron", "add", "--deliver", "telegram", "--json", "every 1h", "say hi").stdout)
    hermes("cron", "run", added["id"], env={**env, "TELEGRAM_HOME_CHANNEL": ""})
    listed = hermes("cron", "list").stdout
    assert "not delivered to telegram: no chat to send to: telegram names none, TELEGRAM_HOME_CHANNEL is not set " \
           "and no chat said /sethome" in listed, listed
    bot_api.say("/sethome", user=42, chat=-100, chat_type="group")  # not to the bot: a group's other bots may take it
    bot_api.say("/sethome@hermes_test_bot", user=42, chat=-100, chat_type="group")
    assert bot_api.wait_sent(3)[-1] == ("-100", "this chat is the home chat now: cron jobs delivering to telegram "
                                                "answer here")
    running.stop()
    wire_server.push(reply("Hi, group."), reply("Just this."))
    ran = hermes("cron", "run", added["id"], "--json", env={**env, "TELEGRAM_HOME_CHANNEL": ""})
    assert json.loads(ran.stdout)["last_delivery"] == "sent"
    assert bot_api.wait_sent(4)[-1] == ("-100", "⏰ say hi\n\nHi, group.")
    settings = yaml.safe_load((hermes_home / "config.yaml").read_text())
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({**settings, "cron": {"wrap_response": False}}))
    hermes("cron", "run", added["id"], env={**env, "TELEGRAM_HOME_CHANNEL": ""})
    assert bot_api.wait_sent(5)[-1] == ("-100", "Just this.")  # hermes-agent's cron.wrap_response: false


def test_the_markup_leaves_what_is_not_markup_as_text():
    from plugins.gateway.markup import to_html
    from tests.botapi import unparsable

    cases = {
        "snake_case_name and 2*3*4 stay": "snake_case_name and 2*3*4 stay",
        "# Plan\n- **one**\n* _two_": "<b>Plan</b>\n• <b>one</b>\n• <i>two</i>",
        "[docs](https://x.org/?a=1&b=2) <script>": '<a href="https://x.org/?a=1&amp;b=2">docs</a> &lt;script&gt;',
        "> quoted\n> on": "<blockquote>quoted\non</blockquote>",
        "```\nan answer cut <short>": "<pre><code>an answer cut &lt;short&gt;</code></pre>",
        "**not closed": "**not closed",
    }
    for markdown, expected in cases.items():
        assert to_html(markdown) == expected and not unparsable(expected)


def test_install_writes_a_user_service_that_runs_the_gateway(hermes, hermes_home, tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "TELEGRAM_BOT_TOKEN": "999:in-the-shell",
           "TELEGRAM_ALLOWED_USERS": "42,43"}
    out = hermes("gateway", "install", env=env)
    assert out.returncode == 0 and "systemctl --user enable --now hermes-gateway" in out.stdout, out.stderr
    assert "TELEGRAM_BOT_TOKEN is set in this shell only: the service will not see it" in out.stderr
    unit = (tmp_path / "cfg" / "systemd" / "user" / "hermes-gateway.service").read_text()
    assert "-m hermes.cli gateway run\n" in unit and f"Environment=HERMES_HOME={hermes_home}\n" in unit
    assert "Environment=TELEGRAM_ALLOWED_USERS=42,43\n" in unit and "in-the-shell" not in unit  # never the key
    (hermes_home / ".env").write_text("TELEGRAM_BOT_TOKEN=999:kept\n")
    (hermes_home / ".env").chmod(0o600)
    assert "warning" not in hermes("gateway", "install", env=env).stderr
    shown = hermes("gateway", "install", "--platform", "telegram", "-m", "gpt 5", "--print", env=env).stdout
    assert "-m hermes.cli gateway run --platform=telegram -m 'gpt 5'\n" in shown  # what `run` would be given
    assert hermes("gateway", "uninstall", env=env).returncode == 0
    gone = hermes("gateway", "uninstall", env=env)
    assert gone.returncode == 1 and gone.stderr.startswith("hermes: error: no service to remove"), gone.stderr
    # a profile's gateway is a service of its own, beside the default's, and runs as that profile
    assert hermes("profile", "create", "work").returncode == 0
    assert hermes("gateway", "install", env=env).returncode == 0
    out = hermes("-p", "work", "gateway", "install", env=env)
    assert out.returncode == 0 and "enable --now hermes-gateway-work" in out.stdout, out.stderr
    units = tmp_path / "cfg" / "systemd" / "user"
    work = (units / "hermes-gateway-work.service").read_text()
    assert f"Environment=HERMES_HOME={hermes_home / 'profiles' / 'work'}\n" in work
    assert "Environment=HERMES_PROFILE=work\n" in work and (units / "hermes-gateway.service").is_file()


def test_a_chats_session_is_titled_from_its_first_exchange(gateway, bot_api, wire_server, hermes):
    """hermes-agent's auxiliary.title_generation, as chat's sessions are: `hermes sessions list` says what each
    Telegram conversation was about."""
    def answer(request):
        system = request.body["messages"][0]["content"]
        return reply("Greeting Alice" if system.startswith("Name the conversation") else "Hi, Alice.")

    wire_server.script([answer] * 3)
    gateway(config={"auxiliary": {"title_generation": {"enabled": True}}})
    bot_api.say("hello")
    assert bot_api.wait_sent(1) == [("42", "Hi, Alice.")]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        [session] = json.loads(hermes("sessions", "list", "--json").stdout) or [{"title": None}]
        if session["title"]:
            break
        time.sleep(0.2)
    assert session["title"] == "Greeting Alice" and session["platform"] == "telegram"


def test_setup_checks_the_token_and_learns_the_users_id_from_a_first_message(bot_api, hermes, hermes_home, tmp_path):
    """At a terminal: the token typed hidden and checked, the user's id taken from their first message to the bot,
    both kept in the .env the gateway reads; a refused token is one line and nothing is kept."""
    import yaml

    from tests.gateway.conftest import setup_terminal

    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"telegram": {"extra": {"base_url": bot_api.base_url}}}))
    wrong = setup_terminal(hermes_home, tmp_path)
    wrong.expect("Telegram bot token")
    wrong.line("999:wrong")
    wrong.expect("hermes: error: telegram: the Bot API refused TELEGRAM_BOT_TOKEN (Unauthorized)")
    assert wrong.close() == 1 and not (hermes_home / ".env").exists()
    bot_api.say("an old message, from before", user=13)  # not the one it waits for
    term = setup_terminal(hermes_home, tmp_path, "--wait", "30")
    term.expect("Telegram bot token")
    term.line(bot_api.token)
    term.expect("The bot is @hermes_test_bot. Now send it any message")
    bot_api.say("hello bot", user=77, username="owner")
    term.expect("It was owner (id 77)")
    assert term.close() == 0 and bot_api.token not in term.seen  # typed hidden
    dotenv = hermes_home / ".env"
    assert dotenv.read_text() == f"TELEGRAM_BOT_TOKEN={bot_api.token}\nTELEGRAM_ALLOWED_USERS=77\n"
    assert oct(dotenv.stat().st_mode & 0o777) == "0o600" and not bot_api.pending()  # its message is not answered later
    [status] = [r for r in json.loads(hermes("gateway", "status", "--json").stdout) if r["platform"] == "telegram"]
    assert status["configured"] is True and status["allowed_users"] == ["77"]  # read from the .env
    piped = hermes("gateway", "setup")
    assert piped.returncode == 2 and "gateway setup asks at a terminal" in piped.stderr


def test_voice_answers_aloud_with_the_tts_plugins_backend(gateway, bot_api, wire_server, tmp_path):
    """hermes-agent's /voice: `on` answers a voice note with a voice note too, `tts` every answer, `off` none; the
    words spoken without Markdown's marks, by tts.provider's backend (here a command of the user's)."""
    import sys

    speaker = tmp_path / "speak.py"
    speaker.write_text("import sys\nopen(sys.argv[2], 'wb').write(b'RIFF' + open(sys.argv[1], 'rb').read())\n")
    wire_server.push(reply("**Hello** there."), reply("heard you"), reply("I heard you."), reply("Plain text only."))
    gateway(config={"tts": {"provider": "mine", "providers": {"mine": {
        "command": f"{sys.executable} {speaker} {{input_path}} {{output_path}}", "output_format": "wav"}}},
        "stt": {"provider": "openai", "openai": {"base_url": wire_server.openai_url}}})
    bot_api.say("/voice tts")
    assert bot_api.wait_sent(1) == [("42", "voice: every answer comes as a voice note too")]
    bot_api.say("hi")
    bot_api.wait_sent(2)
    deadline = time.monotonic() + 30
    while not bot_api.sent_files() and time.monotonic() < deadline:
        time.sleep(0.1)
    [(chat, method, name, data)] = bot_api.sent_files()
    assert (chat, method, data) == ("42", "sendAudio", b"RIFFHello there.") and name.endswith(".wav")
    bot_api.say("/voice on")  # voice notes only
    bot_api.files["v1"] = b"OggS voice"
    bot_api.say("", voice={"file_id": "v1", "duration": 1})
    bot_api.say("typed")
    sent = bot_api.wait_sent(6)
    assert sent[2:] == [("42", "voice: a voice note is answered with a voice note too"), ("42", "🎤 heard you"),
                        ("42", "I heard you."), ("42", "Plain text only.")]
    assert [data for *_, data in bot_api.sent_files()] == [b"RIFFHello there.", b"RIFFI heard you."]


def test_two_profiles_gateways_never_answer_with_one_token(gateway, bot_api, hermes, hermes_home):
    """A profile cloned with its .env holds the bot's token too: its gateway would take the same messages (Telegram
    refuses the second poller). The second is one line naming the first, and starts once the first is gone."""
    first = gateway()
    eventually(lambda: bot_api.calls and any(c[0] == "getUpdates" for c in bot_api.calls))
    assert hermes("profile", "create", "twin", "--clone").returncode == 0
    twin = hermes_home / "profiles" / "twin"
    (twin / "config.yaml").write_text((hermes_home / "config.yaml").read_text())
    second = gateway(env={"HERMES_PROFILE": "twin", "HERMES_HOME": str(twin)}).ended()
    assert second.returncode == 1, second.stderr
    assert second.stderr.splitlines()[-1].startswith(
        f"hermes: error: telegram: another gateway answers with its token (pid {first.process.pid}, profile default")
    first.stop()
    again = gateway(env={"HERMES_PROFILE": "twin", "HERMES_HOME": str(twin)})
    eventually(lambda: again.process.poll() is None and (twin / "gateway" / "gateway.lock").is_file())
    assert again.stop().count("error") == 0


def test_hermes_send_from_a_script_reaches_the_chat_without_a_gateway_or_a_model(hermes, hermes_home, bot_api,
                                                                                tmp_path):
    """hermes-agent's `hermes send`: ops scripts, cron jobs and CI reuse the gateway's credentials."""
    from tests.gateway.conftest import clean_environment
    from tests.providers.test_images import PNG

    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"telegram": {"extra": {"base_url": bot_api.base_url}}}))
    env = {**clean_environment(hermes_home), "TELEGRAM_BOT_TOKEN": bot_api.token, "TELEGRAM_HOME_CHANNEL": "42"}
    sent = hermes("send", "--to", "telegram:7", "deploy finished", env=env)
    assert sent.returncode == 0 and sent.stdout == "sent to telegram:7\n", sent.stderr
    piped = hermes("send", "-t", "telegram", "--subject", "[CI]", "-q", env=env, input="RAM 92%\n")
    assert piped.returncode == 0 and piped.stdout == "", piped.stderr  # to the home chat
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "report.md").write_text(f"the week\nMEDIA:{tmp_path / 'chart.png'}\n")
    filed = hermes("send", "--to", "telegram:7", "--file", tmp_path / "report.md", "--json", env=env)
    assert json.loads(filed.stdout) == {"target": "telegram:7", "sent": True, "error": None,
                                        "files": [str(tmp_path / "chart.png")]}
    assert bot_api.wait_sent(3) == [("7", "deploy finished"), ("42", "[CI]\n\nRAM 92%"), ("7", "the week")]
    assert len(bot_api.sent_files()) == 1
    for args, said in ((["hi"], "no --to TARGET"), (["--to", "fax:1", "hi"], "no platform 'fax' here"),
                       (["--to", "telegram"], "nothing to send"),
                       (["--to", "telegram", "MEDIA:/nowhere.png"], "MEDIA:/nowhere.png: no such file")):
        refused = hermes("send", *args, env=env, input="")
        assert refused.returncode == 2 and said in refused.stderr, (args, refused.stderr)
    bot_api.fail("sendMessage", 400, "Bad Request: chat not found", times=3)  # (a refused HTML one is tried plain)
    failed = hermes("send", "--to", "telegram:999", "hello?", env=env)
    assert failed.returncode == 1 and failed.stderr.startswith("hermes: error: not sent to telegram:999: "), \
        failed.stderr
    assert "chat not found" in failed.stderr and len(failed.stderr.splitlines()) == 1
    listed = json.loads(hermes("send", "--list", "--json", env=env).stdout)
    assert {"platform": "telegram", "set_up": True, "home": "42"} in listed
