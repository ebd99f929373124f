"""The compatibility layer through the hermes command line, as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess

from plugins_providers.testserver import reply
from tests.conftest import ROOT, hermes_command

from .conftest import install_dir_plugin, make_site


def rows(out) -> dict:
    assert out.returncode == 0, out.stderr
    return {r["name"]: r for r in json.loads(out.stdout)}


def env_for(site) -> dict:
    return {"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}


def test_list_enable_disable_and_run(hermes, hermes_home, tmp_path):
    site = make_site(tmp_path / "site")
    install_dir_plugin(hermes_home)
    env = env_for(site)
    listed = rows(hermes("plugins", "list", "--json", env=env))
    assert listed["hermes-compat"]["source"] == "builtin" and listed["hermes-compat"]["status"] == "enabled"
    for name in ("kitchen", "counter", "acme", "notebook", "keep-last", "greeter"):
        assert listed[name]["source"] == "hermes-compat" and listed[name]["status"] == "not enabled", listed[name]
    assert listed["kitchen"]["description"] == "soup and shouting"
    text = hermes("plugins", "list", env=env).stdout
    assert "kitchen" in text and "hermes-compat" in text
    lines = {line.split()[0]: line for line in text.splitlines()}
    # the columns stay aligned although "hermes-compat" is the widest source name
    assert lines["kitchen"].index("soup and shouting") == lines["hermes-compat"].index("hermes-compat: run")

    assert hermes("plugins", "enable", "kitchen", env=env).returncode == 0
    assert hermes("plugins", "enable", "greeter", env=env).returncode == 0
    listed = rows(hermes("plugins", "list", "--json", env=env))
    assert listed["kitchen"]["status"] == "enabled" and listed["greeter"]["status"] == "enabled"
    info = json.loads(hermes("plugins", "info", "kitchen", "--json", env=env).stdout)
    assert info["tools"] == ["shout"] and info["source"] == "hermes-compat"
    assert {"pre_tool_call", "transform_tool_result", "register_tools", "register_commands"} <= set(info["hooks"])

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["shout", {"text": "hey"}], ["greet", {"who": "bo"}]]}, "fine"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "go", env=env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    tools = [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]
    assert tools == [{"transformed": {"shouted": "HEY"}}, {"greeting": "hello, bo"}]
    assert result["final_response"] == "fine [kitchen]"

    assert hermes("plugins", "disable", "kitchen", env=env).returncode == 0
    assert rows(hermes("plugins", "list", "--json", env=env))["kitchen"]["status"] == "disabled"
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "go", env=env)
    tools = [json.loads(m["content"]) for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
    assert "unknown tool 'shout'" in tools[0]["error"]


def test_slash_command_in_chat_and_cli_command(hermes, tmp_path):
    site = make_site(tmp_path / "site")
    env = env_for(site)
    assert hermes("plugins", "enable", "kitchen", env=env).returncode == 0
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["an answer"]))
    out = hermes("chat", "--api-mode", "scripted", "--base-url", script, input="/soup leek\nhello\n/quit\n", env=env)
    assert out.returncode == 0, out.stderr
    assert "soup of leek" in out.stdout and "an answer" in out.stdout
    assert "Traceback" not in out.stderr

    log = tmp_path / "commands.jsonl"
    assert hermes("plugins", "enable", "newest", env=env).returncode == 0
    out = hermes("chat", "--api-mode", "scripted", "--base-url", script, input="/soup pea\n/help\n/quit\n",
                 env={**env, "HXFIX_COMMANDS_LOG": str(log)})
    assert out.returncode == 0, out.stderr
    # hermes-agent 0.22's pre_command, before each command runs (the plugin's own and the chat's)
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {"command": "soup", "args_raw": "pea", "surface": "cli"}, {"command": "help", "args_raw": "", "surface": "cli"}]

    out = hermes("kitchen", "--bowls", "2", "pea", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "serving 2 bowl(s) of pea"
    out = hermes("kitchen", "--bowls", "many", env=env)
    assert out.returncode == 2 and "invalid int value" in out.stderr
    assert "kitchen" in hermes("--help", env=env).stdout
    out = hermes("kitchen-fire", env=env)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "hermes: error: hermes kitchen-fire: plugin kitchen failed while running: RuntimeError: the stove is on fire" \
        in out.stderr


def test_half_registered_plugin_shows_error_after_a_run(hermes, tmp_path):
    site = make_site(tmp_path / "site")
    env = env_for(site)
    assert hermes("plugins", "enable", "halfway", env=env).returncode == 0
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["early_tool", {}]]}, "ok"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "go", env=env)
    assert out.returncode == 0, out.stderr
    tools = [json.loads(m["content"]) for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
    assert tools == [{"early": True}]
    row = rows(hermes("plugins", "list", "--json", env=env))["halfway"]
    assert row["status"] == "error" and "config file missing" in row["error"]


def test_a_manifest_config_schema_becomes_config_declarations(hermes, hermes_home):
    folder = hermes_home / "plugins" / "painter"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("def register(ctx):\n    pass\n")
    (folder / "plugin.yaml").write_text(
        "name: painter\nmanifest_version: 2\nconfig_schema:\n"
        "  colour: {type: string, default: teal, description: the colour to paint with}\n"
        "  coats: {type: integer, default: 2}\n")
    assert hermes("plugins", "enable", "painter").returncode == 0
    got = hermes("config", "get", "plugins.entries.painter.settings.colour")
    assert got.returncode == 0 and got.stdout.strip() == "teal", got.stderr  # the schema's default
    shown = hermes("config", "show")
    assert "plugins.entries.painter.settings.colour" in shown.stdout and "the colour to paint with" in shown.stdout
    (hermes_home / "config.yaml").write_text(
        "plugins:\n  enabled: [painter]\n  entries:\n    painter:\n      settings:\n        coats: lots\n")
    checked = hermes("config", "check")  # a wrong type is a problem it lists (exit 1), not one that stops it
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "plugins.entries.painter.settings.coats" in checked.stdout and "integer" in checked.stdout


def test_hermes_agents_names_of_keys_read_here_under_others_keep_their_meaning(hermes, hermes_home, tmp_path):
    """A config.yaml of hermes-agent's: terminal.env_passthrough (a token the user let tools see), skills.external_dirs
    (a team's skills), file_read_max_chars and tool_output.* were unknown keys here and silently did nothing: the
    token was hidden from the tools, the skills were missing. Each is read as ours is (tools.env_passthrough,
    skills.paths, file.max_read_chars, terminal.max_output_chars, file.max_read_lines, file.max_line_chars) when ours
    is not set."""
    skill = tmp_path / "team-skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship the app.\n---\nRun make deploy.\n")
    (tmp_path / "big.txt").write_text("yyyyyyyyy\n" * 500)
    (tmp_path / "wide.txt").write_text("w" * 500 + "\n" + "short\n" * 9)
    (hermes_home / "config.yaml").write_text(
        f"terminal:\n  env_passthrough: [DEPLOY_TOKEN]\nskills:\n  external_dirs: ['{skill.parent}']\n"
        "file_read_max_chars: 1000\ntool_output:\n  max_bytes: 1000\n  max_lines: 3\n  max_line_length: 100\n")
    assert hermes("config", "check").stdout.startswith("ok")
    assert "deploy" in json.dumps(json.loads(hermes("skills", "list", "--json").stdout))
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps([{"tool_calls": [["terminal", {"command": "test \"$DEPLOY_TOKEN\" = s3cret-value && echo seen"}],
                                                 ["read_file", {"path": str(tmp_path / "big.txt")}],
                                                 ["terminal", {"command": "printf 'z%.0s' $(seq 5000)"}],
                                                 ["read_file", {"path": str(tmp_path / "wide.txt"), "limit": 50}]]},
                                 "done"]))
    out = hermes("run", "--yolo", "--json", "--api-mode", "scripted", "--base-url", steps, "go", cwd=tmp_path,
                 env={"DEPLOY_TOKEN": "s3cret-value"})
    assert out.returncode == 0, out.stderr
    terminal, read, long, wide = (m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool")
    assert json.loads(terminal)["output"] == "seen\n"  # passed through (and masked in what the model reads)
    assert read.count("y") <= 1000 < 4500
    assert json.loads(long)["output"].count("z") <= 1000  # tool_output.max_bytes: terminal.max_output_chars
    assert "|" + "w" * 100 + "... [line cut: 500 characters]" in wide  # tool_output.max_line_length
    assert wide.count("short") == 2 and "lines 1-3 of 10; continue with offset=4" in wide  # tool_output.max_lines


def test_keys_in_the_env_file_beside_config_yaml_are_used_and_the_environment_wins(hermes, hermes_home,
                                                                                   make_wire_server, tmp_path):
    """hermes-agent keeps its API keys in $HERMES_HOME/.env (its setup writes them there): a user who pointed
    HERMES_HOME at it got "no API key" here. The file fills what the environment lacks; tools never see the keys."""
    server = make_wire_server(api_key="sk-from-file")
    env_file = hermes_home / ".env"
    env_file.write_text('# keys\nexport OPENAI_API_KEY="sk-from-file"\nNOTE=plain  # a comment\nnot a line\n')
    env_file.chmod(0o600)
    args = ("run", "--json", "--api-mode", "chat_completions", "--base-url", server.openai_url, "-m", "m", "-t",
            "terminal", "--yolo", "go")
    server.push(reply(tool_calls=[("terminal", {"command": "echo key=[$OPENAI_API_KEY] note=[$NOTE]"})]), reply("ok"))
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}  # the fixture can only add variables
    done = subprocess.run(hermes_command() + [str(a) for a in args], capture_output=True, text=True, cwd=tmp_path,
                          env={**env, "HERMES_HOME": str(hermes_home), "PYTHONPATH": str(ROOT)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == f"hermes: WARNING: {env_file}:4: not KEY=VALUE; skipped"
    tool = json.loads([m for m in json.loads(done.stdout)["messages"] if m["role"] == "tool"][0]["content"])
    assert tool["output"] == "key=[] note=[plain]\n"  # the key is hidden from tools, as any key is
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-file"
    server.push(reply("never"))
    shell = hermes("run", "--api-mode", "chat_completions", "--base-url", server.openai_url, "-m", "m", "hi",
                   env={"OPENAI_API_KEY": "sk-exported"})
    assert shell.returncode == 1 and "auth (401)" in shell.stderr  # the exported key was the one sent


def test_config_set_of_a_key_saves_it_in_the_env_file_as_hermes_agent_does(hermes, hermes_home, make_wire_server):
    """`hermes config set OPENAI_API_KEY sk-...` is hermes-agent's first step; here it was refused ("export it in
    your shell"). It goes to the .env beside config.yaml, readable by the user alone, never to config.yaml."""
    server = make_wire_server(api_key="sk-saved")
    out = hermes("config", "set", "OPENAI_API_KEY", "sk-old")
    assert out.returncode == 0 and out.stdout.startswith(f"saved OPENAI_API_KEY in {hermes_home / '.env'} (")
    assert hermes("config", "set", "OPENAI_API_KEY", "sk-saved").returncode == 0  # its line replaced
    env_file = hermes_home / ".env"
    assert env_file.read_text() == "OPENAI_API_KEY=sk-saved\n" and env_file.stat().st_mode & 0o777 == 0o600
    assert not (hermes_home / "config.yaml").exists() or "sk-" not in (hermes_home / "config.yaml").read_text()
    server.push(reply("keyed"))
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(hermes_command() + ["run", "--api-mode", "chat_completions", "--base-url", server.openai_url,
                                              "-m", "m", "hi"], capture_output=True, text=True, timeout=60,
                          env={**env, "HERMES_HOME": str(hermes_home), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.strip() == "keyed", done.stderr
    refused = hermes("config", "set", "OPENAI_API_KEY", "sk-x", env={"HERMES_PLUGINS": "config-command"})
    assert refused.returncode == 1 and "looks like a secret" in refused.stderr  # nothing would read the file


def test_hermes_agents_toolsets_we_lack_take_in_what_exists_and_an_empty_one_is_said(hermes, hermes_home, tmp_path):
    """A config.yaml of hermes-agent's naming its toolsets (`browser`, `code_execution`, `debugging`, ...) stopped
    every run with "unknown toolset": each takes in those of its tools that exist here; one with none is one
    warning, and the run goes on."""
    (hermes_home / "config.yaml").write_text("toolsets: [debugging, code_execution, spotify]\n")
    assert hermes("config", "check").stdout.startswith("ok")
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps([{"tool_calls": [["read_file", {"path": str(steps)}],
                                                 ["todo", {}]]}, "done"]))
    out = hermes("run", "--json", "--api-mode", "scripted", "--base-url", steps, "go")
    assert out.returncode == 0, out.stderr
    read, missing = (m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool")
    assert read.lstrip().startswith("1|") and "todo" in read  # debugging takes in the file tools
    assert json.loads(missing)["error"].startswith("unknown tool 'todo'")
    assert "execute_code" in json.loads(missing)["error"]  # code_execution is a toolset of core-tools
    assert sorted(out.stderr.strip().splitlines()) == [
        "hermes: WARNING: toolsets: hermes-agent's 'spotify' has none of its tools here (spotify_playback, "
        "spotify_devices, spotify_queue, spotify_search, spotify_playlists, spotify_albums, spotify_library); it adds "
        "nothing"]


def test_hermes_agents_own_keys_are_known_and_only_changed_ones_are_said(hermes, hermes_home, tmp_path):
    """A config.yaml of hermes-agent's (its defaults hold ~590 keys, ~200 read nowhere here) warned of every key on
    every run. Its keys are known now; what is said, once, is the settings the user changed that have no effect
    here (terminal.backend: docker runs nothing in docker here)."""
    from plugins.hermes_compat.agent_keys import DEFAULTS

    script = tmp_path / "script.json"
    script.write_text('["fine"]')
    (hermes_home / "config.yaml").write_text(
        "display:\n  skin: default\n  bell_on_complete: false\n  show_reasoning: true\n"  # at hermes-agent's defaults
        "terminal:\n  backend: docker\n  timeout: 30\n"  # backend changed; timeout is read here
        "agent:\n  max_turns: 12\n  reasoning_effort: high\n"  # written by its `/reasoning high --global`
        "auxiliary:\n  compression:\n    model: small-model\n"  # below a mapping key read here
        "tts:\n  provider: edge\n")
    assert DEFAULTS["terminal.backend"] == "local" and DEFAULTS["display.skin"] == "default"
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "go")
    assert out.returncode == 0 and out.stdout.strip() == "fine", out.stderr
    assert out.stderr.count("\n") == 1 and "unknown key" not in out.stderr
    assert "settings with no effect here: terminal.backend (`" in out.stderr  # reasoning_effort is read here
    assert "display.skin" not in out.stderr
    checked = hermes("config", "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    doctor = hermes("doctor", "--offline")
    [line] = [line for line in doctor.stdout.splitlines() if line.split()[1:2] == ["hermes-agent"]]
    assert line.startswith("warn") and line.endswith(
        "settings of config.yaml with no effect here: terminal.backend")
    (hermes_home / "config.yaml").write_text("terminal:\n  backendd: docker\n")  # a typo is still one
    typo = hermes("config", "check")
    assert typo.returncode == 1 and "unknown key 'terminal.backendd'" in typo.stdout
