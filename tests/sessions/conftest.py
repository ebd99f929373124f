"""Fixtures for the session store tests (HERMES_HOME is isolated by the
top-level conftest's autouse ``hermes_home`` fixture; ``home`` and ``hermes_sessions`` are there too)."""

from __future__ import annotations

import pytest


@pytest.fixture
def store(home):
    from plugins.sessions.store import SessionStore

    s = SessionStore.for_data_dir(home)
    yield s
    s.close()
