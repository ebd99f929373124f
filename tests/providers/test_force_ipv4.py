"""network.force_ipv4 (hermes-agent's): the real openai SDK's connection looks its host up for IPv4 addresses only;
without it, for any kind. A ``sitecustomize`` notes each lookup's host and address family."""

from __future__ import annotations

import os

from plugins_providers.testserver import reply
from tests.conftest import ROOT
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

NOTE_LOOKUPS = """
import os, socket
lookup = socket.getaddrinfo
def noting(host, port, family=0, *args, **kwargs):
    with open(os.environ["HERMES_TEST_LOOKUPS"], "a") as notes:
        notes.write(f"{host} {int(family)}\\n")
    return lookup(host, port, family, *args, **kwargs)
socket.getaddrinfo = noting
"""


def test_force_ipv4_looks_the_providers_host_up_for_ipv4(hermes, hermes_home, wire_server, cli_env, tmp_path):  # noqa: F811
    site, notes = tmp_path / "site", tmp_path / "lookups.txt"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NOTE_LOOKUPS)
    env = {**cli_env, "OPENAI_API_KEY": "sk-test", "HERMES_TEST_LOOKUPS": str(notes),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(site), str(ROOT), cli_env.get("PYTHONPATH")]))}
    url = wire_server.openai_url.replace("127.0.0.1", "localhost")
    families = {}
    for force in (False, True):
        (hermes_home / "config.yaml").write_text(f"network:\n  force_ipv4: {str(force).lower()}\n")
        wire_server.push(reply(f"answer {force}"))
        notes.write_text("")
        out = hermes("run", "--base-url", url, "--api-mode", "chat_completions", "-m", "gpt-test", "hi", env=env)
        assert out.returncode == 0 and out.stdout.strip() == f"answer {force}", out.stderr
        families[force] = {line.split()[1] for line in notes.read_text().splitlines() if line.startswith("localhost")}
    import socket

    assert families == {False: {str(int(socket.AF_UNSPEC))}, True: {str(int(socket.AF_INET))}}
