"""Config writes that lose nothing (issue 22, item 1), through the CLI: the
comments of config.yaml, a symlinked file, keys set at once from several
terminals, a section replaced by --force, and values that are no value
(``nan``, ``inf``, outside a key's choices)."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import hermes_command

COMMENTED = """\
# my hermes settings
agent:
  max_turns: 30  # enough for most tasks
  # the identity
  system_prompt: "You are terse."
plugins:
  disabled: [skills]  # not needed here
"""


@pytest.fixture
def config(hermes_home):
    path = hermes_home / "config.yaml"
    path.write_text(COMMENTED)
    return path


def test_set_unset_enable_and_disable_keep_every_comment(hermes, config):
    assert hermes("config", "set", "agent.max_turns", "40").returncode == 0
    assert hermes("config", "set", "agent.stream", "false").returncode == 0
    assert hermes("plugins", "disable", "memory").returncode == 0
    assert hermes("plugins", "enable", "skills").returncode == 0
    done = hermes("config", "unset", "agent.stream")
    assert done.returncode == 0, done.stderr
    text = config.read_text()
    for comment in ("# my hermes settings", "# enough for most tasks", "# the identity", "# not needed here"):
        assert comment in text, text
    assert "max_turns: 40" in text and '"You are terse."' in text and "stream" not in text
    assert "memory" in text.split("disabled:")[1] and "skills" in text.split("enabled:")[1]
    assert hermes("config", "get", "agent.max_turns").stdout.strip() == "40"


def test_a_config_of_comments_alone_keeps_them_when_a_key_is_set_and_when_the_last_is_unset(hermes, hermes_home):
    """A config.yaml of notes and keys commented out (a copied example) is no YAML document: its comments stay above
    the first key set, and stay when the last key is unset."""
    path = hermes_home / "config.yaml"
    path.write_text("# my notes\n# agent:\n#   max_turns: 90\n\n")
    assert hermes("config", "set", "agent.max_turns", "10").returncode == 0
    assert path.read_text() == "# my notes\n# agent:\n#   max_turns: 90\nagent:\n  max_turns: 10\n"
    assert hermes("config", "get", "agent.max_turns").stdout.strip() == "10"
    assert hermes("config", "unset", "agent.max_turns").returncode == 0
    assert path.read_text() == "# my notes\n# agent:\n#   max_turns: 90\n"


def test_a_symlinked_config_is_written_through_its_link(hermes, hermes_home, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "hermes.yaml").write_text(COMMENTED)
    link = hermes_home / "config.yaml"
    link.symlink_to(dotfiles / "hermes.yaml")
    assert hermes("config", "set", "agent.max_turns", "12").returncode == 0
    assert link.is_symlink() and "max_turns: 12" in (dotfiles / "hermes.yaml").read_text()
    assert "# my hermes settings" in (dotfiles / "hermes.yaml").read_text()


KEYS = {"agent.max_turns": "11", "agent.api_timeout": "120", "agent.stream_idle_timeout": "45",
        "agent.max_tokens": "900", "agent.system_prompt": "be brief", "terminal.timeout": "30",
        "file.max_read_chars": "5000", "sandbox.network": "false"}


def test_keys_set_at_once_from_eight_terminals_are_all_kept(hermes_home, config, cli_env_plain):
    runs = [subprocess.Popen([*hermes_command(), "config", "set", key, value], env=cli_env_plain,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for key, value in KEYS.items()]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    text = config.read_text()
    import yaml

    data = yaml.safe_load(text)
    for key, value in KEYS.items():
        section, name = key.split(".")
        assert str(data[section][name]).lower() == value, (key, text)
    assert "# enough for most tasks" in text


@pytest.fixture
def cli_env_plain(hermes_home):
    import os

    return {**os.environ, "HERMES_HOME": str(hermes_home)}


def test_force_says_which_keys_a_replaced_section_held(hermes, config):
    refused = hermes("config", "set", "agent", "5", "--force")  # agent.* keys are declared: a value is a wrong type
    assert refused.returncode == 1 and "agent: expected a mapping of agent.* keys, got 5 (int)" in refused.stderr
    assert config.read_text() == COMMENTED
    for key, value in (("depth", "3"), ("tone", "dry")):  # below a mapping key (plugins.entries) anything goes
        hermes("config", "set", f"plugins.entries.notes.settings.{key}", value)
    done = hermes("config", "set", "plugins.entries.notes.settings", "5")
    assert done.returncode == 0
    assert "replaced the section plugins.entries.notes.settings and the 2 key(s) it held: depth, tone" in done.stderr


@pytest.mark.parametrize("key,value", [("agent.api_timeout", "inf"), ("agent.stream_idle_timeout", "nan"),
                                       ("agent.retry_max_delay", "inf"), ("agent.retry_base_delay", "-inf"),
                                       ("approvals.mode", "disabled"), ("sandbox.mode", "sometimes")])
def test_no_value_and_values_outside_the_choices_are_refused_at_set_and_in_check(hermes, config, key, value):
    before = config.read_text()
    done = hermes("config", "set", key, value)
    assert done.returncode != 0 and key in done.stderr and "Traceback" not in done.stderr
    assert config.read_text() == before  # nothing written
    section, name = key.split(".")
    yaml_value = {"inf": ".inf", "-inf": "-.inf", "nan": ".nan"}.get(value, value)
    config.write_text(f"{section}:\n  {name}: {yaml_value}\n")
    checked = hermes("config", "check")
    assert checked.returncode == 1 and key in checked.stdout + checked.stderr


def test_yaml_off_is_a_mode_and_a_choice_is_read_without_case(hermes, config):
    config.write_text("sandbox:\n  mode: off\napprovals:\n  mode: off\n")
    assert hermes("config", "check").returncode == 0
    assert "without a sandbox (sandbox.mode: off)" in hermes("sandbox").stdout
    assert hermes("config", "set", "sandbox.mode", "Read-Only").returncode == 0
    assert "mode: read-only" in config.read_text()
    assert hermes("config", "set", "approvals.mode", "off").returncode == 0
    assert 'mode: "off"' in config.read_text()  # quoted: written as the word, read back as the word
