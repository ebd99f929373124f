"""Real MCP servers (tests/mcp/server.py on the `mcp` SDK) for the MCP plugin's tests."""

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import free_port

SERVER = Path(__file__).with_name("server.py")


def entry(mode: str = "normal", *extra, **settings) -> dict:
    """A config.yaml entry for the test server in ``mode``."""
    return {"command": sys.executable, "args": [str(SERVER), mode, *map(str, extra)], **settings}


@pytest.fixture(autouse=True)
def fresh_manager():
    """Each test gets its own servers: the process's manager is shut down after it."""
    import plugins.mcp

    yield
    if plugins.mcp._manager is not None:
        plugins.mcp._manager.shutdown()
        plugins.mcp._manager = None


@pytest.fixture
def mcp_agent(make_agent):
    """``mcp_agent(servers={name: entry}, script=[...], plugins=(), **kwargs)``: an agent with the MCP plugin."""
    import plugins.mcp as mcp_plugin

    def build(servers, script=(), plugins=(), config=None, **kwargs):
        return make_agent(mcp_plugin, *plugins, script=script, config={"mcp_servers": servers, **(config or {})},
                          **kwargs)

    return build


def _serve(flag: str, path: str, *extra, command: list = ()):
    port = free_port()
    process = subprocess.Popen([*(command or [sys.executable, str(SERVER), "normal", flag]), str(port),
                                *map(str, extra)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield f"{'https' if flag == '--https' else 'http'}://127.0.0.1:{port}{path}"
    process.terminate()
    process.wait(10)


@pytest.fixture
def http_server():
    """The test server on streamable HTTP at 127.0.0.1 (a process of its own); its URL."""
    yield from _serve("--http", "/mcp")


@pytest.fixture
def mtls_server(tmp_path):
    """The test server on streamable HTTP over TLS, asking for the client's certificate: (its URL, the certificates
    of :func:`tests.pki.make_pki`)."""
    from tests.pki import make_pki

    pki = make_pki(tmp_path)
    for url in _serve("--https", "/mcp", pki["server_cert"], pki["server_key"], pki["ca"]):
        yield url, pki


@pytest.fixture
def oauth_server(tmp_path):
    """tests/mcp/oauth_server.py: a server behind OAuth; (its URL, the file it notes what it issued in)."""
    issued = tmp_path / "issued.log"
    for url in _serve("", "/mcp", 3600, issued, command=[sys.executable, str(SERVER.with_name("oauth_server.py"))]):
        yield url, issued


@pytest.fixture
def sse_server():
    """The test server on the older SSE transport at 127.0.0.1; its URL."""
    yield from _serve("--sse", "/sse")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1].split()[0] != "Z"
    except OSError:
        return False
