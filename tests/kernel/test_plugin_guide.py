"""docs/plugins.md's second plugin, built from the page's code blocks: it
installs with pip, and the page's own tests (in-process, through the OpenAI SDK
against the wire server, and ``hermes`` as a subprocess through the
``hermes_cli`` fixture) pass under pytest as a plugin author runs them."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.conftest import ROOT, installed_and_tested

PAGE = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")


def _block(first_line: str) -> str:
    for match in re.finditer(r"```(?:python|toml)\n(.*?)```", PAGE, re.S):
        if match.group(1).startswith(first_line):
            return match.group(1)
    raise AssertionError(f"no snippet starting with {first_line!r} in docs/plugins.md")


@pytest.mark.network  # pip builds the package with setuptools from the index
def test_the_guides_plugin_installs_and_its_tests_pass(tmp_path):
    package = tmp_path / "notes"
    (package / "hermes_notes").mkdir(parents=True)
    (package / "tests").mkdir()
    (package / "hermes_notes" / "__init__.py").write_text(_block("# hermes_notes/__init__.py"))
    (package / "pyproject.toml").write_text(_block("# pyproject.toml"))
    (package / "tests" / "test_notes.py").write_text(_block("# tests/test_notes.py"))
    # hermes itself is not on the package index: a plugin that depends on it could not be installed
    assert not tomllib.loads(_block("# pyproject.toml"))["project"].get("dependencies")
    done = installed_and_tested(package, tmp_path / "site", "the guide's plugin build (setuptools)")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout
