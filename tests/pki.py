"""A certificate authority of a test's own, made with openssl: a server certificate for 127.0.0.1 and a client
certificate, both signed by it (mutual TLS)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def make_pki(folder: Path) -> dict:
    """{"ca", "server_cert", "server_key", "client_cert", "client_key", "client_pem" (certificate and key in one
    file)}: paths in ``folder``."""
    def run(*args) -> None:
        subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, cwd=folder)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
        "-subj", "/CN=hermes test authority")
    for who, subject in (("server", "/CN=127.0.0.1"), ("client", "/CN=hermes test client")):
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{who}.key", "-out", f"{who}.csr", "-subj", subject)
        (folder / f"{who}.ext").write_text("subjectAltName=IP:127.0.0.1\n" if who == "server" else
                                           "extendedKeyUsage=clientAuth\n")
        run("x509", "-req", "-in", f"{who}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1",
            "-out", f"{who}.pem", "-extfile", f"{who}.ext")
    (folder / "client-both.pem").write_text((folder / "client.pem").read_text() + (folder / "client.key").read_text())
    return {"ca": folder / "ca.pem", "server_cert": folder / "server.pem", "server_key": folder / "server.key",
            "client_cert": folder / "client.pem", "client_key": folder / "client.key",
            "client_pem": folder / "client-both.pem"}
