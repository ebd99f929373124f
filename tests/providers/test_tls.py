"""An endpoint over HTTPS with a certificate of its own authority (a company's, a self-signed local server):
`ssl_ca_cert` names the authority, `ssl_verify: false` checks nothing (hermes-agent's keys, in provider_options and
in its endpoints of config.yaml). `hermes run` as a subprocess through the real SDKs, the wire-protocol server
serving TLS with a certificate openssl made."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from plugins_providers.testserver import reply

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed (the test setup "
                                                                         "script)")


@pytest.fixture
def https_server(tmp_path, make_wire_server):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days",
                    "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], check=True,
                   capture_output=True)
    return make_wire_server(tls=(str(cert), str(key))), cert


def test_an_endpoint_of_its_own_authority_is_reached_with_ssl_ca_cert_or_ssl_verify_false(hermes, hermes_home,
                                                                                          https_server):
    server, cert = https_server
    config = hermes_home / "config.yaml"
    run = ("run", "--base-url", server.openai_url, "--api-mode", "chat_completions", "-m", "m", "hi")
    env = {"OPENAI_API_KEY": "sk-test"}
    refused = hermes(*run, env=env)
    assert refused.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in refused.stderr and not server.requests
    assert "retrying" not in refused.stderr and "name that with the provider option ssl_ca_cert" in refused.stderr
    config.write_text(f"provider_options:\n  ssl_ca_cert: {cert}\n")
    server.push(reply("checked"))
    out = hermes(*run, env=env)
    assert out.returncode == 0 and out.stdout == "checked\n", out.stderr
    assert "not checked" not in out.stderr
    config.write_text("provider_options:\n  ssl_verify: false\n")
    server.push(reply("unchecked"))
    out = hermes(*run, env=env)
    assert out.returncode == 0 and out.stdout == "unchecked\n", out.stderr
    assert f"{server.openai_url}: the server's certificate is not checked (ssl_verify: false)" in out.stderr
    config.write_text(f"provider_options:\n  ssl_ca_cert: {cert}.gone\n")
    out = hermes(*run, env=env)
    assert out.returncode == 1 and f"the certificate authority file {cert}.gone (ssl_ca_cert or ssl_verify) does " \
                                   "not exist" in out.stderr
    assert len(server.requests) == 2


def test_hermes_agents_endpoint_with_its_authority(hermes, hermes_home, https_server):
    server, cert = https_server
    (hermes_home / "config.yaml").write_text(
        f"model: {{default: claude-x, provider: box}}\nproviders:\n  box:\n    api: {server.url}\n"
        f"    api_mode: anthropic_messages\n    key_env: BOX_KEY\n    ssl_verify: {cert}\n")
    server.push(reply("over TLS"))
    out = hermes("run", "hi", env={"BOX_KEY": "sk-box"})
    assert out.returncode == 0 and out.stdout == "over TLS\n", out.stderr
    assert server.requests[0].path == "/v1/messages"
