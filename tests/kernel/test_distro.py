import json

import pytest

from hermes.host.config import Config
from hermes.host.distro import DistroError, from_mapping, load_distro
from hermes.host.plugins import PluginHost


def write(tmp_path, text, name="distro.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


DISTRO = """
name: tiny
description: scripted provider only, no echo tool
plugins:
  only: [scripted-provider]
tools:
  blocked: [word_count]
config:
  model: distro-model
  agent:
    max_turns: 7
"""


def test_distro_file_limits_plugins_and_sets_defaults(hermes, tmp_path):
    d = write(tmp_path, DISTRO)
    rows = {r["name"]: r for r in json.loads(hermes("--distro", d, "plugins", "list", "--json").stdout)}
    enabled = sorted(n for n, r in rows.items() if r["status"] == "enabled")
    assert enabled == ["commands", "config-command", "scripted-provider"]  # the essential built-ins always load
    for name, row in rows.items():
        if name not in enabled:
            assert row["reason"] == "not listed in distro 'tiny'"
    assert rows["commands"]["reason"] == rows["config-command"]["reason"] == "essential"
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["hi from the distro"]))
    out = hermes("--distro", d, "run", "--api-mode", "scripted", "--base-url", script, "--json", "x")
    result = json.loads(out.stdout)
    assert result["model"] == "distro-model" and result["final_response"] == "hi from the distro"


def test_user_config_overrides_distro_defaults_but_not_blocks(tmp_path):
    distro = from_mapping({"name": "d", "plugins": {"blocked": ["x"]}, "tools": {"blocked": ["terminal"]},
                           "config": {"model": "distro-model", "agent": {"max_turns": 5}}}, "test")
    cfg = Config({"model": "user-model", "agent": {"disabled_tools": []}},
                 overrides=distro.config_overrides(Config({})), defaults=distro.config)
    assert cfg.get("model") == "user-model" and cfg.get("agent.max_turns") == 5
    assert cfg.get("agent.disabled_tools") == ["terminal"]
    from hermes.host.plugins import Selection

    sel = Selection.from_config(Config({"plugins": {"enabled": ["x"]}}), environ={}, distro=distro)
    assert "x" in sel.disabled


def test_distro_blocks_tools_for_the_agent(make_agent, echo_plugin):
    distro = from_mapping({"name": "d", "tools": {"blocked": ["boom", "sleep"]}}, "test")
    agent = make_agent(echo_plugin, config=Config({}, overrides=distro.config_overrides(Config({}))))
    assert "boom" not in agent.tools and "sleep" not in agent.tools and "echo" in agent.tools


@pytest.mark.parametrize(
    "text, message",
    [
        ("name: [1]\n", "name: expected a non-empty string"),
        ("name: x\nplugins: {only: nope}\n", "only: expected a list of names"),
        ("name: x\ncolour: blue\n", "unknown key(s) colour"),
        ("name: x\nplugins: [a]\n", "plugins: expected a mapping"),
        ("name: [\n", "cannot read distro"),
    ],
)
def test_bad_distro_files_are_clear_errors(hermes, tmp_path, text, message):
    d = write(tmp_path, text)
    with pytest.raises(DistroError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        load_distro(str(d))
    out = hermes("--distro", d, "plugins", "list")
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_unknown_distro_name(hermes):
    out = hermes("--distro", "no-such-distro", "plugins", "list")
    assert out.returncode == 2 and "no distro named 'no-such-distro'" in out.stderr


def test_listing_with_distro_only_set(tmp_path):
    distro = from_mapping({"name": "d", "plugins": {"only": ["scripted-provider"]}}, "test")
    recs = PluginHost.discover(Config({}), distro=distro, import_third_party=False).records
    assert [r.name for r in recs if r.status == "enabled"] == ["commands", "config-command", "scripted-provider"]


def test_a_distro_naming_an_unknown_plugin_warns_with_close_matches(hermes, tmp_path):
    d = write(tmp_path, "name: typo\nplugins:\n  only: [scripted-provider, scripted-provder]\n  blocked: [nothing-like-it]\n")
    out = hermes("--distro", d, "plugins", "list", "--json")
    assert out.returncode == 0, out.stderr
    assert "distro 'typo' names plugin 'scripted-provder', which is not found (did you mean 'scripted-provider'?)" \
        in out.stderr
    assert "names plugin 'nothing-like-it', which is not found (not installed?)" in out.stderr
    rows = json.loads(out.stdout)
    assert [r["name"] for r in rows if r["status"] == "enabled"] == ["commands", "config-command", "scripted-provider"]
    out = hermes("--distro", write(tmp_path, DISTRO, "ok.yaml"), "plugins", "list")
    assert "WARNING" not in out.stderr


DISTRO_INSTALLED = __import__("importlib.util").util.find_spec("hermes_distro_anthropic") is not None


@pytest.mark.skipif(not DISTRO_INSTALLED, reason="examples/hermes-distro-anthropic is not installed")
def test_example_distro_package_and_its_command(hermes, wire_server, tmp_path):
    import shutil
    import subprocess

    expected = {"anthropic-messages", "provider-resolve", "fallback", "sessions-sqlite", "memory", "compressor",
                "core-tools", "agent-tools", "approval", "terminal-ui", "commands", "config-command"}  # + the essentials
    listed = hermes("--distro", "anthropic-only", "plugins", "list", "--json")
    assert listed.returncode == 0 and "WARNING" not in listed.stderr, listed.stderr  # every name it uses exists
    rows = json.loads(listed.stdout)
    assert {r["name"] for r in rows if r["status"] == "enabled"} == expected
    script = shutil.which("hermes-anthropic") or str(__import__("pathlib").Path(__import__("sys").executable).parent / "hermes-anthropic")
    import os

    from tests.conftest import ROOT

    # the console script imports hermes from this tree, as the `hermes` fixture does
    env = dict(os.environ, ANTHROPIC_API_KEY="test-key",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])))
    listed = subprocess.run([script, "plugins", "list", "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0 and "WARNING" not in listed.stderr, listed.stderr
    assert {r["name"] for r in json.loads(listed.stdout) if r["status"] == "enabled"} == expected

    from plugins_providers.testserver import reply

    wire_server.push(reply("Claude here, no shell."))
    out = subprocess.run([script, "run", "--base-url", wire_server.url, "-t", "file,terminal", "who are you"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Claude here, no shell." in out.stdout
    (req,) = wire_server.requests
    assert req.path == "/v1/messages" and req.body["model"] == "claude-sonnet-4-5"
    offered = {t["name"] for t in req.body.get("tools", [])}
    assert "read_file" in offered and "terminal" not in offered  # blocked even when -t asks for it
    system = req.body["system"] if isinstance(req.body["system"], str) else " ".join(b["text"] for b in req.body["system"])
    assert "anthropic-only hermes distro" in system


def test_distro_selects_hermes_agent_plugins_through_the_same_resolver(hermes, tmp_path):
    """A distro may name plugins the hermes-compat source finds: `plugins list`
    and the run agree, and the distro's tool block holds for them too."""
    import os

    from tests.compat.conftest import make_site
    from tests.conftest import ROOT

    site = make_site(tmp_path / "site")
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    d = write(tmp_path, "name: kitchen-only\nplugins:\n  only: [scripted-provider, hermes-compat, kitchen, side]\n"
                        "tools:\n  blocked: [lookup]\n")
    rows = {r["name"]: r for r in json.loads(hermes("--distro", d, "plugins", "list", "--json", env=env).stdout)}
    assert sorted(n for n, r in rows.items() if r["status"] == "enabled") == [
        "commands", "config-command", "hermes-compat", "kitchen", "scripted-provider", "side"]
    assert rows["counter"]["status"] == "not enabled" and rows["counter"]["source"] == "hermes-compat"
    assert rows["counter"]["reason"] == "not listed in distro 'kitchen-only'"
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool_calls": [["shout", {"text": "x"}], ["lookup", {"key": "k"}]]}, "ok"]))
    out = hermes("--distro", d, "run", "--api-mode", "scripted", "--base-url", script, "--json", "go", env=env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    shout, lookup = [json.loads(m["content"]) for m in result["messages"] if m["role"] == "tool"]
    assert shout == {"transformed": {"shouted": "X"}} and "unknown tool 'lookup'" in lookup["error"]
    assert result["final_response"] == "ok [kitchen]"
    # without the distro, the same user config loads none of them (opt-in)
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json", env=env).stdout)}
    assert rows["kitchen"]["status"] == "not enabled"


def test_distro_entry_point_as_mapping_function_or_path_and_a_broken_one(tmp_path, monkeypatch):
    from tests.compat.conftest import write_dist

    site = tmp_path / "site"
    site.mkdir()
    (site / "hxdistro_pkg.py").write_text(
        "MAPPING = {'name': 'as-mapping', 'plugins': {'blocked': ['fallback']}}\n"
        "def build():\n    return {'name': 'from-function', 'tools': {'blocked': ['terminal']}}\n"
        f"PATH = {str(write(tmp_path, 'name: from-file', 'f.yaml'))!r}\n")
    (site / "hxdistro_broken.py").write_text("raise RuntimeError('half-written package')\n")
    write_dist(site, "hermes-distros-fixture", "1.0", {"hermes.distros": {
        "mapping": "hxdistro_pkg:MAPPING", "function": "hxdistro_pkg:build", "file": "hxdistro_pkg:PATH",
        "broken": "hxdistro_broken:DISTRO"}})
    monkeypatch.syspath_prepend(str(site))
    assert load_distro("mapping").blocked == {"fallback"}
    assert load_distro("function").blocked_tools == ["terminal"]
    assert load_distro("file").name == "from-file"
    with pytest.raises(DistroError, match="distro 'broken' from hermes-distros-fixture failed to load: "
                                          "RuntimeError: half-written package"):
        load_distro("broken")
    with pytest.raises(DistroError, match=r"no distro named 'nope' \(installed: .*broken, .*mapping"):
        load_distro("nope")
    __import__("sys").modules.pop("hxdistro_pkg", None)


def test_a_misspelt_selection_key_is_an_error_with_a_did_you_mean(hermes, tmp_path):
    d = write(tmp_path, "name: x\nplugins: {onl: [core-tools]}\n")
    out = hermes("--distro", d, "plugins", "list")
    assert out.returncode == 2 and "plugins: unknown key(s) onl (did you mean 'only'?)" in out.stderr


def test_unknown_keys_of_a_distros_config_block_are_a_warning(hermes, tmp_path):
    d = write(tmp_path, "name: x\nconfig: {agent: {max_turn: 5}}\n")
    out = hermes("--distro", d, "config", "check")
    assert out.returncode == 1 and "distro config: unknown key 'agent.max_turn' (did you mean 'agent.max_turns'?)" \
        in out.stdout


def test_a_distros_command_is_itself_in_help_version_and_errors(tmp_path):
    """The example distro's console script names itself, and the distro, where
    hermes would say "hermes"."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import ROOT

    script = shutil.which("hermes-anthropic") or str(Path(sys.executable).parent / "hermes-anthropic")
    env = dict(os.environ, HERMES_HOME=str(tmp_path),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])))
    run = lambda *args: subprocess.run([script, *args], capture_output=True, text=True, env=env, timeout=60)  # noqa: E731
    assert run("--version").stdout.strip().startswith("hermes-anthropic ")
    helped = run("--help").stdout
    assert helped.startswith("Usage: hermes-anthropic ")
    assert "hermes-anthropic: Anthropic models only; file tools, no shell (the 'anthropic-only' distro" \
        in " ".join(helped.split())
    out = run("run", "hi")  # no ANTHROPIC_API_KEY
    assert out.returncode == 1 and out.stderr.startswith("hermes-anthropic: error: "), out.stderr


def test_a_provider_the_distro_cannot_serve_is_named_in_the_error(hermes):
    out = hermes("--distro", "anthropic-only", "run", "--provider", "nope", "-m", "x", "hi")
    assert out.returncode == 1
    assert "provider 'nope' needs the API mode 'chat_completions', and no enabled plugin serves it " \
           "(enabled: anthropic_messages)" in out.stderr, out.stderr


EXAMPLE = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples" / "hermes-distro-anthropic" \
    / "hermes_distro_anthropic" / "distro.yaml"


def test_the_essential_built_ins_always_load_and_cannot_be_left_out(hermes, tmp_path, hermes_home):
    """run, plugins and config come from the essential built-ins: a selection
    need not name them, and disabling or blocking one is one line."""
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json",
                                                    env={"HERMES_PLUGINS": "scripted-provider"}).stdout)}
    assert {n: (rows[n]["status"], rows[n]["reason"]) for n in ("commands", "config-command")} == dict.fromkeys(
        ("commands", "config-command"), ("enabled", "essential"))
    out = hermes("plugins", "disable", "commands")
    assert out.returncode == 1 and out.stderr == "hermes: error: plugin commands is essential and cannot be " \
                                                 "disabled (it always loads)\n"
    assert not (hermes_home / "config.yaml").exists()  # nothing was written
    blocked = hermes("--distro", write(tmp_path, "name: b\nplugins:\n  blocked: [config-command]\n"), "run", "x")
    assert blocked.returncode == 2 and blocked.stderr.count("\n") == 1
    assert "plugins: blocked: config-command is essential and cannot be blocked" in blocked.stderr
    (hermes_home / "config.yaml").write_text("plugins:\n  disabled: [commands]\n")
    refused = hermes("run", "x")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "plugins.disabled: commands is essential and cannot be disabled" in refused.stderr
    assert hermes("config", "unset", "plugins.disabled").returncode == 0  # the repair command is there
    assert hermes("config", "check").returncode == 0


def test_a_distro_that_leaves_config_command_out_can_still_repair_config(hermes, hermes_home):
    """The example distro's only: does not name config-command; the error tells
    the user to run `config set`, and that command exists."""
    (hermes_home / "config.yaml").write_text("agent:\n  max_turns: lots\n")
    failed = hermes("--distro", EXAMPLE, "run", "hello", env={"ANTHROPIC_API_KEY": "test-key"})
    assert failed.returncode == 2 and "fix it with `hermes config set KEY VALUE`" in failed.stderr
    fixed = hermes("--distro", EXAMPLE, "config", "set", "agent.max_turns", "5")
    assert fixed.returncode == 0, fixed.stderr
    assert hermes("--distro", EXAMPLE, "config", "get", "agent.max_turns").stdout.strip() == "5"


def test_distro_help_lists_its_commands_only_and_keeps_its_own_caches(hermes, hermes_home):
    """`--help` is eager: it used to run before --distro was read, listing plain
    hermes' commands and writing plain hermes' caches."""
    for args in (("--distro", EXAMPLE, "--help"), ("--help", "--distro", EXAMPLE)):
        out = hermes(*args)
        assert out.returncode == 0, out.stderr
        commands = {line.split()[0] for line in out.stdout.split("Commands:")[1].splitlines() if line[:3].strip()}
        assert commands == {"run", "plugins", "config", "chat", "sessions", "sandbox", "memory"}, out.stdout  # no prompt, skills
        assert "the 'anthropic-only' distro of hermes" in " ".join(out.stdout.split())
    assert not (hermes_home / "plugin-commands.txt").exists() and not (hermes_home / "plugin-state.json").exists()
    assert len(list(hermes_home.glob("plugin-commands-*.txt"))) == 1
    plain = hermes("--help").stdout
    assert {"prompt", "skills"} <= {line.split()[0] for line in plain.split("Commands:")[1].splitlines()
                                    if line[:3].strip()}


def test_the_essential_built_ins_are_the_entry_points_of_pyproject():
    import tomllib

    from hermes.host.essential import ESSENTIAL
    from tests.conftest import ROOT

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["hermes.plugins"]
    assert {name: declared.get(name) for name in ESSENTIAL} == ESSENTIAL


def test_a_distros_blocked_tools_join_the_ones_config_yaml_disables(hermes, hermes_home, tmp_path):
    """A distro's `tools.blocked` replaced the user's `agent.disabled_tools`: the tool the user had turned
    off ran under the distro. Both hold now, and config check tells whose typo is whose."""
    (hermes_home / "config.yaml").write_text("agent:\n  disabled_tools: [read_file]\n")
    d = write(tmp_path, "name: no-shell\ntools:\n  blocked: [terminal]\n")
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool_calls": [["read_file", {"path": str(script)}], ["terminal",
                                                                                          {"command": "echo x"}]]}, "ok"]))
    out = hermes("--distro", d, "run", "--api-mode", "scripted", "--base-url", script, "--yolo", "--json", "go")
    assert out.returncode == 0, out.stderr
    results = [m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
    assert len(results) == 2 and all("unknown tool" in r for r in results), results  # neither ran
    assert json.loads(hermes("--distro", d, "config", "get", "agent.disabled_tools").stdout) == ["read_file",
                                                                                                "terminal"]
    (hermes_home / "config.yaml").write_text("agent:\n  disabled_tools: [red_file]\n")
    write(tmp_path, "name: no-shell\ntools:\n  blocked: [termnal]\n")
    checked = hermes("--distro", d, "config", "check").stdout.splitlines()
    assert checked == [f"{hermes_home / 'config.yaml'}: agent.disabled_tools: no plugin registers a tool 'red_file' "
                       "(did you mean 'read_file'?)",
                       "distro settings: agent.disabled_tools: no plugin registers a tool 'termnal' (did you mean "
                       "'terminal'?)"], checked


def test_enabling_a_plugin_the_distro_or_hermes_plugins_leaves_out_says_it_stays_off(hermes, hermes_home, tmp_path):
    """`plugins enable batch` under a distro whose `only` leaves it out said "enabled batch" and nothing loaded;
    a plugin the distro blocks was listed as "disabled in config", which config.yaml could not undo."""
    d = write(tmp_path, "name: small\nplugins:\n  only: [scripted-provider, core-tools]\n  blocked: [approval]\n")
    out = hermes("--distro", d, "plugins", "enable", "batch")
    assert out.returncode == 0 and out.stdout.strip().endswith(
        "; it stays off: not listed in distro 'small'"), out.stdout
    rows = {r["name"]: r for r in json.loads(hermes("--distro", d, "plugins", "list", "--json").stdout)}
    assert (rows["approval"]["status"], rows["approval"]["reason"]) == ("disabled", "blocked by distro 'small'")
    out = hermes("--distro", d, "plugins", "enable", "approval")
    assert out.stdout.strip().endswith("; it stays off: blocked by distro 'small'"), out.stdout
    out = hermes("plugins", "enable", "batch", env={"HERMES_PLUGINS": "core-tools"})
    assert out.stdout.strip().endswith("; it stays off: not listed in HERMES_PLUGINS"), out.stdout
    assert hermes("plugins", "enable", "batch").stdout.strip() == f"enabled batch (saved in {hermes_home / 'config.yaml'})"
