"""hermes-agent's `hermes security audit`, as a subprocess against a loopback OSV.dev: this environment's packages,
a data-folder plugin's pinned requirements and the MCP servers started with a pinned package are looked up in one
batch, each vulnerability found read for its severity and fixed versions, and the exit says whether one is at least
--fail-on."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.asgiserver import Served

VULNS = {  # (ecosystem, package) -> the advisory OSV.dev has for every version of it here (weather-sdk: in no venv)
    ("PyPI", "pyyaml"): {"id": "GHSA-test-yaml", "summary": "Arbitrary code\nexecution in full_load",
                         "database_specific": {"severity": "HIGH"},
                         "affected": [{"package": {"name": "PyYAML", "ecosystem": "PyPI"},
                                       "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"},
                                                                                   {"fixed": "99.0"}]}]}]},
    ("PyPI", "weather-sdk"): {"id": "PYSEC-test-weather", "summary": "Proxy credentials leaked",
                           "database_specific": {"severity": "MODERATE"}, "affected": []},
    ("npm", "@modelcontextprotocol/server-github"): {
        "id": "GHSA-test-github", "summary": "Token exposed", "database_specific": {"severity": "CRITICAL"},
        "affected": [{"package": {"name": "@modelcontextprotocol/server-github", "ecosystem": "npm"},
                      "ranges": [{"events": [{"introduced": "0"}, {"fixed": "0.6.3"}]}]}]},
}


class OSV(Served):
    def __init__(self):
        self.queries = []
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    def _app(self):
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def batch(request):
            queries = (await request.json())["queries"]
            self.queries += queries
            return JSONResponse({"results": [
                {"vulns": [{"id": VULNS[key]["id"], "modified": "2026-11-01T00:00:00Z"}]}
                if (key := (q["package"]["ecosystem"], q["package"]["name"].lower())) in VULNS else {}
                for q in queries]})

        async def vuln(request):
            found = next(v for v in VULNS.values() if v["id"] == request.path_params["id"])
            return JSONResponse(found)

        return Starlette(routes=[Route("/v1/querybatch", batch, methods=["POST"]), Route("/v1/vulns/{id}", vuln)])


@pytest.fixture
def osv(hermes_home):
    with OSV() as server:
        plugin = hermes_home / "plugins" / "weather"
        plugin.mkdir(parents=True)
        (plugin / "requirements.txt").write_text("weather-sdk==2.0.0  # pinned\nhttpx>=0.27\n")
        (hermes_home / "config.yaml").write_text(yaml.safe_dump({
            "security": {"osv_url": server.url},
            "mcp_servers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github@0.6.2"]},
                            "time": {"command": "uvx", "args": ["mcp-server-time"]},
                            "local": {"command": "python", "args": ["server.py"]}}}))
        yield server


def test_known_vulnerabilities_are_said_most_severe_first_and_fail_the_run_at_the_level_asked(hermes, osv):
    from importlib.metadata import version

    out = hermes("security", "audit")
    assert out.returncode == 1 and out.stderr == (
        "hermes: error: security audit: 1 known vulnerability at least critical (--fail-on)\n"), out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].endswith("packages looked up in OSV.dev: 3 known vulnerabilities")
    assert lines[1:4] == [
        "  CRITICAL  @modelcontextprotocol/server-github 0.6.2 (MCP server github): GHSA-test-github Token exposed; "
        "fixed in 0.6.3",
        f"  HIGH      PyYAML {version('PyYAML')} (this environment): GHSA-test-yaml Arbitrary code execution in "
        "full_load; fixed in 99.0",
        "  MODERATE  weather-sdk 2.0.0 (plugin weather): PYSEC-test-weather Proxy credentials leaked; no fixed version "
        "yet"]
    assert lines[4:] == ["  not looked up: MCP server time (uvx mcp-server-time: no version pinned)"]
    assert {"package": {"name": "PyYAML", "ecosystem": "PyPI"}, "version": version("PyYAML")} in osv.queries
    assert len(osv.queries) == int(lines[0].split()[0])  # one batch, every package
    assert hermes("security", "audit", "--skip-mcp").returncode == 0  # nothing critical left
    high = hermes("security", "audit", "--skip-mcp", "--fail-on", "high", "--json")
    assert high.returncode == 1 and "1 known vulnerability at least high" in high.stderr
    document = json.loads(high.stdout)
    assert [f["id"] for f in document["findings"]] == ["GHSA-test-yaml", "PYSEC-test-weather"]
    assert document["findings"][1] == {"package": "weather-sdk", "version": "2.0.0", "ecosystem": "PyPI",
                                       "where": "plugin weather", "id": "PYSEC-test-weather",
                                       "severity": "moderate", "summary": "Proxy credentials leaked", "fixed": []}
    assert document["not_checked"] == [] and document["fail_on"] == "high"
    alone = hermes("security", "audit", "--skip-venv", "--skip-mcp", "--json")
    assert json.loads(alone.stdout)["checked"] == 1 and alone.returncode == 0


def test_an_osv_that_cannot_be_asked_is_one_line(hermes, hermes_home):
    (hermes_home / "config.yaml").write_text("security:\n  osv_url: http://127.0.0.1:9\n")
    out = hermes("security", "audit")
    assert out.returncode == 1 and out.stderr.startswith("hermes: error: security audit: cannot ask "
                                                         "http://127.0.0.1:9 (") and out.stderr.count("\n") == 1
