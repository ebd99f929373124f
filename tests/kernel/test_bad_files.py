"""Selections and files that say what is wrong (issue 22, item 2), through the
CLI: a typo in HERMES_PLUGINS, a distro file that is not UTF-8, and a damaged
plugin-state.json, which is ignored with a note and made again."""

from __future__ import annotations

import json

import pytest


def test_a_typo_in_hermes_plugins_is_named_with_what_was_meant(hermes):
    done = hermes("plugins", "list", env={"HERMES_PLUGINS": "core-tols,approval"})
    assert done.returncode == 0
    assert "HERMES_PLUGINS names plugin 'core-tols', which is not found (did you mean 'core-tools'" in done.stderr
    assert done.stderr.count("core-tols") == 1 and "Traceback" not in done.stderr
    assert "HERMES_PLUGINS" not in hermes("plugins", "list", env={"HERMES_PLUGINS": "core-tools"}).stderr


def test_a_typo_in_config_yamls_plugin_lists_is_named_as_hermes_plugins_ones_are(hermes, hermes_home):
    """`plugins: {disabled: [approvall]}` disabled nothing and nobody said so: the approval plugin stayed on. The
    names config.yaml gives are checked as HERMES_PLUGINS' and a distro's are, once a command, with a did-you-mean."""
    config = hermes_home / "config.yaml"
    config.write_text("plugins:\n  disabled: [approvall]\n  enabled: [batch]\n")
    done = hermes("run", "--api-mode", "scripted", "--base-url", "x.json", "--no-save", "hi")
    assert f"hermes: WARNING: {config}: plugins.disabled names plugin 'approvall', which is not found " \
           "(did you mean 'approval'?)" in done.stderr.splitlines(), done.stderr
    assert done.stderr.count("approvall") == 1 and "batch" not in done.stderr
    listed = hermes("plugins", "list")
    assert [line.split()[1] for line in listed.stdout.splitlines() if line.startswith("approval ")] == ["enabled"]


def test_a_distro_file_that_is_not_utf8_is_one_line(hermes, tmp_path):
    distro = tmp_path / "latin.yaml"
    distro.write_bytes("name: caf\xe9\nplugins:\n  only: [core-tools]\n".encode("latin-1"))
    done = hermes("--distro", str(distro), "plugins", "list")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"hermes: error: {distro}: cannot read distro: 'utf-8' codec can't decode")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("damage", [
    {"plugins": {"core-tools": {"hooks": 5}}},
    {"plugins": {"core-tools": "enabled"}},
    {"plugins": {}, "failures": ["x"]},
    {"plugins": {}, "listing": {"stamp": [], "records": "all"}},
    [1, 2, 3],
    "not json at all {",
], ids=["hooks", "record", "failures", "listing", "list", "text"])
def test_a_damaged_plugin_state_is_ignored_with_a_note_and_made_again(hermes, hermes_home, damage):
    assert hermes("plugins", "list").returncode == 0
    state = hermes_home / "plugin-state.json"
    state.write_text(damage if isinstance(damage, str) else json.dumps(damage))
    first = hermes("plugins", "list")
    assert first.returncode == 0 and "plugin-state.json is damaged; it is ignored and made again" in first.stderr
    for args in (("plugins", "list", "--json"), ("plugins", "info", "core-tools")):
        state.write_text(damage if isinstance(damage, str) else json.dumps(damage))
        done = hermes(*args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert isinstance(json.loads(state.read_text())["plugins"]["core-tools"], dict)  # made again, whole
    assert "damaged" not in hermes("plugins", "list").stderr


def test_hermes_home_that_is_a_file_is_not_called_a_damaged_state(hermes, tmp_path):
    """HERMES_HOME pointing at a file: every command said "plugin-state.json is damaged", which it was not; the
    commands that need the folder name the path they cannot use, the others work."""
    home = tmp_path / "home-file"
    home.write_text("not a folder\n")
    listed = hermes("plugins", "list", env={"HERMES_HOME": str(home)})
    assert listed.returncode == 0 and "damaged" not in listed.stderr and "core-tools" in listed.stdout, listed.stderr
    ran = hermes("run", "--api-mode", "scripted", "--base-url", "x.json", "hi", env={"HERMES_HOME": str(home)})
    assert ran.returncode == 1 and "damaged" not in ran.stderr and f"{home}/state.db" in ran.stderr, ran.stderr
    assert "Not a directory" in ran.stderr and len(ran.stderr.strip().splitlines()) == 1
