"""Config keys are declared by the part that reads them (register_config);
`hermes config show|get|set|unset|path|check` through the real command line."""

from __future__ import annotations

import json

import pytest
import yaml

from hermes.host.config import Config, ConfigError, kind
from hermes.host.plugins import PluginHost
from kernel import hookimpl
from kernel.keys import Key

FIX_HINT = "; fix it with `hermes config set KEY VALUE` (`hermes config check` lists every problem)"


def test_a_plugin_declares_its_keys_with_type_default_and_help(caplog):
    class Weather:
        __name__ = "weather"

        @hookimpl
        def register_config(self, declare):
            declare("weather.city", str, "Oslo", "the city to forecast")
            declare(Key("weather.days", int, 3, "days ahead"))

    config = Config({"weather": {"days": 5}, "agent": {"max_turn": 4}})
    host = PluginHost.from_objects([Weather()], config)
    assert config.get("weather.city") == "Oslo" and config.get("weather.days") == 5
    assert config.keys["weather.days"].owner == "weather"  # a Key declared whole is its declarer's too
    key = config.keys["weather.city"]
    assert (key.owner, key.help, kind(key)) == ("weather", "the city to forecast", "a string")
    assert "model" in config.keys and "memory.provider" not in config.keys  # the kernel's table holds its own only
    assert any("unknown key 'agent.max_turn' (did you mean 'agent.max_turns'?)" in r.getMessage()
               for r in caplog.records)
    assert host.record("weather").status == "enabled"
    try:
        PluginHost.from_objects([Weather()], Config({"weather": {"days": "many"}}, path=None))
    except ConfigError as exc:
        assert str(exc) == "config: weather.days: expected an integer, got 'many' (str)"
    else:
        raise AssertionError("a wrong type must be a ConfigError")


def test_builtin_plugins_declare_what_they_read():
    host = PluginHost.discover(Config({}), environ={"HERMES_SAFE_MODE": "1"}, import_third_party=False)
    owners = {k.name: k.owner for k in host.config.keys.values()}
    assert owners["compression.threshold"] == "compressor" and owners["memory.provider"] == "memory"
    assert owners["approvals.mode"] == "approval" and owners["delegation.max_iterations"] == "agent-tools"
    assert owners["terminal.timeout"] == "core-tools" and owners["agent.retry_base_delay"] == "fallback"
    assert owners["agent.max_turns"] == "kernel"
    assert all(k.help for k in host.config.keys.values()), [k.name for k in host.config.keys.values() if not k.help]


def test_config_set_get_unset_path_show_check(hermes, hermes_home):
    path = hermes_home / "config.yaml"
    assert hermes("config", "path").stdout.strip() == str(path)
    out = hermes("config", "set", "agent.max_turns", "40")
    assert out.returncode == 0 and out.stdout.strip() == f"set agent.max_turns = 40 in {path}"
    hermes("config", "set", "compression.enabled", "off")  # hermes-agent's words for booleans
    for text, names in (("terminal", ["terminal"]), ("safe, todo", ["safe", "todo"]), ("", [])):  # as -t reads it
        assert hermes("config", "set", "toolsets", text).returncode == 0
        assert yaml.safe_load(path.read_text())["toolsets"] == names
    out = hermes("config", "set", "model", "")
    assert out.stdout.strip() == f"set model = '' in {path}", out.stdout  # was `set model =  in`
    assert out.stderr.strip() == "hermes: note: an empty value stays set; `hermes config unset model` removes it"
    hermes("config", "unset", "model")
    hermes("config", "set", "toolsets", "[terminal, file]")
    hermes("config", "set", "plugins.entries.notes.settings.depth", "3")  # below a mapping key anything goes
    assert yaml.safe_load(path.read_text()) == {
        "agent": {"max_turns": 40}, "compression": {"enabled": False}, "toolsets": ["terminal", "file"],
        "plugins": {"entries": {"notes": {"settings": {"depth": 3}}}}}
    assert hermes("config", "get", "agent.max_turns").stdout.strip() == "40"
    unknown = hermes("config", "get", "agent.max_turn")  # was AttributeError: 'Config' object has no attribute 'is_set'
    assert unknown.returncode == 1 and unknown.stderr.strip() == \
        "hermes: error: unknown key 'agent.max_turn' (did you mean 'agent.max_turns'?); `hermes config show` lists them"
    assert hermes("config", "get", "plugins.entries.notes.settings.depth").stdout.strip() == "3"  # set, undeclared
    got = json.loads(hermes("config", "get", "compression.threshold", "--json").stdout)
    assert got == {"key": "compression.threshold", "value": 0.5, "source": "default"}
    shown = {r["key"]: r for r in json.loads(hermes("config", "show", "--json").stdout)["keys"]}
    assert shown["agent.max_turns"]["value"] == 40 and shown["agent.max_turns"]["source"] == "file"
    assert shown["memory.provider"]["owner"] == "memory" and shown["memory.provider"]["help"]
    assert hermes("config", "check").stdout.strip() == f"ok: {path}"
    out = hermes("config", "unset", "agent.max_turn")  # a typo unsets nothing: the key that is set is named
    assert out.returncode == 0 and out.stderr.strip() == f"agent.max_turn is not set in {path} (did you mean " \
        "'agent.max_turns'?)" and yaml.safe_load(path.read_text())["agent"]["max_turns"] == 40
    out = hermes("config", "unset", "agent.max_turns")
    assert out.returncode == 0 and "agent" not in yaml.safe_load(path.read_text())
    assert hermes("config", "get", "agent.max_turns").stdout.strip() == "90"


def test_config_show_masks_what_a_handwritten_config_keeps_secret(hermes, hermes_home):
    """hermes-agent's configs keep an MCP server's token in its env; `config show` (pasted into a bug report)
    printed it. Values under secret names are masked there; a reference stays; `config get KEY` still answers."""
    (hermes_home / "config.yaml").write_text(
        "mcp_servers:\n  gh:\n    command: x\n    env: {GITHUB_TOKEN: ghp_live_abcdef123456, TZ: UTC, "
        "OTHER_TOKEN: '${OTHER_TOKEN}'}\n    headers: {Authorization: Bearer sk-live-123, X-Team: blue}\n")
    for out in (hermes("config", "show").stdout, hermes("config", "show", "--json").stdout, hermes("config").stdout):
        assert "ghp_live" not in out and "sk-live" not in out and "[masked: 21 characters]" in out
        assert "UTC" in out and "${OTHER_TOKEN}" in out and "blue" in out
    assert hermes("config", "get", "mcp_servers.gh.env.GITHUB_TOKEN").stdout.strip() == "ghp_live_abcdef123456"
    # a database URL's password too, in config show and in the store's error (a reference stays as written)
    (hermes_home / "config.yaml").write_text("sessions:\n  store: postgres\n  database_url: mysql://bob:hunter2@h/x\n"
                                             "durable:\n  database_url: 'postgresql://bob:${PGPW}@h/x'\n")
    shown = hermes("config", "show").stdout
    assert "sessions.database_url = mysql://bob:[masked]@h/x" in shown and "postgresql://bob:${PGPW}@h/x" in shown
    out = hermes("sessions", "list")
    assert out.returncode == 1 and "(it is 'mysql://bob@h/x')" in out.stderr and "hunter2" not in out.stderr


def test_config_set_refuses_bad_values_unknown_keys_and_secrets_and_writes_nothing(hermes, hermes_home):
    path = hermes_home / "config.yaml"
    path.write_text("model: gpt-test\n")
    before = path.read_text()
    cases = [
        (("agent.max_turns", "forty"), "agent.max_turns: expected an integer, got 'forty'"),
        (("compression.enabled", "maybe"), "compression.enabled: expected true or false, got 'maybe'"),
        (("toolsets", "{terminal: 1}"), "toolsets: expected a list like a,b or [a, b], got '{terminal: 1}'"),
        # a name no loaded plugin registers would fail every run ("unknown toolset") until edited out
        (("toolsets", "file,termnal"), "toolsets: unknown toolset 'termnal' (did you mean 'terminal'?); known: "),
        # a plugin name that names nothing disabled nothing: the plugin stayed on, unsaid (plugins disable refuses it)
        (("plugins.disabled", "approvall"), "plugins.disabled: no plugin named 'approvall' (did you mean 'approval'?)"),
        # a tool name that names nothing blocked nothing: the shell stayed offered, unsaid
        (("agent.disabled_tools", "read_file,termnal"),
         "agent.disabled_tools: no plugin registers a tool 'termnal' (did you mean 'terminal'?)"),
        (("durable.engine", "temporal"), "durable.engine: expected one of '', dbos, got 'temporal'"),  # '': unset
        # keys declared with names=TABLE: a name no enabled plugin registers there (runs warn, or fail, later)
        (("context.engine", "compresor"), "context.engine: no enabled plugin registers 'compresor' among the context "
                                          "engines, which are: compressor (did you mean 'compressor'?)"),
        (("memory.provider", "fts_memory"), "memory.provider: no enabled plugin registers 'fts_memory' among the "
                                            "memory backends, which are: fts"),
        (("sessions.store", "sqlit"), "sessions.store: no enabled plugin registers 'sqlit' among the session stores, "
                                      "which are: postgres, sqlite (did you mean 'sqlite'?)"),
        (("api_mode", "chat_completion"), "api_mode: no enabled plugin registers 'chat_completion' among the model "
                                          "providers, which are: anthropic_messages, chat_completions, "),
        (("fallback_providers", "openrouter"), "fallback_providers[0]: expected a mapping, got 'openrouter' (str)"),
        # an item of a list by its number was written as a mapping: "expected a list, got {'0': {'model': 'y'}}"
        (("fallback_providers.0.model", "y"), "fallback_providers is a list: set it whole, as `hermes config set "
                                              "fallback_providers '[...]'` (`hermes config get fallback_providers`"),
        (("modle", "x"), "unknown key 'modle' (did you mean 'model'?)"),
        (("provider_options.api_key", "sk-test"), "'provider_options.api_key' looks like a secret"),
        # an MCP server's credentials by the rule mcp add and config show use (these two were written)
        (("mcp_servers.gh.headers.Authorization", "Bearer abc"), "'mcp_servers.gh.headers.Authorization' looks like "
         "a secret: hermes never stores keys in config.yaml; export AUTHORIZATION=... in your shell and set it to "
         "'${AUTHORIZATION}'"),
        (("mcp_servers.gh.env.AWS_SECRET_ACCESS_KEY", "abc"), "'mcp_servers.gh.env.AWS_SECRET_ACCESS_KEY' looks like"),
        # below the least value that makes sense (a negative VALUE is a value, not an option)
        (("agent.max_turns", "-5"), "agent.max_turns: expected an integer of at least 1, got -5 (int)"),
        (("agent.max_turns", "0"), "agent.max_turns: expected an integer of at least 1, got 0 (int)"),
        (("terminal.timeout", "-1.5"), "terminal.timeout: expected a number of at least 1, got -1.5 (float)"),
    ]
    for args, message in cases:
        out = hermes("config", "set", *args)
        assert out.returncode == 1 and out.stderr.startswith(f"hermes: error: {message}"), (args, out.stderr)
        assert len(out.stderr.splitlines()) == 1 and path.read_text() == before  # nothing written, the file not blamed
    out = hermes("config", "set", "--force", "display.skin", "mono")  # a hermes-agent key we do not read
    assert out.returncode == 0 and yaml.safe_load(path.read_text())["display"] == {"skin": "mono"}
    out = hermes("config", "set", "--force", "display.offset", "-3")
    assert out.returncode == 0 and yaml.safe_load(path.read_text())["display"]["offset"] == -3, out.stderr
    out = hermes("config", "set", "--force", "toolsets", "mine")  # a plugin not installed yet, say
    assert out.returncode == 0 and yaml.safe_load(path.read_text())["toolsets"] == ["mine"]
    assert hermes("config", "set", "--force", "plugins.enabled", "mine-too").returncode == 0
    assert hermes("config", "set", "--force", "memory.provider", "honcho").returncode == 0
    assert hermes("config", "set", "context.engine", "compressor").returncode == 0  # registered (and the default)
    assert hermes("config", "set", "api_mode", "chat_completions").returncode == 0
    assert hermes("config", "set", "agent.disabled_tools", "terminal,mcp__gh__create_issue").returncode == 0  # MCP's
    assert hermes("config", "set", "mcp_servers.gh.env.GITHUB_TOKEN", "${GITHUB_TOKEN}").returncode == 0  # a reference
    checked = hermes("config", "check")  # what every run would refuse, said before one
    said = [line for line in checked.stdout.splitlines() if line.startswith(f"{path}: toolsets: ")]
    assert checked.returncode == 1 and said and said[0].startswith(f"{path}: toolsets: unknown toolset 'mine'")
    assert any(line.startswith(f"{path}: plugins.enabled: no plugin named 'mine-too'") for line in checked.stdout.splitlines())
    assert f"{path}: memory.provider: no enabled plugin registers 'honcho' among the memory backends" in checked.stdout
    assert "context.engine" not in checked.stdout and "api_mode" not in checked.stdout
    # the default names a plugin disabled here: not a typo in config.yaml (runs go on without a context engine)
    path.write_text("plugins:\n  disabled: [compressor]\n")
    assert hermes("config", "check").stdout.strip() == f"ok: {path}"


def test_a_number_below_its_keys_minimum_is_a_one_line_error_not_a_traceback(hermes, hermes_home):
    """A budget of -5 used to reach the loop and end `hermes run` in a ValueError
    traceback; 0 silently became 90. Now both are config problems like a wrong type."""
    path = hermes_home / "config.yaml"
    for text, key in (("agent:\n  max_turns: -5\n", "agent.max_turns: expected an integer of at least 1, got -5"),
                      ("agent:\n  max_turns: 0\n", "agent.max_turns: expected an integer of at least 1, got 0"),
                      ("delegation:\n  max_concurrent_children: 0\n",  # a plugin's key, declared with minimum=
                       "delegation.max_concurrent_children: expected an integer of at least 1, got 0")):
        path.write_text("model: gpt-test\n" + text)
        out = hermes("run", "hi")
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert out.stderr.strip() == f"hermes: error: {path}: {key} (int)" + FIX_HINT
    shown = hermes("config", "show")
    assert shown.returncode == 0 and "(an integer of at least 1; agent-tools)" in shown.stdout
    assert "delegation.max_concurrent_children = 3  [ignored:" in shown.stdout


def test_unknown_keys_warn_once_and_wrong_types_of_plugin_keys_are_one_line_errors(hermes, hermes_home):
    path = hermes_home / "config.yaml"
    path.write_text("modle: gpt\nagent:\n  max_turn: 3\n")
    out = hermes("config", "check", "--json")
    report = json.loads(out.stdout)
    assert out.returncode == 1 and report["ok"] is False
    assert report["problems"] == [f"{path}: unknown key 'modle' (did you mean 'model'?)",
                                  f"{path}: unknown key 'agent.max_turn' (did you mean 'agent.max_turns'?)"]
    out = hermes("plugins", "info", "core-tools")  # any command that loads the plugins warns, once
    warnings = [line for line in out.stderr.splitlines() if "unknown key" in line]
    assert len(warnings) == 1 and "'modle' (did you mean 'model'?)" in warnings[0], out.stderr
    # a key written with its dots, as `config set` names it, was taken for a key someone reads and ignored unsaid
    path.write_text("agent.max_turns: 1\nmemory:\n  prefetch.timeout: 2\nmcp_servers:\n  my.server: {command: x}\n")
    assert Config(yaml.safe_load(path.read_text())).get("agent.max_turns") == 90
    assert hermes("config", "check").stdout.splitlines() == [
        f"{path}: unknown key 'agent.max_turns' (nest it: agent: {{max_turns: ...}})",
        f"{path}: unknown key 'memory.prefetch.timeout' (did you mean 'memory.prefetch_timeout'?)"]  # no one's
    path.write_text("memory:\n  prefetch_timeout: soon\n")  # a plugin's key
    out = hermes("run", "hi")
    assert out.returncode == 2
    assert out.stderr.strip() == f"hermes: error: {path}: memory.prefetch_timeout: expected a number of at least 0.1, got 'soon' (str)" + FIX_HINT



def test_a_config_of_many_unknown_keys_warns_in_one_short_line(hermes, hermes_home):
    """A config.yaml of another tool's may hold a hundred keys read nowhere here; each run printed all of them
    (7 KB of stderr for hermes-agent's defaults, whose keys hermes-compat now knows: tests/compat). Now five and a
    count; `config check` lists every one."""
    names = ["gadget", "widget", "gizmo", "doohickey", "thingamajig", "whatsit", "contraption", "apparatus", "device",
             "mechanism", "appliance", "implement"]
    (hermes_home / "config.yaml").write_text("".join(f"{name}: {{enabled: false}}\n" for name in names))
    out = hermes("plugins", "info", "core-tools")
    warnings = [line for line in out.stderr.splitlines() if "unknown key" in line]
    assert len(warnings) == 1 and len(warnings[0]) < 400, out.stderr
    assert "'gadget', 'widget', 'gizmo', 'doohickey', 'thingamajig' and 7 more" in warnings[0]
    assert "(`hermes config check` lists them)" in warnings[0]
    assert len(hermes("config", "check").stdout.splitlines()) == 12

WEATHER = """
from kernel import hookimpl

@hookimpl
def register_config(declare):
    declare("weather.city", str, "Oslo", "the city to forecast")
"""


def test_an_installed_plugins_keys_are_known_and_a_listing_never_calls_them_unknown(hermes, hermes_home, tmp_path):
    import os

    from tests.conftest import ROOT
    from tests.kernel.fakedist import make_dist

    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "hermes-weather", "1.0", {"weather": ("hermes_weather_mod", WEATHER)})
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    (hermes_home / "config.yaml").write_text("weather:\n  city: Rome\n")
    for _ in range(2):  # the first listing loads the plugins (nothing cached yet), the second reads the cache
        out = hermes("plugins", "list", env=env)
        assert out.returncode == 0 and "unknown key" not in out.stderr, out.stderr
    assert hermes("config", "get", "weather.city", env=env).stdout.strip() == "Rome"
    assert hermes("config", "check", env=env).returncode == 0
    out = hermes("config", "check", env={"HERMES_PLUGINS": "config-command"})  # weather not loaded: its key is unknown
    assert out.returncode == 1 and "unknown key 'weather'" in out.stdout  # the whole section


def test_a_lenient_config_keeps_its_problems_and_never_hands_out_a_wrong_type():
    config = Config({"agent": {"max_turns": "lots"}, "plugins": {"enabled": [3]}}, lenient=True)
    assert config.get("agent.max_turns") == 90  # the declared default, not "lots"
    assert [p.split(": ", 1)[1] for p in config.problems] == [
        "agent.max_turns: expected an integer of at least 1, got 'lots' (str)", "plugins.enabled: expected a list of strings, got 3 (int)"]
    config.declare([Key("painter.coats", int, 2, "coats of paint")])
    config.data["painter"] = {"coats": "many"}
    assert config.get("painter.coats") == 2 and config.check([config.keys["painter.coats"]])
    try:
        Config({"agent": {"max_turns": "lots"}})
    except ConfigError as exc:  # not lenient (a library's Agent): the first problem is raised
        assert "agent.max_turns" in str(exc)
    else:
        raise AssertionError("a strict config accepted a wrong type")


@pytest.mark.parametrize("text, problem", [
    ("toolsets: 7", "toolsets: expected a list of strings, got 7 (int)"),
    ("fallback_providers: 5", "fallback_providers: expected a list, got 5 (int)"),
    ("plugins: {disabled: 4}", "plugins.disabled: expected a list of strings, got 4 (int)"),
])
def test_a_list_the_host_reads_given_another_type_is_a_problem_not_a_traceback(hermes, hermes_home, text, problem):
    """These lists are read item by item as config loads: a number there was `TypeError: 'int' object is not
    iterable`, in `hermes run` and in `hermes config check`, the command meant to find it."""
    path = hermes_home / "config.yaml"
    path.write_text(text + "\n")
    assert Config(yaml.safe_load(text), lenient=True).problems == [f"config: {problem}"]
    out = hermes("config", "check")
    assert out.returncode == 1 and out.stdout.strip() == f"{path}: {problem}" and "Traceback" not in out.stderr
    out = hermes("run", "--api-mode", "scripted", "--base-url", "x.json", "hi")
    assert out.returncode == 2 and out.stderr.startswith(f"hermes: error: {path}: {problem};"), out.stderr


def test_a_section_given_a_value_is_a_problem_not_an_unknown_key(hermes, hermes_home):
    """`memory: false` (meant as: no memory) left every memory.* key at its default and warned of an "unknown key
    'memory'" that no plugin reads; it is a wrong type, said like the others, also of a section a plugin declares."""
    config = Config({"agent": 5, "painter": "red"}, lenient=True)
    assert config.problems == ["config: agent: expected a mapping of agent.* keys, got 5 (int)"]
    config.declare([Key("painter.coats", int, 2, "coats of paint")])
    assert config.problems[1:] == ["config: painter: expected a mapping of painter.* keys, got 'red' (str)"]
    assert config.get("painter.coats") == 2 and config.unknown() == []  # not also an unknown key
    path = hermes_home / "config.yaml"
    path.write_text("memory: false\n")
    problem = "memory: expected a mapping of memory.* keys, got False (bool)"
    out = hermes("run", "--api-mode", "scripted", "--base-url", "x.json", "hi")
    assert out.returncode == 2 and out.stderr.startswith(f"hermes: error: {path}: {problem};"), out.stderr
    assert hermes("config", "check").stdout.strip() == f"{path}: {problem}"
    assert hermes("config", "set", "memory.memory_enabled", "false").returncode == 0  # the keys replace the value
    assert yaml.safe_load(path.read_text()) == {"memory": {"memory_enabled": False}}
    assert hermes("config", "check").stdout.strip() == f"ok: {path}"


def test_a_key_given_twice_is_found_by_config_check_and_named_by_config_set(hermes, hermes_home):
    """PyYAML keeps the last of two equal keys unsaid: `config check` said ok, and `config set` refused the file
    as "not valid YAML (while constructing a mapping)", naming neither the key nor the line."""
    path = hermes_home / "config.yaml"
    path.write_text("model: a\nagent:\n  max_turns: 5\n  max_turns: 6\nmodel: b\n")
    twice = 'line 4: found duplicate key "max_turns" with value "6" (original value: "5"): runs use the last'
    check = hermes("config", "check")
    assert check.returncode == 1 and check.stdout.startswith(f"{path}: {twice}; delete the other"), check.stdout
    assert json.loads(hermes("config", "check", "--json").stdout)["ok"] is False
    out = hermes("config", "set", "model", "c")
    assert out.returncode == 1
    assert out.stderr.strip() == f"hermes: error: {path} cannot be changed: {twice}; delete the other"
    path.write_text("model: a\nagent: {max_turns: [5\n")  # PyYAML's error first; ruamel's names the line too
    assert "invalid YAML (line 3" in hermes("config", "check").stdout
    from plugins.config_command.edit import EditError, edit

    with pytest.raises(EditError, match=r"cannot be changed: it is not valid YAML \(line 3: expected ','"):
        edit(path, lambda document: None)
    path.write_text("model: a\nagent:\n  max_turns: 6\n")
    assert hermes("config", "check").stdout.strip() == f"ok: {path}"


def test_a_wrong_value_in_a_distros_config_points_at_the_distro_not_at_config_set(hermes, hermes_home, tmp_path):
    """`hermes config set` writes config.yaml, which cannot repair a distro's own
    defaults (they are checked whatever config.yaml says): the error says where to fix it."""
    distro = tmp_path / "d.yaml"
    distro.write_text("name: d\nconfig:\n  agent:\n    max_turns: -1\n")
    out = hermes("--distro", str(distro), "run", "hi")
    assert out.returncode == 2 and out.stderr.strip() == (
        "hermes: error: distro settings: agent.max_turns: expected an integer of at least 1, got -1 (int); "
        f"the distro sets it ({distro}): fix it there")
    distro.write_text("name: d\nconfig:\n  memory: false\n")  # a section given a value, as in config.yaml
    out = hermes("--distro", str(distro), "run", "hi")
    assert out.returncode == 2 and out.stderr.startswith(
        "hermes: error: distro settings: memory: expected a mapping of memory.* keys, got False (bool);"), out.stderr
    # a distro's tools.blocked with a typo blocked nothing: config check names it, and the distro, not config.yaml
    distro.write_text("name: d\ntools:\n  blocked: [termnal]\nconfig:\n  toolsets: [fiel]\n")
    (hermes_home / "config.yaml").write_text("model: m\n")
    checked = hermes("--distro", str(distro), "config", "check").stdout.splitlines()
    assert "distro settings: agent.disabled_tools: no plugin registers a tool 'termnal' (did you mean 'terminal'?)" \
        in checked and any(line.startswith("distro settings: toolsets: unknown toolset 'fiel'") for line in checked)
    distro.write_text("name: d\ntools:\n  blocked: [termnal]\n")  # and every run says it: the shell is offered
    script = tmp_path / "s.json"
    script.write_text('["ok"]')
    out = hermes("--distro", str(distro), "run", "--api-mode", "scripted", "--base-url", str(script), "hi")
    assert out.returncode == 0 and out.stdout == "ok\n"
    assert "agent.disabled_tools/tools.blocked names no tool 'termnal' (did you mean 'terminal'?)" in out.stderr, out.stderr


def test_every_number_key_at_its_declared_minimum_is_checked_ok_and_runs_without_a_warning(hermes_cli, tmp_path,
                                                                                          monkeypatch):
    """A key's declared least value is the one its reader takes: `terminal.timeout: 0` and
    `file.max_read_chars: 1` were "ok" by `config check` and then warned of and replaced on every run,
    `memory.memory_char_limit: 0` made the memory plugin fail and the run exit 1."""
    monkeypatch.setenv("HERMES_HOME", str(hermes_cli.home))
    config = Config({})
    PluginHost.discover(config)
    least: dict = {}
    for key in config.keys.values():
        if key.minimum is not None and "*" not in key.name and not key.name.startswith("mcp_servers."):
            *parents, last = key.name.split(".")
            node = least
            for part in parents:
                node = node.setdefault(part, {})
            node[last] = key.minimum
    assert least["terminal"]["timeout"] and least["memory"]["memory_char_limit"]  # what the run below reaches
    (hermes_cli.home / "config.yaml").write_text(yaml.safe_dump(least))
    assert hermes_cli("config", "check").returncode == 0
    (tmp_path / "notes.txt").write_text("x" * 2000)
    script = tmp_path / "steps.json"
    script.write_text(json.dumps([{"tool_calls": [
        ["terminal", {"command": "seq 1 2000"}], ["read_file", {"path": str(tmp_path / "notes.txt")}],
        ["search_files", {"pattern": "x", "path": str(tmp_path)}], ["memory", {"action": "add", "content": "m"}],
        ["delegate_task", {"goal": "look"}]]}, "done"]))
    out = hermes_cli("run", "--api-mode", "scripted", "--base-url", script, "--yolo", "--json", "go", cwd=tmp_path)
    assert out.returncode in (0, 3), out.stderr  # 3: the budget of one turn (agent.max_turns: 1) ran out
    assert "WARNING" not in out.stderr and "error" not in out.stderr, out.stderr
    results = [m["content"] for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
    assert len(results) == 5 and "[... " in results[0]  # the terminal's output clipped at 1000 characters


def test_a_list_of_names_holding_a_number_is_named_by_config_check_and_set(hermes_cli):
    """`prompt.context_files: [5, NOTES.md]` was "ok" and then cost the run its whole system prompt (the prompt
    plugin's hook raised TypeError); `skills.paths: [5]`, `command_allowlist: [7]` went unsaid. Keys of names and
    paths are declared `list[str]` (a plugin's too), and an item that is no string is named."""
    (hermes_cli.home / "config.yaml").write_text(
        "prompt:\n  context_files: [5, NOTES.md]\nskills:\n  paths: [~/skills, 5]\ncommand_allowlist: [7]\n")
    out = hermes_cli("config", "check")
    assert out.returncode == 1
    where = hermes_cli.home / "config.yaml"
    assert out.stdout.splitlines() == [f"{where}: skills.paths: expected a list of strings, got 5 (int)",
                                       f"{where}: prompt.context_files: expected a list of strings, got 5 (int)",
                                       f"{where}: command_allowlist: expected a list of strings, got 7 (int)"]
    run = hermes_cli("run", "--api-mode", "scripted", "--base-url", "[]", "hi")
    assert run.returncode == 2 and run.stderr.startswith(f"hermes: error: {where}: skills.paths: expected a list "
                                                         "of strings, got 5 (int) (and 2 more)"), run.stderr
    (hermes_cli.home / "config.yaml").write_text("")
    refused = hermes_cli("config", "set", "sandbox.writable", "[1, /srv]")
    assert (refused.returncode, refused.stderr) == (1, "hermes: error: sandbox.writable: expected a list of strings, "
                                                       "got 1 (int)\n")
    assert hermes_cli("config", "set", "sandbox.writable", "/srv,/data").returncode == 0
    assert yaml.safe_load(where.read_text()) == {"sandbox": {"writable": ["/srv", "/data"]}}


def test_a_plugin_declares_a_list_of_strings():
    class Weather:
        __name__ = "weather"

        @hookimpl
        def register_config(self, declare):
            declare("weather.cities", list[str], [], "the cities to forecast")

    config = Config({"weather": {"cities": ["Oslo", 3]}}, path=None)
    config.problems = []
    PluginHost.from_objects([Weather()], config)
    assert config.problems == ["config: weather.cities: expected a list of strings, got 3 (int)"]
    assert kind(config.keys["weather.cities"]) == "a list of strings"


def test_config_edit_opens_the_editor_then_checks_what_was_saved(hermes, hermes_home, tmp_path):
    """`hermes config edit` (hermes-agent's, git config --edit's): the file is made when missing, the editor gets
    its path, and what was saved is checked at once; no editor is one line saying what to do."""
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'a').write(open(sys.argv[1] + '.next').read())\n")
    path = hermes_home / "config.yaml"
    env = {"EDITOR": f"python3 {editor}", "VISUAL": ""}
    (hermes_home / "config.yaml.next").write_text("modle: gpt-4o\n")
    out = hermes("config", "edit", env=env)
    assert out.returncode == 1 and out.stdout.strip() == f"{path}: unknown key 'modle' (did you mean 'model'?)"
    assert path.read_text().startswith("# hermes config: `hermes config show` lists every key")
    path.write_text("model: gpt-4o\n")
    (hermes_home / "config.yaml.next").write_text("agent:\n  max_turns: 12\n")
    out = hermes("config", "edit", env=env)
    assert out.returncode == 0 and out.stdout.strip() == f"ok: {path}", out.stderr
    assert yaml.safe_load(path.read_text()) == {"model": "gpt-4o", "agent": {"max_turns": 12}}
    out = hermes("config", "edit", env={"EDITOR": "no-such-editor", "VISUAL": ""})
    assert out.returncode == 1 and out.stderr.startswith("hermes: error: cannot open an editor (no-such-editor: ")
    assert out.stderr.strip().endswith(f"set EDITOR, or edit {path} yourself")
