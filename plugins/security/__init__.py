"""Built-in plugin security: what is installed, looked up in OSV.dev's known vulnerabilities (``hermes security``).

``hermes security audit`` (hermes-agent's) looks up the Python packages of hermes' own environment (plugins installed
with pip included), the pinned requirements of the plugins in the data folder, and the MCP servers config.yaml starts
with a pinned package (``npx pkg@1.2.3``, ``uvx pkg==1.2.3``)."""

from __future__ import annotations

from kernel import hookimpl

OSV = "https://api.osv.dev"


@hookimpl
def register_config(declare):
    declare("security.osv_url", str, OSV, "the OSV.dev API `hermes security audit` asks (a mirror, a test's)")


@hookimpl
def register_commands(cli):
    from plugins.security.cli import security

    cli.add_command(security)
