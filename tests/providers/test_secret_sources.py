"""Keys from a password manager as hermes starts (the secret-sources plugin). The 1Password and Bitwarden CLIs need
an account, so each is played here by a small program that answers as the real one does (a value on stdout, an
error on stderr with exit status 1); everything of hermes' is real: `hermes run` against the wire-protocol server
with the openai SDK, the cache file, `hermes doctor`."""

from __future__ import annotations

import stat
import sys

import yaml

from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

FAKE_OP = f"""#!{sys.executable}
import os, sys
with open(os.path.join(os.path.dirname(sys.argv[0]), "op.log"), "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
if any(name.endswith("_API_KEY") for name in os.environ):  # the keys hermes holds are none of its business
    sys.exit("[ERROR] given keys: " + ", ".join(n for n in os.environ if n.endswith("_API_KEY")))
if os.environ.get("OP_SERVICE_ACCOUNT_TOKEN") != "ops_test":
    sys.exit("[ERROR] 2026/12/06 12:00:00 you are not currently signed in")
vault = {{"op://Private/OpenAI/credential": "sk-from-1password"}}
if sys.argv[-1] not in vault:
    sys.exit(f"[ERROR] \\x1b[31m\\"{{sys.argv[-1]}}\\" isn't an item in any vault\\x1b[0m")
sys.stdout.write(vault[sys.argv[-1]])
"""
FAKE_BWS = f"""#!{sys.executable}
import json, os, sys
assert sys.argv[1:] == ["secret", "list", "proj-1", "--output", "json"] and os.environ["BWS_ACCESS_TOKEN"] == "bws_t"
assert "DEEPSEEK_API_KEY" not in os.environ and "OP_SERVICE_ACCOUNT_TOKEN" not in os.environ
print(json.dumps([{{"key": "OPENAI_API_KEY", "value": "sk-from-bitwarden"}},
                  {{"key": "DEEPSEEK_API_KEY", "value": "sk-deepseek"}}, {{"key": "not a name", "value": "x"}}]))
"""


def program(folder, name, text):
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_key_from_1password_is_used_kept_for_the_next_command_and_a_bad_reference_falls_back(
        hermes, hermes_home, wire_server, cli_env, tmp_path):  # noqa: F811
    op = program(tmp_path / "bin", "op", FAKE_OP)
    log = tmp_path / "bin" / "op.log"
    (hermes_home / ".env").write_text("OP_SERVICE_ACCOUNT_TOKEN=ops_test\nOPENAI_API_KEY=sk-stale-in-dotenv\n")
    (hermes_home / ".env").chmod(0o600)
    config = {"secrets": {"onepassword": {"enabled": True, "binary_path": str(op),
                                          "env": {"OPENAI_API_KEY": "op://Private/OpenAI/credential"}}}}
    (hermes_home / "config.yaml").write_text(yaml.safe_dump(config))
    wire_server.script([reply("one"), reply("two"), reply("three")])
    env = cli_env
    for _ in range(2):
        out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "m", "hi",
                     env=env)
        assert out.returncode == 0, out.stderr
    assert [r.headers["authorization"] for r in wire_server.requests] == ["Bearer sk-from-1password"] * 2
    assert log.read_text() == "read --no-newline -- op://Private/OpenAI/credential\n"  # the second run: the cache
    kept = hermes_home / "cache" / "secrets-onepassword.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and "sk-from-1password" in kept.read_text()

    config["secrets"]["onepassword"]["env"]["OPENAI_API_KEY"] = "op://Private/Nope/credential"  # not kept: asked
    (hermes_home / "config.yaml").write_text(yaml.safe_dump(config))
    out = hermes("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "m", "hi",
                 env=env)
    assert out.returncode == 0, out.stderr
    assert wire_server.requests[-1].headers["authorization"] == "Bearer sk-stale-in-dotenv"  # what .env had
    assert 'secrets.onepassword: op read op://Private/Nope/credential failed: [ERROR] "op://Private/Nope/credential"' \
           " isn't an item in any vault; going on with the keys the environment and .env have" in out.stderr


def test_bitwarden_fills_what_1password_left_and_doctor_says_what_each_gave(hermes, hermes_home, tmp_path):
    bin_ = tmp_path / "bin"
    program(bin_, "bws", FAKE_BWS)
    op = program(bin_, "op", FAKE_OP)
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"secrets": {
        "onepassword": {"enabled": True, "binary_path": str(op), "cache_ttl_seconds": 0,
                        "env": {"OPENAI_API_KEY": "op://Private/OpenAI/credential"}},
        "bitwarden": {"enabled": True, "project_id": "proj-1", "override_existing": False, "cache_ttl_seconds": 0}}}))
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "OP_SERVICE_ACCOUNT_TOKEN": "ops_test", "BWS_ACCESS_TOKEN": "bws_t",
           "DEEPSEEK_API_KEY": "sk-mine"}
    out = hermes("doctor", "--offline", env=env)
    lines = [line for line in out.stdout.splitlines() if "secrets." in line]
    assert any("secrets.onepassword: 1 variables set (OPENAI_API_KEY)" in line for line in lines), out.stdout
    assert any("secrets.bitwarden: 0 variables set (none), 1 left as the environment had them (DEEPSEEK_API_KEY)"
               in line for line in lines), out.stdout  # OPENAI_API_KEY is 1Password's, DEEPSEEK_API_KEY the shell's
    assert "keys that are no variable names were left out: not a name" in out.stderr
    assert not (hermes_home / "cache").exists()  # cache_ttl_seconds: 0 keeps nothing on disk
