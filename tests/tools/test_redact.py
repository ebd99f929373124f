"""The redact plugin: credentials in tools' results are hidden before the provider, the store and the display see
them (hermes-agent's security.redact_secrets), and a marker the model copies is never written in a secret's place."""

from __future__ import annotations

import json
import subprocess

import pytest

from plugins import core_tools, redact
from plugins.redact import redact_text
from plugins_providers.testserver import reply
from tests.providers.test_cli_e2e import cli_env  # noqa: F401  (fixture)

GITHUB = "ghp_" + "Q7r2LmX9vB4nK8sT1wY6zA3cE5gH0jU2pD4f"  # made up, in GitHub's shape
OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1"
PRIVATE = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\nAAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1\n" \
          "-----END OPENSSH PRIVATE KEY-----\n"
DOTENV = f"DEBUG=true\nDB_PASSWORD=hunter2-horse-battery\nGITHUB_TOKEN={GITHUB}\nAPI_KEY='two words'\n"
SECRETS = ("hunter2-horse-battery", GITHUB, "two words", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "s3cr3t-pass")


@pytest.mark.parametrize("text, store, expected", [
    (f"token {GITHUB} here", False, "token ⟦redacted GitHub token⟧ here"),
    (f"OPENAI_API_KEY={OPENAI}", False, "OPENAI_API_KEY=⟦redacted API key⟧"),
    ("AKIAIOSFODNN7EXAMPLE", False, "⟦redacted AWS access key⟧"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlF", False, "⟦redacted JWT⟧"),
    ("curl -H 'Authorization: Bearer abcdefghijkl123' x", False, "curl -H 'Authorization: Bearer ⟦redacted credential⟧' x"),
    ('{"x-api-key": "abcdefgh12345"}', False, '{"x-api-key": "⟦redacted credential⟧"}'),
    ("origin\thttps://me:s3cr3t-pass@github.com/a/b.git (fetch)", False,
     "origin\thttps://me:⟦redacted password⟧@github.com/a/b.git (fetch)"),
    ("https://abcdefghijklmnopqrstuvwx@github.com/a/b", False, "https://⟦redacted token⟧@github.com/a/b"),
    (PRIVATE + "after", False, "⟦redacted private key⟧\nafter"),
    # a key file read in part: its base64 lines go, the reader's footer stays
    ("     1|-----BEGIN RSA PRIVATE KEY-----\n     2|MIIEowIBAAKCAQEA\n[id_rsa: lines 1-2; more follow]", False,
     "     1|⟦redacted private key⟧\n[id_rsa: lines 1-2; more follow]"),
    (DOTENV, True, "DEBUG=true\nDB_PASSWORD=⟦redacted secret⟧\nGITHUB_TOKEN=⟦redacted GitHub token⟧\n"
                   "API_KEY='⟦redacted secret⟧'\n"),
    ('     3|password: hunter2\n     4|"auth": "dXNlcjpwYXNz"', True,
     '     3|password: ⟦redacted secret⟧\n     4|"auth": "⟦redacted secret⟧"'),
    # left as they are: code, references, paths, words that only look like it
    ("MAX_TOKENS=100\napi_key = os.environ['KEY']\nsk-learn, task-" + "a" * 30, False,
     "MAX_TOKENS=100\napi_key = os.environ['KEY']\nsk-learn, task-" + "a" * 30),
    ("Authorization: Bearer $TOKEN; postgresql://{user}:{password}@{host}/db; git@github.com:a/b", False,
     "Authorization: Bearer $TOKEN; postgresql://{user}:{password}@{host}/db; git@github.com:a/b"),
    ("SSH_AUTH_SOCK=/run/user/1/agent\nAUTHOR=me\nTOKEN_LIMIT=4096\nSECRET=${VAULT}", True,
     "SSH_AUTH_SOCK=/run/user/1/agent\nAUTHOR=me\nTOKEN_LIMIT=4096\nSECRET=${VAULT}"),
])
def test_what_is_redacted_and_what_is_left(text, store, expected):
    assert redact_text(text, store) == expected


def test_credentials_in_tools_results_reach_neither_the_provider_nor_the_data_folder(
        hermes, hermes_home, wire_server, cli_env, tmp_path):  # noqa: F811
    """Through `hermes run` and the real openai SDK: a .env printed by a command, a private key read and a git
    remote's password printed. The model reads markers; no file in the data folder (store, logs) holds a secret. With
    security.redact_secrets off, the command's output goes as it is."""
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(DOTENV)
    (project / "deploy_key").write_text(PRIVATE)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "remote", "add", "origin", "https://me:s3cr3t-pass@example.com/x.git"], cwd=project, check=True)
    calls = [("terminal", {"command": "cat .env"}), ("read_file", {"path": "deploy_key"}),
             ("terminal", {"command": "git remote -v"})]
    wire_server.script([reply(tool_calls=calls), reply("done")])
    run = ("run", "--base-url", wire_server.openai_url, "--api-mode", "chat_completions", "-m", "t", "look")
    out = hermes(*run, env=cli_env, cwd=project)
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr
    read = [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] == "tool"]
    env_out, key_out, remote_out = json.loads(read[0])["output"], read[1], json.loads(read[2])["output"]
    assert env_out == ("DEBUG=true\nDB_PASSWORD=⟦redacted secret⟧\nGITHUB_TOKEN=⟦redacted GitHub token⟧\n"
                       "API_KEY='⟦redacted secret⟧'\n")
    assert key_out.startswith("     1|⟦redacted private key⟧")
    assert remote_out.splitlines()[0] == "origin\thttps://me:⟦redacted password⟧@example.com/x.git (fetch)"
    kept = b"".join(p.read_bytes() for p in hermes_home.rglob("*") if p.is_file())
    assert b"redacted secret" in kept and not [s for s in SECRETS if s.encode() in kept]

    (hermes_home / "config.yaml").write_text("security:\n  redact_secrets: false\n")
    wire_server.reset()
    wire_server.script([reply(tool_calls=calls[:1]), reply("done")])
    assert hermes(*run, env=cli_env, cwd=project).returncode == 0
    [raw] = [m["content"] for m in wire_server.requests[1].body["messages"] if m["role"] == "tool"]
    assert json.loads(raw)["output"] == DOTENV


def test_an_environment_dump_hides_what_its_names_call_secret(make_agent, tmp_path):
    """A variable the command set itself is no key hermes knows: the dump's NAME=value pass hides it."""
    agent = make_agent(redact, core_tools, script=[
        {"tool_calls": [("terminal", {"command": "export MY_SERVICE_TOKEN=opaque-value-123 PLAIN=visible; env"})]},
        "ok"])
    result = agent.run_conversation("go")
    [output] = [json.loads(m["content"])["output"] for m in result["messages"] if m["role"] == "tool"]
    assert "MY_SERVICE_TOKEN=⟦redacted secret⟧" in output and "PLAIN=visible" in output
    assert "opaque-value-123" not in output


def test_a_marker_is_never_written_in_the_place_of_the_secret(make_agent, tmp_path):
    """The model reads the file with a marker and writes it back whole, then patches with the kernel's marker, then
    runs a command with one: each is blocked with the reason, and the file keeps its secret. A patch around the line
    goes through."""
    config = tmp_path / "app.env"
    config.write_text(f"NAME=app\nGITHUB_TOKEN={GITHUB}\n")
    agent = make_agent(redact, core_tools, script=[
        {"tool_calls": [("read_file", {"path": str(config)})]},
        {"tool_calls": [
            ("write_file", {"path": str(config), "content": "NAME=app2\nGITHUB_TOKEN=⟦redacted GitHub token⟧\n"}),
            ("patch", {"path": str(config), "old_string": "NAME=app",
                       "new_string": "NAME=[hermes: the value of $KEY was masked]"}),
            ("terminal", {"command": f"sed -i 's/{GITHUB[:8]}.*/⟦redacted GitHub token⟧/' {config}"})]},
        {"tool_calls": [("patch", {"path": str(config), "old_string": "NAME=app", "new_string": "NAME=app2"})]},
        "done"])
    result = agent.run_conversation("rename the app")
    read, wrote, patched, ran, patched_around = [m["content"] for m in result["messages"] if m["role"] == "tool"]
    assert "GITHUB_TOKEN=⟦redacted GitHub token⟧" in read and GITHUB not in read
    for blocked, marker in ((wrote, "⟦redacted ...⟧"), (patched, "[hermes: the value of $...]"), (ran, "⟦redacted ...⟧")):
        assert f"not run: the arguments hold {marker}, which hermes put in place of a secret" in blocked
    assert json.loads(patched_around)["replacements"] == 1
    assert config.read_text() == f"NAME=app2\nGITHUB_TOKEN={GITHUB}\n"
