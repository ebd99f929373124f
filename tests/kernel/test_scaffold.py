"""``hermes plugins new NAME``: the package it writes installs with pip, shows in ``hermes plugins info``, and its
own tests pass under pytest, as a plugin author runs them."""

from __future__ import annotations

import pytest

from tests.conftest import installed_and_tested


@pytest.mark.network  # pip builds the package with setuptools from the index
def test_a_new_plugin_installs_and_its_tests_pass(hermes, tmp_path):
    out = hermes("plugins", "new", "greet-me", "--dir", tmp_path / "hermes-greet-me", "--description", "Says hi.")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Wrote {tmp_path / 'hermes-greet-me'}/ (pyproject.toml, hermes_greet_me/__init__.py")
    package = tmp_path / "hermes-greet-me"
    done = installed_and_tested(package, tmp_path / "site", "the new plugin's build (setuptools)")
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout + done.stderr


def test_a_name_that_cannot_be_one_or_a_folder_that_is_there_writes_nothing(hermes, tmp_path):
    for name in ("My Tool", "x--y", "Caps", "1st", "a" * 41):
        out = hermes("plugins", "new", name, "--dir", tmp_path / "p")
        assert out.returncode == 2 and "is not a plugin name: lowercase letters and digits" in out.stderr, name
    (tmp_path / "taken").mkdir()
    out = hermes("plugins", "new", "ok", "--dir", tmp_path / "taken")
    assert out.returncode == 1 and out.stderr.strip() == f"hermes: error: {tmp_path / 'taken'} exists already: " \
                                                          "choose another --dir, or remove it"
    assert not (tmp_path / "p").exists() and list((tmp_path / "taken").iterdir()) == []
