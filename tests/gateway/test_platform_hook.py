"""A platform of a plugin's own through the gateway_platforms hook: a pip-installed plugin whose messages come from
and go to files. The gateway answers it as it answers Telegram (its allow-list variable named after it, answers
cut at its ``most``), and hands back the offset it kept, so a restart receives nothing twice."""

from __future__ import annotations

import json
import os
import time

import yaml

from plugins_providers.testserver import reply
from tests.conftest import ROOT
from tests.kernel.fakedist import make_dist

PLATFORM = '''
import json, os, time
from kernel import hookimpl
from plugins.gateway.hookspecs import Incoming

class Files:
    name, most, offset = "files", 40, 0

    def __init__(self, folder):
        self.folder = folder

    def start(self):
        return "the files of " + os.path.basename(self.folder)

    def receive(self):
        path = os.path.join(self.folder, "inbox.jsonl")
        lines = open(path).read().splitlines() if os.path.exists(path) else []
        new, self.offset = lines[self.offset:], len(lines)
        if not new:
            time.sleep(0.05)
        return [Incoming(**json.loads(line)) for line in new]

    def send(self, chat, text):
        with open(os.path.join(self.folder, "outbox.jsonl"), "a") as out:
            out.write(json.dumps([chat, text]) + "\\n")

    def typing(self, chat):
        pass

    def close(self):
        pass

@hookimpl(optionalhook=True)
def gateway_platforms(config):
    folder = os.environ.get("FILES_PLATFORM", "")
    return {"files": lambda: Files(folder) if folder else None}
'''


def sent(folder, count):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        path = folder / "outbox.jsonl"
        found = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"not {count} sent")


def test_a_plugins_platform_is_answered_and_restarts_where_it_left_off(hermes, hermes_home, wire_server, tmp_path):
    import subprocess

    from tests.conftest import hermes_command

    make_dist(tmp_path / "site", "hermes-files-platform", "1.0", {"files-platform": ("files_platform", PLATFORM)})
    folder = tmp_path / "chats"
    folder.mkdir()
    env = {**os.environ, "HERMES_HOME": str(hermes_home), "OPENAI_API_KEY": "sk-test", "FILES_PLATFORM": str(folder),
           "FILES_ALLOWED_USERS": "alice", "TELEGRAM_BOT_TOKEN": "",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site")])}
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({
        "model": "gpt-test", "api_mode": "chat_completions", "base_url": wire_server.openai_url,
        "auxiliary": {"title_generation": {"enabled": False}}}))
    shown = hermes("gateway", "status", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    assert {"platform": "files", "configured": True, "running": None, "allowed_users": ["alice"]} in status
    wire_server.push(reply("A first answer that is longer than forty characters."), reply("Second."))

    def say(text, user="alice"):
        with open(folder / "inbox.jsonl", "a") as out:
            out.write(json.dumps({"chat": "c1", "user": user, "name": user, "text": text}) + "\n")

    say("hello")
    process = subprocess.Popen(hermes_command() + ["gateway", "run", "--platform", "files"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = sent(folder, 2)
        assert [text for _, text in first] == ["A first answer that is longer than forty", " characters."]
        process.terminate()
        assert "gateway on files as the files of chats (1 user(s) allowed)" in process.communicate(timeout=30)[1]
        say("again")
        process = subprocess.Popen(hermes_command() + ["gateway", "run", "--platform", "files"], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert sent(folder, 3)[-1] == ["c1", "Second."]
        assert [m["content"] for m in wire_server.requests[-1].body["messages"] if m["role"] == "user"] == [
            "hello", "again"]  # "hello" was not received again
    finally:
        process.kill()
        process.communicate()
    unknown = hermes("gateway", "run", "--platform", "carrier-pigeon", env=env)
    assert unknown.returncode == 2 and ("no platform named carrier-pigeon; there are: bluebubbles, dingtalk, discord, "
                                        "email, feishu, files, google_chat, homeassistant, irc, line, matrix, mattermost, ntfy, "
                                        "signal, slack, sms, teams, telegram, webhook, whatsapp_cloud") in \
        unknown.stderr
