"""Fixtures for the session store tests: a fresh HERMES_HOME per test."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@pytest.fixture
def home(tmp_path, monkeypatch):
    """HERMES_HOME in a temp folder; open stores are closed afterwards."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(path))
    yield path
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
