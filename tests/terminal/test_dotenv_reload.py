"""hermes-agent's /reload: a key fixed in the .env beside config.yaml reaches the running chat (the next call goes
with it); one the file has no more goes; a variable exported in the shell still wins (SHELL_SET is not among those
said changed)."""

from __future__ import annotations

import os

from plugins_providers.testserver import reply


def test_a_key_fixed_in_env_reaches_the_running_chat(terminal, hermes_home, make_wire_server):
    server = make_wire_server(api_key="sk-right-0123456789")
    (hermes_home / ".env").write_text("OPENAI_API_KEY=sk-wrong-0123456789\nSHELL_SET=from-file\nOLD_TOKEN=x\n")
    (hermes_home / ".env").chmod(0o600)
    chat, _ = terminal([], "--api-mode", "chat_completions", "--base-url", server.openai_url, "-m", "gpt-test",
                       env={"SHELL_SET": "from-shell"})
    chat.expect("hermes> ")
    chat.line("hi")
    chat.expect("error: ")  # the wrong key: refused
    chat.expect("hermes> ")
    chat.line("/reload")
    chat.expect("nothing new")
    (hermes_home / ".env").write_text("OPENAI_API_KEY=sk-right-0123456789\nSHELL_SET=changed\nNEW_TOKEN=abc\n")
    chat.line("/reload")
    chat.expect("read again: NEW_TOKEN added; OPENAI_API_KEY changed; OLD_TOKEN removed (the next model call uses "
                "them)")
    server.push(reply("with the right key"))  # a refused request takes a step too
    chat.line("again")
    chat.expect("with the right key")
    chat.line("/exit")
    assert chat.close() == 0
    assert [r.headers["authorization"] for r in server.requests][-1] == "Bearer sk-right-0123456789"


def test_reload_sets_changes_and_unsets_only_what_the_file_set(tmp_path, monkeypatch):
    from plugins.hermes_compat import dotenv

    monkeypatch.setattr(dotenv, "_loaded", {})
    for name in ("HERMES_T_KEEP", "HERMES_T_GONE", "HERMES_T_SHELL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HERMES_T_SHELL", "shell")
    env = tmp_path / ".env"
    env.write_text("HERMES_T_KEEP=1\nHERMES_T_GONE=2\nHERMES_T_SHELL=file\n")
    env.chmod(0o600)
    assert dotenv.reload(tmp_path) == (["HERMES_T_KEEP", "HERMES_T_GONE"], [], [])
    env.write_text("HERMES_T_KEEP=3\n")
    assert dotenv.reload(tmp_path) == ([], ["HERMES_T_KEEP"], ["HERMES_T_GONE"])
    assert os.environ["HERMES_T_KEEP"] == "3" and "HERMES_T_GONE" not in os.environ
    assert os.environ["HERMES_T_SHELL"] == "shell"  # the shell's: never the file's to change or remove
