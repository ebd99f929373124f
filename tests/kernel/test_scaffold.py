"""``hermes plugins new NAME``: the package it writes installs with pip, shows in ``hermes plugins info``, and its
own tests pass under pytest, as a plugin author runs them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, pip_from_index


@pytest.mark.network  # pip builds the package with setuptools from the index
def test_a_new_plugin_installs_and_its_tests_pass(hermes, tmp_path):
    out = hermes("plugins", "new", "greet-me", "--dir", tmp_path / "hermes-greet-me", "--description", "Says hi.")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Wrote {tmp_path / 'hermes-greet-me'}/ (pyproject.toml, hermes_greet_me/__init__.py")
    package = tmp_path / "hermes-greet-me"
    target = tmp_path / "site"
    pip_from_index("install", "--no-deps", "--target", str(target), str(package), what="the new plugin's build")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT)])}
    env.pop("HERMES_HOME", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          capture_output=True, text=True, cwd=package, env=env, timeout=300)
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
