"""CONTRIBUTING.md's five-minute plugin, copied literally from the page into
a new folder: it installs with pip, `hermes plugins list` shows it with its
description, and its tool runs in a scripted conversation. The guide stays
short (at most 300 lines)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import ROOT, pip_from_index

PAGE = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def _block(first_line: str) -> str:
    for match in re.finditer(r"```(?:python|toml)\n(.*?)```", PAGE, re.S):
        if match.group(1).startswith(first_line):
            return match.group(1)
    raise AssertionError(f"no snippet starting with {first_line!r} in CONTRIBUTING.md")


def test_the_guide_is_short():
    assert len(PAGE.splitlines()) <= 300


@pytest.mark.network  # pip builds the package with setuptools from the index
def test_the_five_minute_plugin_installs_lists_and_runs(hermes, tmp_path, wire_server):
    from plugins_providers.testserver import reply

    package = tmp_path / "charcount"
    (package / "hermes_charcount").mkdir(parents=True)
    (package / "hermes_charcount" / "__init__.py").write_text(_block("# hermes_charcount/__init__.py"))
    (package / "pyproject.toml").write_text(_block("# pyproject.toml"))
    target = tmp_path / "site"
    pip_from_index("install", "--no-deps", "--target", str(target), str(package), what="the five-minute plugin's build (setuptools)")
    env = {"PYTHONPATH": os.pathsep.join([str(target), str(ROOT)])}

    listed = {p["name"]: p for p in json.loads(hermes("plugins", "list", "--json", env=env).stdout)}
    assert listed["charcount"]["status"] == "enabled" and listed["charcount"]["description"] == "Counts characters."
    assert listed["charcount"]["distribution"] == "hermes-charcount"

    # the page's run line, as printed, with the SDK's own OPENAI_BASE_URL pointing at the wire server
    assert not tomllib.loads(_block("# pyproject.toml"))["project"].get("dependencies")  # hermes is not on the index
    line = re.search(r"`OPENAI_API_KEY=sk-\.\.\. hermes (run [^`]+)` offers the tool", PAGE).group(1)
    wire_server.push(reply(tool_calls=[("char_count", {"text": "hello"})]), reply("It has 5 characters."))
    out = hermes(*shlex.split(line), env={**env, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": wire_server.openai_url})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "It has 5 characters."
    first, second = wire_server.requests
    assert first.path == "/v1/responses" and first.body["model"] == "gpt-4.1"  # OpenAI's own API: Responses
    assert [t["name"] for t in first.body["tools"]] == ["char_count"]
    assert json.loads(second.body["input"][-1]["output"]) == {"chars": 5}

    # "Testing a plugin": the page's test, run by pytest against the installed package
    (tmp_path / "test_page.py").write_text(_block("from kernel.agent import Agent"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_page.py")],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, **env})
    assert done.returncode == 0, done.stdout + done.stderr


def _files(snippet: str) -> dict:
    """A snippet made of ``# path`` sections -> {path: text}."""
    parts = re.split(r"^# (\S+\.py)\n", snippet, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_the_spec_and_config_snippets_work_as_written(tmp_path, monkeypatch, caplog):
    from hermes.host.config import Config, kind
    from hermes.host.plugins import PluginHost
    from kernel.agent import Agent
    from kernel.types import ProviderConfig
    from plugins_providers.scripted import scripted_plugin

    for snippet in (_block("# voices/hookspecs.py"), _block("# weather/__init__.py")):
        for path, text in _files(snippet).items():
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    import voices
    import weather

    class Voice:
        @staticmethod
        def choose_voice(text):
            return "calm"

    from kernel import hookimpl

    Voice.choose_voice = hookimpl(Voice.choose_voice)
    config = Config({"weather": {"days": 5}})
    host = PluginHost.from_objects([scripted_plugin([]), voices, weather, Voice()], config)
    assert {r.name: r.status for r in host.records} == {"commands": "enabled", "config-command": "enabled",
                                                         "scripted": "enabled", "voices": "enabled",
                                                         "weather": "enabled", "Voice": "enabled"}
    agent = Agent(host, ProviderConfig(api_mode="scripted", model="m"))
    assert agent.ask("choose_voice", text="hello") == "calm"
    assert config.get("weather.city") == "Oslo" and config.get("weather.days") == 5
    assert kind(config.keys["weather.days"]) == "an integer of at least 1"
    for mod in ("voices", "voices.hookspecs", "weather"):
        sys.modules.pop(mod, None)
