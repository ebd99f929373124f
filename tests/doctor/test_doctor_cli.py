"""``hermes doctor``: a line per part of the setup, through the real command line, the real openai SDK and the
wire-protocol server; each plugin answers for its part through ``doctor_checks``."""

from __future__ import annotations

import json
from types import SimpleNamespace

import yaml

from kernel import hookimpl
from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)


def _lines(out) -> dict:
    return {check["name"]: (check["status"], check["detail"]) for check in json.loads(out.stdout)}


def test_a_fresh_install_says_what_is_missing_and_exits_1(hermes, hermes_home, cli_env):  # noqa: F811
    out = hermes("doctor", env=cli_env)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"ok    config    {hermes_home / 'config.yaml'}: none yet (the defaults)"
    assert "fail  model     no model: pass -m MODEL, or choose one with `hermes setup` (`hermes model set MODEL` in " \
           "a script)" in lines
    assert any(line.startswith("ok    sessions  ") and line.endswith("integrity check passed") for line in lines)
    assert any(line.startswith(("ok    sandbox", "warn  sandbox")) for line in lines)
    assert out.stderr.strip().endswith("failed, 0 to look at") and "Traceback" not in out.stderr
    checks = _lines(hermes("doctor", "--json", env=cli_env))
    assert checks["model"][0] == "fail" and checks["plugins"][0] == "ok"


def test_each_model_is_asked_once_and_each_mistake_is_its_own_line(hermes, hermes_home, wire_server,
                                                                     cli_env):  # noqa: F811
    """The conversation's model, a fallback, the compression model and the subagents' model each answer one short
    request (no retry, no fallback in between); a fallback without its key and one whose server is down fail
    alone. --offline checks the same settings and sends nothing."""
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({
        "model": "gpt-test", "api_mode": "chat_completions", "base_url": wire_server.openai_url,
        "fallback_providers": [{"model": "fb-1", "provider": "openrouter"},
                               {"model": "fb-2", "api_mode": "chat_completions", "base_url": "http://127.0.0.1:9/v1"}],
        "auxiliary": {"compression": {"model": "cheap-1"}}, "delegation": {"model": "sub-1"}}))
    for _ in range(3):
        wire_server.push(reply("OK"))
    env = {**cli_env, "OPENAI_API_KEY": "sk-test", "OPENROUTER_API_KEY": ""}
    out = hermes("doctor", "--json", env=env)
    assert out.returncode == 1, out.stderr
    checks = _lines(out)
    assert checks["model"][0] == "ok" and checks["model"][1].startswith("chat_completions:gpt-test: answered in ")
    assert checks["auxiliary.compression"][0] == checks["delegation"][0] == "ok"
    assert checks["fallback 1"] == ("fail", "openrouter:fb-1: no API key: set the environment variable "
                                            "OPENROUTER_API_KEY (`hermes config set OPENROUTER_API_KEY ...` keeps it "
                                            "in the .env beside config.yaml; or name another one with api_key_env in "
                                            "config)")
    assert checks["fallback 2"][0] == "fail" and "http://127.0.0.1:9/v1" in checks["fallback 2"][1]
    assert sorted(r.body["model"] for r in wire_server.requests) == ["cheap-1", "gpt-test", "sub-1"]
    assert all(r.body.get("max_tokens") == 16 and not r.body.get("tools") for r in wire_server.requests)
    before = len(wire_server.requests)
    offline = _lines(hermes("doctor", "--offline", "--json", env=env))
    assert offline["model"] == ("ok", "chat_completions:gpt-test: configured (not called: --offline)")
    assert offline["fallback 1"][0] == "fail" and len(wire_server.requests) == before
    assert json.loads(hermes("sessions", "list", "--json").stdout) == []  # the doctor stores no session


GATEWAY = """
from kernel import hookimpl

@hookimpl
def pre_api_request(call):
    call.request.extra["extra_headers"] = {"X-Gateway-Token": "t0k-" + (call.aux_task or "turn")}
"""


def test_the_probe_goes_through_pre_api_request_as_a_turns_call_does(hermes, hermes_home, wire_server, tmp_path,
                                                                      cli_env):  # noqa: F811
    """A plugin that adds what the endpoint needs (a gateway's token) in pre_api_request: the doctor's and setup's
    one short request went straight to the provider without it, and failed where every run worked."""
    import os

    from tests.conftest import ROOT
    from tests.kernel.fakedist import make_dist

    make_dist(tmp_path / "site", "hermes-gateway-token", "1.0", {"gateway-token": ("gateway_token", GATEWAY)})
    env = {**cli_env, "OPENAI_API_KEY": "sk-test",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site"), cli_env.get("PYTHONPATH", "")])}
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({
        "model": "gpt-test", "api_mode": "chat_completions", "base_url": wire_server.openai_url}))
    wire_server.push(reply("OK"), reply("hi"))
    out = hermes("doctor", "--json", env=env)
    assert _lines(out)["model"][0] == "ok", out.stdout + out.stderr
    assert hermes("run", "hello", env=env).returncode == 0
    assert [r.headers.get("x-gateway-token") for r in wire_server.requests] == ["t0k-probe", "t0k-turn"]


def test_a_model_that_accepts_the_request_and_never_answers_is_a_failed_line_in_time(hermes, hermes_home,
                                                                                       wire_server, cli_env):  # noqa: F811
    from plugins_providers.testserver import Step

    (hermes_home / "config.yaml").write_text(yaml.safe_dump({
        "model": "slow-1", "api_mode": "chat_completions", "base_url": wire_server.openai_url,
        "agent": {"api_timeout": 1}}))
    wire_server.push(Step(text="late", delay=8))
    out = hermes("doctor", "--json", env={**cli_env, "OPENAI_API_KEY": "sk-test"}, timeout=30)
    assert out.returncode == 1, out.stderr
    assert _lines(out)["model"] == ("fail", "chat_completions:slow-1: no answer within 1 s")

def test_a_config_yaml_with_a_wrong_value_is_the_first_line_and_the_rest_still_runs(hermes, hermes_home,
                                                                                   cli_env):  # noqa: F811
    (hermes_home / "config.yaml").write_text("model: m\nagent:\n  max_turns: many\nsandbox:\n  mode: nope\n")
    out = hermes("doctor", "--offline", "--json", env={**cli_env, "OPENAI_API_KEY": "sk-test"})
    assert out.returncode == 1, out.stderr
    checks = _lines(out)
    assert checks["config"][0] == "fail" and "agent.max_turns" in checks["config"][1]
    assert checks["config"][1].endswith("(and 1 more: `hermes config check`)")
    assert checks["sandbox"][1].startswith("Tool commands will run")  # a wrong value is not read: the default
    assert checks["sessions"][0] == "ok"


class _Broken:
    @hookimpl
    def doctor_checks(self, agent, online):
        raise RuntimeError("cannot reach its own database")


class _Mine:
    @hookimpl
    def doctor_checks(self, agent, online):
        return [("notes db", "warn", "3 notes without a date"), "not a line", ("half",)]


def test_a_plugins_own_lines_count_and_a_check_that_raises_is_a_failed_line(hermes_home):
    from hermes.host.config import Config
    from hermes.host.plugins import PluginHost
    from plugins import doctor
    from plugins.doctor.command import _asked
    from plugins_providers.scripted import scripted_plugin

    host = PluginHost.from_objects([scripted_plugin(["OK"]), doctor, _Broken(), _Mine()],
                                   Config({"model": "m", "api_mode": "scripted"}))
    lines = _asked(SimpleNamespace(host=host, config=host.config), online=True)
    by_name = {line.name: line for line in lines}
    assert by_name["model"].status == "ok" and by_name["notes db"].detail == "3 notes without a date"
    broken = [line for line in lines if line.detail.startswith("its doctor check failed: RuntimeError")]
    assert len(broken) == 1 and broken[0].status == "fail" and "cannot reach its own database" in broken[0].detail
    assert "half" not in by_name and len(lines) == 3
