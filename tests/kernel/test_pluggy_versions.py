"""The hook tests under the oldest and the newest pluggy that pyproject.toml
allows (pluggy 1.7 passes defaulted parameters by keyword, 1.6 leaves their
defaults): each pluggy is pip-installed into a folder put first on
PYTHONPATH, and the in-process isolation and plugin tests run there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import ROOT, pip_from_index


def _requirement() -> str:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return next(d for d in deps if re.match(r"pluggy\b", d)).split(";")[0].strip()


def _bounds() -> dict:
    requirement = _requirement()
    floor = re.search(r">=\s*([0-9.]+)", requirement).group(1)
    return {"oldest": f"pluggy=={floor}", "newest": requirement.replace(" ", "")}


@pytest.mark.network
@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_hook_tests_pass_under_pluggy(which, tmp_path):
    target = tmp_path / "pluggy"
    pip_from_index("install", "--no-deps", "--target", str(target), _bounds()[which], what=f"the {which} pluggy")
    version = next(p.name for p in target.iterdir() if p.name.startswith("pluggy-")).removesuffix(".dist-info").split("-")[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(target), str(ROOT)]))
    out = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider",
                          "tests/kernel/test_isolation.py", "tests/kernel/test_plugins.py", "tests/kernel/test_tools.py"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert f"pluggy-{version}" in out.stdout, out.stdout[-2000:]  # the header names the pluggy it ran on
    assert out.returncode == 0, out.stdout[-4000:]
    assert re.search(r"\d+ passed", out.stdout)
