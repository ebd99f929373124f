import json

import pytest

from kernel.config import Config
from kernel.distro import DistroError, from_mapping, load_distro
from kernel.plugins import PluginHost


def write(tmp_path, text, name="distro.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


DISTRO = """
name: tiny
description: scripted provider only, no echo tool
plugins:
  only: [scripted-provider]
tools:
  blocked: [word_count]
config:
  model: distro-model
  agent:
    max_turns: 7
"""


def test_distro_file_limits_plugins_and_sets_defaults(hermes, tmp_path):
    d = write(tmp_path, DISTRO)
    rows = {r["name"]: r for r in json.loads(hermes("--distro", d, "plugins", "list", "--json").stdout)}
    enabled = sorted(n for n, r in rows.items() if r["status"] == "enabled")
    assert enabled == ["scripted-provider"]
    for name, row in rows.items():
        if name != "scripted-provider":
            assert row["reason"] == "not listed in distro 'tiny'"
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["hi from the distro"]))
    out = hermes("--distro", d, "run", "--api-mode", "scripted", "--base-url", script, "--json", "x")
    result = json.loads(out.stdout)
    assert result["model"] == "distro-model" and result["final_response"] == "hi from the distro"


def test_user_config_overrides_distro_defaults_but_not_blocks(tmp_path):
    distro = from_mapping({"name": "d", "plugins": {"blocked": ["x"]}, "tools": {"blocked": ["terminal"]},
                           "config": {"model": "distro-model", "agent": {"max_turns": 5}}}, "test")
    cfg = Config({"model": "user-model", "agent": {"disabled_tools": []}},
                 overrides=distro.config_overrides(), defaults=distro.config_defaults())
    assert cfg.get("model") == "user-model" and cfg.get("agent.max_turns") == 5
    assert cfg.get("agent.disabled_tools") == ["terminal"]
    from kernel.plugins import Selection

    sel = Selection.from_config(Config({"plugins": {"enabled": ["x"]}}), environ={}, distro=distro)
    assert "x" in sel.disabled


def test_distro_blocks_tools_for_the_agent(make_agent, echo_plugin):
    distro = from_mapping({"name": "d", "tools": {"blocked": ["boom", "sleep"]}}, "test")
    agent = make_agent(echo_plugin, config=Config({}, overrides=distro.config_overrides()))
    assert "boom" not in agent.tools and "sleep" not in agent.tools and "echo" in agent.tools


@pytest.mark.parametrize(
    "text, message",
    [
        ("name: [1]\n", "name: expected a non-empty string"),
        ("name: x\nplugins: {only: nope}\n", "only: expected a list of names"),
        ("name: x\ncolour: blue\n", "unknown key(s) colour"),
        ("name: x\nplugins: [a]\n", "plugins: expected a mapping"),
        ("name: [\n", "cannot read distro"),
    ],
)
def test_bad_distro_files_are_clear_errors(hermes, tmp_path, text, message):
    d = write(tmp_path, text)
    with pytest.raises(DistroError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        load_distro(str(d))
    out = hermes("--distro", d, "plugins", "list")
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_unknown_distro_name(hermes):
    out = hermes("--distro", "no-such-distro", "plugins", "list")
    assert out.returncode == 2 and "no distro named 'no-such-distro'" in out.stderr


def test_list_candidates_with_distro_only_set(tmp_path):
    distro = from_mapping({"name": "d", "plugins": {"only": ["scripted-provider"]}}, "test")
    recs = PluginHost.list_candidates(Config({}), distro=distro)
    assert [r.name for r in recs if r.status == "enabled"] == ["scripted-provider"]
