"""Pairing, end to end: a stranger writing to `hermes gateway run` (the loopback Telegram) with nobody allowed yet gets
a code; `hermes pairing approve` lets them in at once, a wrong code does not, and the store is hermes-agent's files."""

from __future__ import annotations

import fcntl
import json
import re
import stat
import subprocess
import time

from plugins_providers.testserver import reply
from tests.conftest import hermes_command
from tests.gateway.conftest import clean_environment


def test_a_strangers_code_approved_lets_them_in_at_once_and_wrong_codes_lock_the_approvals(gateway, bot_api,
                                                                                          wire_server, hermes,
                                                                                          hermes_home):
    wire_server.push(reply("Welcome, Bob."), reply("Pong."))
    running = gateway(env={"TELEGRAM_ALLOWED_USERS": ""})  # nobody is allowed yet
    bot_api.say("hello?", user=7, username="bob")
    [(chat, told)] = bot_api.wait_sent(1)
    code = re.search(r"lets you in with hermes pairing approve telegram ([A-Z2-9]{8}) \(the code lasts an hour\)\.$",
                     told)  # the command shown as code
    assert chat == "7" and told.startswith("I only answer the people my owner allowed. Your telegram user id is 7")
    assert code, told
    pending = hermes_home / "platforms" / "pairing" / "telegram-pending.json"
    assert code[1] not in pending.read_text() and stat.S_IMODE(pending.stat().st_mode) == 0o600  # a hash only
    listed = json.loads(hermes("pairing", "list", "--json").stdout)
    assert [(p["platform"], p["user_id"], p["user_name"]) for p in listed["pending"]] == [("telegram", "7", "bob")]
    wrong = hermes("pairing", "approve", "telegram", "AAAAAAAA")
    assert wrong.returncode == 1 and wrong.stderr == ("hermes: error: no waiting code AAAAAAAA on telegram (codes last "
                                                      "an hour)\n")
    approved = hermes("pairing", "approve", "telegram", code[1].lower())
    assert approved.returncode == 0 and approved.stdout == "approved telegram user 7 (bob)\n", approved.stderr
    bot_api.say("and now?", user=7, username="bob")  # the running gateway reads the approval at once
    assert bot_api.wait_sent(2)[-1] == ("7", "Welcome, Bob.")
    assert json.loads(hermes("pairing", "list", "--json").stdout) == {
        "pending": [], "approved": [{"platform": "telegram", "user_id": "7", "user_name": "bob"}]}
    assert hermes("pairing", "revoke", "telegram", "7").stdout == "revoked telegram user 7\n"
    for _ in range(3):  # with AAAAAAAA's, four wrong codes
        hermes("pairing", "approve", "telegram", "BBBBBBBB")
    locked = hermes("pairing", "approve", "telegram", "CCCCCCCC")
    assert locked.stderr.endswith("; telegram's approvals are now locked for an hour\n")
    assert "locked for an hour after 5 wrong codes" in hermes("pairing", "approve", "telegram", "DDDDDDDD").stderr
    running.stop()
    gateway(config={"unauthorized_dm_behavior": "ignore", "telegram": {"extra": {"base_url": bot_api.base_url}}})
    bot_api.say("let me in", user=8, username="eve")  # told nothing at all
    bot_api.say("ping")
    assert bot_api.wait_sent(3)[-1] == ("42", "Pong.") and "8" not in [chat for chat, _ in bot_api.wait_sent(3)]


def test_the_gateway_and_hermes_pairing_change_the_files_one_at_a_time(hermes_home):
    folder = hermes_home / "platforms" / "pairing"
    folder.mkdir(parents=True)
    with open(folder / "_pairing.lock", "a") as held:  # as a gateway counting a stranger's code
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = subprocess.Popen([*hermes_command(), "pairing", "approve", "telegram", "AAAAAAAA"],
                                   env=clean_environment(hermes_home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        time.sleep(1.5)
        assert waiting.poll() is None  # it waits for the file, not reading what is being written
    _, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 1 and err == ("hermes: error: no waiting code AAAAAAAA on telegram (codes last an "
                                               "hour)\n")
    assert json.loads((folder / "_rate_limits.json").read_text()) == {"_failures:telegram": 1}
