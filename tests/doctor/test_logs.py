"""The logs plugin: a session's warnings kept in the data folder's logs/hermes.log (hermes-agent's logging.* keys),
and `hermes logs` to read them, as a subprocess against the wire-protocol server with the real openai SDK."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import time

from plugins_providers.testserver import reply
from tests.conftest import ROOT, hermes_command
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

MODEL = ("--api-mode", "chat_completions", "-m", "gpt-test")


def run(hermes, wire_server, env, config=""):
    wire_server.script([reply("fine")])
    out = hermes("run", "--base-url", wire_server.openai_url, *MODEL, "--no-save", "hi", env=env)
    assert out.returncode == 0 and out.stdout.strip() == "fine", out.stderr
    return out


def test_a_sessions_warnings_are_kept_and_hermes_logs_shows_them(hermes, hermes_home, wire_server, cli_env):  # noqa: F811
    """The warning reaches stderr as before and the log with its time, level and process; `--json` gives records;
    INFO (hermes-agent's default) adds the HTTP requests to the log but not to stderr."""
    env = {**cli_env, "OPENAI_API_KEY": "sk-test", "HERMES_TIMEZONE": "Mars/Olympus"}
    said = hermes("logs")
    assert said.returncode == 0 and said.stdout == "" and "No log yet" in said.stderr
    [line] = [c for c in json.loads(hermes("doctor", "--offline", "--json").stdout) if c["name"] == "logs"]
    assert line["status"] == "ok" and line["detail"].endswith("hermes.log: nothing logged yet")
    first = run(hermes, wire_server, env)
    assert "timezone 'Mars/Olympus' is no IANA time zone" in first.stderr
    log = hermes_home / "logs" / "hermes.log"
    assert log.stat().st_mode & 0o777 == 0o600  # what a session did is the user's alone
    shown = hermes("logs")
    assert shown.returncode == 0 and len(shown.stdout.splitlines()) == 1, shown
    assert " WARNING [" in shown.stdout and "hermes.clock: timezone 'Mars/Olympus' is no IANA" in shown.stdout
    (hermes_home / "config.yaml").write_text("logging:\n  level: INFO\n")
    second = run(hermes, wire_server, env)
    assert "HTTP Request" not in second.stderr and "INFO" not in second.stderr
    records = json.loads(hermes("logs", "--json").stdout)
    assert records["path"] == str(log)
    shown = records["records"]
    assert [r["level"] for r in shown] == ["WARNING", "WARNING", "INFO"]
    assert shown[1]["logger"] == "hermes.clock" and shown[2]["logger"].startswith("httpx")
    assert shown[2]["message"].startswith(f"HTTP Request: POST {wire_server.openai_url}/chat/completions")
    assert shown[0]["pid"] != shown[1]["pid"]
    assert hermes("logs", "-n", "1").stdout.count("\n") == 1 and hermes("logs", "-n", "0").stdout == ""
    for only in (["errors"], ["--level", "warning"]):  # hermes-agent's errors.log, its --level
        assert [r["level"] for r in json.loads(hermes("logs", *only, "--json").stdout)["records"]] == ["WARNING"] * 2
    assert len(json.loads(hermes("logs", "--since", "10m", "--json").stdout)["records"]) == 3
    assert json.loads(hermes("logs", "--since", "2999-01-01", "--json").stdout)["records"] == []
    bad = hermes("logs", "--since", "soon")
    assert bad.returncode == 2 and "'soon': expected a duration (30d, 12h, 2w, 30m) or a date" in bad.stderr
    [line] = [c for c in json.loads(hermes("doctor", "--offline", "--json").stdout) if c["name"] == "logs"]
    assert line["status"] == "warn" and line["detail"].startswith("warnings and errors in the last day: 2 (0 errors); "
                                                                  "the last: timezone 'Mars/Olympus' is no IANA")
    wrong = hermes("logs", "--follow", "--json")
    assert wrong.returncode == 1 and wrong.stderr.startswith("hermes: error: --follow prints records as they come")


def test_the_log_is_rotated_at_its_size_and_followed_across(hermes, hermes_home, wire_server, cli_env):  # noqa: F811
    """logging.max_size_mb and logging.backup_count: the file starts again past the size and the older ones beyond
    the count go; `hermes logs --follow` prints each new line, from the new file after a rotation, until Ctrl+C."""
    env = {**cli_env, "OPENAI_API_KEY": "sk-test", "HERMES_TIMEZONE": "Mars/Olympus"}
    (hermes_home / "config.yaml").write_text("logging:\n  max_size_mb: 0.0001\n  backup_count: 1\n")  # 104 bytes
    run(hermes, wire_server, env)
    full_env = {**os.environ, "HERMES_HOME": str(hermes_home), "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))])), **env}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    following = subprocess.Popen([*hermes_command(), "logs", "--follow", "-n", "1"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=full_env)
    try:
        assert "Mars/Olympus" in following.stdout.readline()  # the last line, then the new ones
        time.sleep(0.5)
        run(hermes, wire_server, env)
        run(hermes, wire_server, env)
        assert "Mars/Olympus" in following.stdout.readline() and "Mars/Olympus" in following.stdout.readline()
    finally:
        following.send_signal(signal.SIGINT)
        assert following.wait(timeout=10) == 0 and "Traceback" not in following.stderr.read()
    assert sorted(p.name for p in (hermes_home / "logs").iterdir()) == ["hermes.log", "hermes.log.1"]


def test_key_values_are_masked_in_the_log(make_agent, hermes_home, monkeypatch):
    """A warning that quotes a key (a provider's error echoing a request) is written with the value masked."""
    from plugins.logs.file import LogFile, attach

    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdefghijkl")
    agent = make_agent(config={"provider_options": {}})
    root = logging.getLogger()
    before = (root.level, list(root.handlers))
    try:
        attach(agent)
        attach(agent)  # a second session of the process: still one handler
        assert sum(isinstance(h, LogFile) for h in root.handlers) == 1
        logging.getLogger("hermes.test").warning("the server said: bad key %s", "sk-live-abcdefghijkl")
    finally:
        for handler in [h for h in root.handlers if h not in before[1]]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(before[0])
    text = (hermes_home / "logs" / "hermes.log").read_text()
    assert "the server said: bad key [hermes: the value of $OPENAI_API_KEY was masked]" in text
    assert "sk-live" not in text


def test_a_log_that_cannot_be_written_is_said_once_and_the_run_goes_on(hermes, hermes_home, wire_server, cli_env):  # noqa: F811
    """logs/ is a file (or a full disk): one line on stderr, no traceback, the answer as ever."""
    (hermes_home / "logs").write_text("not a folder\n")
    env = {**cli_env, "OPENAI_API_KEY": "sk-test", "HERMES_TIMEZONE": "Mars/Olympus"}
    out = run(hermes, wire_server, env)
    assert out.stderr.count(f"hermes: warning: cannot write {hermes_home / 'logs' / 'hermes.log'}") == 1
    assert "Traceback" not in out.stderr and "Logging error" not in out.stderr
    assert "timezone 'Mars/Olympus' is no IANA time zone" in out.stderr


def test_a_credential_in_a_warning_is_hidden_in_the_log_as_in_tools_results(hermes, hermes_home, wire_server, cli_env):  # noqa: F811
    """security.redact_secrets (the redact plugin's patterns) holds for the log file too: a token in a bad setting is
    a marker there; stderr, the user's own screen, shows what they typed."""
    token = "ghp_" + "Q7r2LmX9vB4nK8sT1wY6zA3cE5gH0jU2pD4f"
    out = run(hermes, wire_server, {**cli_env, "OPENAI_API_KEY": "sk-test", "HERMES_TIMEZONE": token})
    assert f"timezone '{token}' is no IANA time zone" in out.stderr
    logged = (hermes_home / "logs" / "hermes.log").read_text()
    assert "timezone '⟦redacted GitHub token⟧' is no IANA time zone" in logged and token not in logged
