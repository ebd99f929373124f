"""Fixtures for the session store tests (HERMES_HOME is isolated by the
top-level conftest's autouse ``hermes_home`` fixture)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(hermes_home):
    """The test's HERMES_HOME; stores opened through the plugin are closed afterwards."""
    yield hermes_home
    from plugins.sessions import close_stores

    close_stores()


@pytest.fixture
def store(home):
    from plugins.sessions.store import SessionStore

    s = SessionStore.for_data_dir(home)
    yield s
    s.close()


@pytest.fixture
def child_env(home):
    """Environment for a child Python that imports this worktree."""
    env = dict(os.environ)
    env["HERMES_HOME"] = str(home)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env
