"""pytest fixtures for testing hermes plugins against the wire-protocol test server.

Registered through the ``pytest11`` entry point, so installing hermes makes
these fixtures available in any test suite:

* ``wire_server``: a started :class:`plugins_providers.testserver.WireServer`
  (one per test, stopped afterwards). Point an SDK or a hermes provider at
  ``wire_server.openai_url`` (OpenAI chat / responses) or ``wire_server.url``
  (Anthropic), ``push(...)`` the answers, assert on ``wire_server.requests``.
* ``make_wire_server``: a factory for more servers in one test (a primary and
  a fallback provider, say): ``make_wire_server(api_key="k")``.
* ``hermes_cli``: the ``hermes`` program as a subprocess, in a fresh
  ``HERMES_HOME`` (``hermes_cli.home``): ``hermes_cli("run", "--base-url",
  wire_server.openai_url, "--api-mode", "chat_completions", "-m", "test", "hi")``
  returns the ``subprocess.CompletedProcess`` (text ``stdout``/``stderr``).

The SDKs also read ``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL`` and API key
variables from the environment; the fixtures clear the base-URL variables so a
developer's own settings cannot send test traffic elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_ENV_TO_CLEAR = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS")


@pytest.fixture
def make_wire_server(monkeypatch):
    from plugins_providers.testserver import WireServer

    for name in _ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    servers = []

    def make(**kwargs) -> WireServer:
        server = WireServer(**kwargs).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def wire_server(make_wire_server):
    return make_wire_server()


class HermesCLI:
    """``hermes_cli(*args, input=None, env=None, timeout=60, cwd=None)``; ``home`` is its ``HERMES_HOME``."""

    def __init__(self, home: Path):
        self.home = home
        script = Path(sys.executable).parent / "hermes"  # the console script of this environment, as users run it
        self.command = [str(script)] if script.exists() else [sys.executable, "-m", "hermes.cli"]

    def __call__(self, *args, input=None, env=None, timeout: float = 60, cwd=None) -> subprocess.CompletedProcess:
        full_env = {k: v for k, v in os.environ.items() if k not in _ENV_TO_CLEAR}
        full_env.update(HERMES_HOME=str(self.home), **(env or {}))
        return subprocess.run(self.command + [str(a) for a in args], capture_output=True, text=True,
                              env=full_env, input=input, timeout=timeout, cwd=cwd)


@pytest.fixture
def hermes_cli(tmp_path_factory):
    return HermesCLI(tmp_path_factory.mktemp("hermes-home"))
