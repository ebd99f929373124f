"""scripts/walkthrough.py: a new user's first hour from a fresh clone in a new
venv, following README.md, CONTRIBUTING.md and docs/plugins.md literally; each
step must pass (it clones the last commit)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.network  # pip installs hermes, two plugins and pytest into the new venv
def test_the_first_hour_walkthrough_passes_step_by_step():
    env = {**os.environ, "PIP_RETRIES": "0", "PIP_TIMEOUT": "20"}  # an unreachable index fails at once
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "walkthrough.py")], capture_output=True, text=True,
                          timeout=900, env=env)
    if done.returncode != 0 and "ERROR: " in done.stderr and ("pip install" in done.stderr):
        error = [line for line in done.stderr.splitlines() if line.startswith("ERROR: ")][-1]
        pytest.fail(f"the walkthrough needs the package index and pip failed: {error}", pytrace=False)
    assert done.returncode == 0, done.stdout + done.stderr
    steps = [line for line in done.stdout.splitlines() if line.startswith("walkthrough: step ")]
    assert len(steps) == 8 and "walkthrough: all 8 steps passed" in done.stdout
