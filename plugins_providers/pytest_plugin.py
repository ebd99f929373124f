"""pytest fixtures for testing hermes plugins against the wire-protocol test server.

Registered through the ``pytest11`` entry point, so installing hermes makes
these fixtures available in any test suite:

* ``wire_server``: a started :class:`plugins_providers.testserver.WireServer`
  (one per test, stopped afterwards). Point an SDK or a hermes provider at
  ``wire_server.openai_url`` (OpenAI chat / responses) or ``wire_server.url``
  (Anthropic), ``push(...)`` the answers, assert on ``wire_server.requests``.
* ``make_wire_server``: a factory for more servers in one test (a primary and
  a fallback provider, say): ``make_wire_server(api_key="k")``.

The SDKs also read ``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL`` and API key
variables from the environment; the fixtures clear the base-URL variables so a
developer's own settings cannot send test traffic elsewhere.
"""

from __future__ import annotations

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
