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


def test_a_gateway_that_asks_for_the_clients_certificate_gets_it_from_ssl_client_cert(hermes, hermes_home, tmp_path,
                                                                                       make_wire_server):
    """Mutual TLS (a company's gateway in front of the model): the certificate and its key in two files or one."""
    from tests.pki import make_pki

    pki = make_pki(tmp_path)
    server = make_wire_server(tls=(str(pki["server_cert"]), str(pki["server_key"]), str(pki["ca"])))
    config, env = hermes_home / "config.yaml", {"OPENAI_API_KEY": "sk-test"}
    run = ("run", "--base-url", server.openai_url, "--api-mode", "chat_completions", "-m", "m", "hi")
    config.write_text(f"provider_options:\n  ssl_ca_cert: {pki['ca']}\n")
    refused = hermes(*run, env=env)
    assert refused.returncode == 1 and not server.requests and "retrying" not in refused.stderr
    assert "the server asks for a client certificate (mutual TLS) it accepts: give it with the provider options " \
        "ssl_client_cert and ssl_client_key" in refused.stderr and refused.stderr.count("\n") == 1
    for given in (f"  ssl_client_cert: {pki['client_cert']}\n  ssl_client_key: {pki['client_key']}\n",
                  f"  ssl_client_cert: {pki['client_pem']}\n"):
        config.write_text(f"provider_options:\n  ssl_ca_cert: {pki['ca']}\n{given}")
        server.push(reply("shown"))
        out = hermes(*run, env=env)
        assert out.returncode == 0 and out.stdout == "shown\n", out.stderr
    config.write_text(f"provider_options:\n  ssl_ca_cert: {pki['ca']}\n  ssl_client_cert: {pki['client_cert']}\n")
    keyless = hermes(*run, env=env)  # the key in neither file
    assert keyless.returncode == 1 and keyless.stderr.count("\n") == 1, keyless.stderr
    assert f"the provider option ssl_client_cert: {pki['client_cert']} is not a PEM certificate and its key" \
        in keyless.stderr
    config.write_text(f"provider_options:\n  ssl_client_cert: {tmp_path / 'gone.pem'}\n")
    gone = hermes(*run, env=env)
    assert gone.returncode == 1 and f"the provider option ssl_client_cert: {tmp_path / 'gone.pem'} does not exist" \
        in gone.stderr and gone.stderr.count("\n") == 1
    assert len(server.requests) == 2
