"""Processes and plugins (issue 22, item 7), through the CLI: ``hermes run``
with its standard output closed, and a plugin tool that returns 50 MB."""

from __future__ import annotations

import json
import os
import subprocess

from plugins_providers.testserver import reply
from tests.conftest import ROOT, hermes_command
from tests.kernel.fakedist import make_dist
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

BIG = '''
from kernel import hookimpl
from kernel.types import Tool


@hookimpl
def register_tools(register):
    register(Tool(name="big", description="Returns a lot.", parameters={"type": "object", "properties": {}},
                  handler=lambda args, ctx: "y" * 50_000_000, toolset="bigset"))
'''


def _env(cli_env, hermes_home, **more) -> dict:  # noqa: F811
    path = os.pathsep.join(filter(None, [str(ROOT), cli_env.get("PYTHONPATH", ""), more.pop("path", "")]))
    return {**os.environ, **cli_env, "HERMES_HOME": str(hermes_home), "OPENAI_API_KEY": "sk-test",
            "PYTHONPATH": path, **more}


def test_a_run_with_stdout_closed_stores_its_work_and_says_the_output_was_lost(wire_server, cli_env, hermes_home,  # noqa: F811
                                                                             hermes):
    wire_server.push(reply("the answer"))
    command = " ".join([*hermes_command(), "run", "--json", "--base-url", wire_server.openai_url, "--api-mode",
                        "chat_completions", "-m", "m", "go"])
    done = subprocess.run(["bash", "-c", f"exec {command} >&-"], env=_env(cli_env, hermes_home), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == "hermes: error: standard output was closed; what this command printed did not reach it"
    listed = json.loads(hermes("sessions", "list", "--json").stdout)
    assert listed and listed[0]["message_count"] == 2  # the question and the answer: stored


def test_a_tool_result_of_50_mb_is_cut_with_a_marker_before_the_model_and_the_store(wire_server, cli_env,  # noqa: F811
                                                                                   hermes_home, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "hermes-big", "1.0", {"big": ("hermes_big_mod", BIG)})
    wire_server.script([reply(tool_calls=[("big", {})]), reply("that was a lot")])
    done = subprocess.run([*hermes_command(), "run", "--json", "--base-url", wire_server.openai_url, "--api-mode",
                           "chat_completions", "-m", "m", "-t", "bigset", "go"],
                          env=_env(cli_env, hermes_home, path=str(site)), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    tool = next(m for m in json.loads(done.stdout)["messages"] if m["role"] == "tool")
    assert len(tool["content"]) < 100_200 and tool["content"].endswith(
        "[hermes: the result was 50000000 characters; only the first 100000 are kept (tools.max_result_chars)]")
    sent = next(m for m in wire_server.requests[1].body["messages"] if m["role"] == "tool")
    assert sent["content"] == tool["content"]
    assert (hermes_home / "state.db").stat().st_size < 5_000_000


IGNORES_SIGTERM = '''
import signal

signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
'''

FORKS = '''
import os

os.fork()  # both processes go on importing: the child must not run the turn too
'''


def test_a_plugin_that_ignores_sigterm_at_import_does_not_make_hermes_ignore_it(wire_server, cli_env,  # noqa: F811
                                                                              hermes_home, tmp_path):
    import signal
    import time

    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "hermes-deaf", "1.0", {"deaf": ("hermes_deaf_mod", IGNORES_SIGTERM)})
    wire_server.push(reply("slow", delay=20))
    run = subprocess.Popen([*hermes_command(), "run", "--base-url", wire_server.openai_url, "--api-mode",
                            "chat_completions", "-m", "m", "go"], env=_env(cli_env, hermes_home, path=str(site)),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(200):  # until the model call is in flight
        if wire_server.requests:
            break
        time.sleep(0.05)
    assert wire_server.requests, "the run never called the model"
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=15)  # ignored, it would wait for the 20 s answer and more
    assert run.returncode == 128 + signal.SIGTERM, err
    assert "plugin deaf: its import changed how SIGTERM is handled; hermes' own handler is back" in err


def test_a_plugin_that_forks_at_import_does_not_run_the_turn_twice(wire_server, cli_env, hermes_home,  # noqa: F811
                                                                 tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "hermes-forker", "1.0", {"forker": ("hermes_forker_mod", FORKS)})
    wire_server.script([reply("once"), reply("twice")])
    done = subprocess.run([*hermes_command(), "run", "--base-url", wire_server.openai_url, "--api-mode",
                           "chat_completions", "-m", "m", "go"], env=_env(cli_env, hermes_home, path=str(site)),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "once" and len(wire_server.requests) == 1
