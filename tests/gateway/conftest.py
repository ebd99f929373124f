"""`hermes gateway run` as a subprocess on a loopback Telegram Bot API (tests/botapi.py), its agent's model the
wire-protocol test server through the real openai SDK."""

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest
import yaml

from tests.botapi import BotAPI
from tests.conftest import ROOT, hermes_command


def eventually(check, timeout: float = 15) -> None:
    """Wait until ``check()`` holds (what a gateway does after its answer is sent: a reaction)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "it did not happen in time"
        time.sleep(0.05)


class Running:
    def __init__(self, process):
        self.process = process

    def ended(self) -> subprocess.CompletedProcess:
        """Wait for it to end by itself."""
        out, err = self.process.communicate(timeout=60)
        return subprocess.CompletedProcess(self.process.args, self.process.returncode, out, err)

    def stop(self, sig=signal.SIGTERM) -> str:
        """Stop it (SIGKILL: at once); what it said on stderr."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err


@pytest.fixture
def bot_api():
    with BotAPI() as api:
        yield api


PLATFORM_VARIABLES = ("TELEGRAM_", "DISCORD_", "SLACK_", "MATRIX_", "SIGNAL_", "EMAIL_",
                      "MATTERMOST_", "GITHUB_", "GH_TOKEN")  # the environment's are not the tests'


def clean_environment(hermes_home) -> dict:
    """The environment a gateway command of the tests runs in: no platform's variables of the machine's, this
    worktree importable, the test's data folder."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith(PLATFORM_VARIABLES)},
            "HERMES_HOME": str(hermes_home),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))}


def setup_terminal(hermes_home, tmp_path, *args, env: dict = None):
    """``hermes gateway setup ARGS`` in a pseudo-terminal (``env``: more variables)."""
    from tests.terminal.conftest import Terminal

    return Terminal([*hermes_command(), "gateway", "setup", *args], {**clean_environment(hermes_home), **(env or {})},
                    tmp_path)


def starter(hermes_home, wire_server, platform: dict, variables: dict):
    """``start(config={}, env={}, args=())``: ``hermes gateway run ARGS`` as a subprocess on ``platform``'s settings and
    ``variables`` (its token, its allow-list), its model the wire-protocol server; with ``stop_all``."""
    started = []

    def start(config: dict = None, env: dict = None, args: tuple = ()) -> Running:
        settings = {"model": "gpt-test", "base_url": wire_server.openai_url, "api_mode": "chat_completions",
                    **platform, "auxiliary": {"title_generation": {"enabled": False}},
                    "display": {"tool_progress": "off"},  # the list of tool calls: its own test turns it on
                    **(config or {})}
        (hermes_home / "config.yaml").write_text(yaml.safe_dump(settings))
        full_env = {**clean_environment(hermes_home), "OPENAI_API_KEY": "sk-test", **variables, **(env or {})}
        process = subprocess.Popen(hermes_command() + ["gateway", "run", *args], env=full_env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        started.append(Running(process))
        return started[-1]

    start.stop_all = lambda: [running.stop(signal.SIGKILL) for running in started]
    return start


def listening(start, url: str):
    """``run(config={}, env={}, args=())``: :func:`starter`'s ``start``, its gateway waited for until it answers at
    ``url`` (a webhook platform's listener: any HTTP status will do); ``run.start`` starts one that is to fail
    without waiting."""
    def run(**kwargs) -> Running:
        running = start(**kwargs)

        def answers() -> bool:
            assert running.process.poll() is None, running.stop()
            try:
                urllib.request.urlopen(url, timeout=2)
            except urllib.error.HTTPError:
                return True  # it answers (a GET where it takes POSTs: 405)
            except OSError:
                return False
            return True

        eventually(answers)
        return running

    run.start = start
    return run


@pytest.fixture
def gateway(hermes_home, wire_server, bot_api):
    """``gateway(config={}, env={})``: a running ``hermes gateway run`` on the loopback Telegram (user 42 allowed);
    stopped after the test."""
    start = starter(hermes_home, wire_server, {"telegram": {"extra": {"base_url": bot_api.base_url}}},
                    {"TELEGRAM_BOT_TOKEN": bot_api.token, "TELEGRAM_ALLOWED_USERS": "42"})
    yield start
    start.stop_all()
