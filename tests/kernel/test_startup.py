"""Nothing heavy at start-up (DESIGN principle 6)."""

import json
import os
import subprocess
import sys

from tests.conftest import ROOT


def imported_after(code: str) -> set:
    probe = f"import sys; {code}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(out.stdout.split())


def test_import_kernel_is_light():
    mods = imported_after("import kernel")
    assert not {"openai", "anthropic", "pluggy", "yaml", "click", "httpx2"} & mods


def test_the_loop_imports_no_sdk():
    mods = imported_after("import kernel.agent, hermes.host.plugins, kernel.tools, hermes.cli.app")
    assert "openai" not in mods and "anthropic" not in mods


def test_cli_help_imports_no_pluggy_or_yaml():
    mods = imported_after("import hermes.cli.app")
    assert "pluggy" not in mods and "yaml" not in mods and "importlib.metadata" not in mods


def _printed_and_imported(env: dict, entry: str, *args: str) -> tuple:
    """What ``hermes ARGS`` printed and which modules it imported, run
    through ``entry`` (``hermes.cli.app``: the command line itself;
    ``hermes.cli.entry``: the console script, which may print a remembered output)."""
    probe = ("import sys, atexit; atexit.register(lambda: sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules))));"
             f" sys.argv = ['hermes', *sys.argv[1:]]; from {entry} import main; main()")
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout, set(out.stderr.rsplit("MODULES ", 1)[1].split())


def _listing_imports(env: dict, *args: str) -> tuple:
    """``hermes plugins list ARGS`` made by the command line (never a remembered output)."""
    return _printed_and_imported(env, "hermes.cli.app", "plugins", "list", *args)


def _help(env: dict, *args: str) -> tuple:
    """``hermes ARGS`` through the console script."""
    return _printed_and_imported(env, "hermes.cli.entry", *args)


def test_a_command_that_starts_no_process_imports_none_of_what_starting_one_needs(hermes_home):
    """Every plugin loads for `sessions list` (to find its command); the modules the tools, the batch pool, plugin
    installs and the HTTP server need to start a process or listen wait for those (~5 ms of every command). The
    first command of a data folder reads the entry points with importlib.metadata, which imports them itself."""
    for _ in range(2):
        _, imported = _printed_and_imported({"HERMES_HOME": str(hermes_home)}, "hermes.cli.app", "sessions", "list")
    assert "importlib.metadata" not in imported
    assert "plugins.core_tools.terminal" in imported and "plugins.serve.cli" in imported  # the plugins did load
    assert not {"subprocess", "shutil", "tempfile", "socket"} & imported


def test_an_unchanged_listing_reads_no_metadata_and_imports_no_plugin(hermes_home, tmp_path):
    from tests.kernel.fakedist import make_dist

    site = tmp_path / "site"
    site.mkdir()
    env = {"HERMES_HOME": str(hermes_home), "PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    first, _ = _listing_imports(env)
    second, mods = _listing_imports(env)
    assert second == first and "core-tools" in second
    heavy = {"importlib.metadata", "yaml", "hermes.host.plugins", "hermes.host.config", "logging", "sqlite3"}
    # of the plugins only the essential built-ins' modules, for their commands (`plugins` is one), and the helpers
    # `run` prints and reads its options through (io, re, math and base64: nothing more to import)
    essential = {"plugins", "plugins.commands", "plugins.commands.cli", "plugins.front", "plugins.commands.listing",
                 "plugins.commands.plugins_group", "plugins.commands.run", "plugins.config_command",
                 "plugins.config_command.cli", "plugins.images", "plugins.numbers", "plugins.text"}
    assert not heavy & mods and {m for m in mods if m.split(".")[0] in ("plugins", "plugins_memory",
                                                                         "plugins_providers")} == essential
    # each thing the listing depends on, changed, is seen at once
    make_dist(site, "hermes-newcomer", "0.3", {"newcomer": ("hermes_newcomer_mod", "")}, summary="just installed")
    listed, _ = _listing_imports(env)
    assert "newcomer" in listed and "just installed" in listed
    (hermes_home / "config.yaml").write_text("plugins:\n  disabled: [newcomer]\n")
    listed, _ = _listing_imports(env)
    assert [line.split()[1] for line in listed.splitlines() if line.startswith("newcomer ")] == ["disabled"]
    listed, _ = _listing_imports({**env, "HERMES_PLUGINS": "core-tools"})
    assert [line.split()[1] for line in listed.splitlines() if line.startswith("memory ")] == ["not"]  # "not enabled"
    as_json, mods = _listing_imports(env, "--json")
    assert {r["name"]: r["status"] for r in json.loads(as_json)}["newcomer"] == "disabled"


def test_a_listing_found_again_imports_only_the_plugin_sources(hermes_home):
    env = {"HERMES_HOME": str(hermes_home)}
    first, _ = _listing_imports(env)  # loads once: nothing is remembered yet
    state = hermes_home / "plugin-state.json"
    data = json.loads(state.read_text())
    del data["listing"]  # as after a config change: found again, from metadata and what the last load saw
    state.write_text(json.dumps(data))
    again, mods = _listing_imports(env)
    assert again == first and "task list, questions to the user" in again  # agent-tools' description, remembered
    imported = {m.split(".")[1] for m in mods if m.startswith(("plugins.", "plugins_memory.", "plugins_providers."))}
    # hermes-compat's discover_plugins, the essentials, and the helpers `run` builds, prints and reads its options with
    assert imported == {"hermes_compat", "commands", "config_command", "front", "images", "numbers", "text"}, imported
    compat = {m for m in mods if m.startswith("plugins.hermes_compat.")}
    assert compat == {"plugins.hermes_compat.discovery", "plugins.hermes_compat.manifests"}, compat  # no runtime
    assert "difflib" not in mods  # the did-you-means import it for a name nobody knows, not on every start


def test_help_is_printed_from_the_last_rendering_until_its_commands_change(hermes_home, tmp_path):
    from tests.kernel.fakedist import make_dist

    site = tmp_path / "site"
    site.mkdir()
    env = {"HERMES_HOME": str(hermes_home), "PYTHONPATH": f"{ROOT}{os.pathsep}{site}", "COLUMNS": "80"}
    rendered, mods = _help(env, "--help")
    assert "click" in mods and "Commands:" in rendered and "plugins" in rendered
    again, mods = _help(env, "--help")
    assert again == rendered and "click" not in mods and "hermes.cli.app" not in mods
    assert _help(env, "-h")[0] == rendered
    narrow, mods = _help({**env, "COLUMNS": "60"}, "--help")  # another width is rendered again
    assert "click" in mods and narrow != rendered and max(map(len, narrow.splitlines())) <= 58
    assert "tempfile" not in mods  # remembering what it printed costs no import of tempfile (3 ms)
    # a plugin that brings a command: once plugins load, the help shows it
    make_dist(site, "hermes-greeter", "1.0", {"greeter": ("hermes_greeter_mod", '''
        import click
        from kernel import hookimpl

        @hookimpl
        def register_commands(cli, config):
            @cli.command()
            def greet():
                """Say hello from a plugin."""
                click.echo("hello")
        ''')})
    subprocess.run([sys.executable, "-c", "from hermes.cli.app import main; main(['greet'])"], cwd=ROOT,
                   env={**os.environ, **env}, check=True, capture_output=True, timeout=60)
    updated, mods = _help(env, "--help")
    assert "click" in mods and "greet" in updated and "Say hello from a plugin. (plugin)" in updated
    cached, mods = _help(env, "--help")
    assert cached == updated and "click" not in mods
    # a distro's help is its own (its description, its plugins' commands), remembered apart
    distro = tmp_path / "mine.yaml"
    distro.write_text("name: mine\ndescription: my own agent\nplugins:\n  only: [core-tools]\n")
    as_distro = {**env, "HERMES_DISTRO": str(distro)}
    own, mods = _help(as_distro, "--help")
    assert "my own agent" in own and "greet" not in own and "click" in mods
    again, mods = _help(as_distro, "--help")
    assert again == own and "click" not in mods
    assert _help(env, "--help")[0] == updated
    distro.write_text("name: mine\ndescription: my agent, renamed\nplugins:\n  only: [core-tools]\n")
    renamed, mods = _help(as_distro, "--help")
    assert "my agent, renamed" in renamed and "click" in mods


def test_an_unchanged_listing_is_printed_again_without_click(hermes_home, tmp_path):
    from tests.kernel.fakedist import make_dist

    site = tmp_path / "site"
    site.mkdir()
    env = {"HERMES_HOME": str(hermes_home), "PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    made, mods = _help(env, "plugins", "list")
    assert "core-tools" in made and "click" in mods
    again, mods = _help(env, "plugins", "list")
    assert again == made and not {"click", "json", "hermes.cli.app", "hermes.host.plugins"} & mods
    as_json, _ = _help(env, "plugins", "list", "--json")
    json_again, mods = _help(env, "plugins", "list", "--json")
    assert json_again == as_json and "json" not in mods
    assert {r["name"] for r in json.loads(json_again)} >= {"core-tools", "memory"}
    # an install, a config change and a failure recorded by a run are each seen at once
    make_dist(site, "hermes-newcomer", "0.3", {"newcomer": ("hermes_newcomer_mod", "")}, summary="just installed")
    listed, mods = _help(env, "plugins", "list")
    assert "just installed" in listed and "click" in mods
    (hermes_home / "config.yaml").write_text("plugins:\n  disabled: [newcomer]\n")
    listed, _ = _help(env, "plugins", "list")
    assert [line.split()[1] for line in listed.splitlines() if line.startswith("newcomer ")] == ["disabled"]
    state = hermes_home / "plugin-state.json"
    data = json.loads(state.read_text())
    data["failures"] = {"core-tools": {"pre_tool_call": "RuntimeError: boom"}}
    state.write_text(json.dumps(data))
    listed, _ = _help(env, "plugins", "list")
    assert "failed in an earlier run: pre_tool_call" in listed
    # a distro's listing is remembered apart from plain hermes's
    distro = tmp_path / "mine.yaml"
    distro.write_text("name: mine\nplugins:\n  only: [core-tools]\n")
    as_distro = {**env, "HERMES_DISTRO": str(distro)}
    own, _ = _help(as_distro, "plugins", "list")
    again, mods = _help(as_distro, "plugins", "list")
    assert again == own and "click" not in mods
    assert [line.split()[1] for line in own.splitlines() if line.startswith(("core-tools ", "memory "))] == [
        "enabled", "not"]
    assert _help(env, "plugins", "list")[0] == listed


def test_a_run_that_loads_what_the_last_load_found_keeps_the_listing(hermes_home):
    env = {"HERMES_HOME": str(hermes_home)}
    _help(env, "plugins", "list")
    state = (hermes_home / "plugin-state.json").read_text()
    subprocess.run([sys.executable, "-c", "from hermes.cli.app import main; main(['skills', 'list'])"], cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT), **env}, check=True, capture_output=True, timeout=60)
    assert (hermes_home / "plugin-state.json").read_text() == state  # a load, but nothing new to remember
    _, mods = _help(env, "plugins", "list")
    assert "click" not in mods


def test_a_bare_hermes_prints_the_remembered_help_on_stderr_and_exits_2(hermes_home):
    probe = ("import sys, atexit; atexit.register(lambda: sys.stdout.write('MODULES ' + ' '.join(sorted(sys.modules))));"
             " sys.argv = ['hermes']; from hermes.cli.entry import main; main()")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HERMES_HOME": str(hermes_home), "COLUMNS": "80"}
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, env=env,
                           timeout=60) for _ in range(2)]
    assert [r.returncode for r in runs] == [2, 2] and runs[0].stderr == runs[1].stderr
    assert runs[0].stderr.startswith("Usage: hermes [OPTIONS] COMMAND [ARGS]...") and "Commands:" in runs[0].stderr
    assert "click" in runs[0].stdout.split() and "click" not in runs[1].stdout.split()  # the second one: remembered


def test_the_entry_points_are_read_once_per_install_and_kept_with_the_load_state(hermes_home, tmp_path):
    from tests.kernel.fakedist import make_dist
    from tests.kernel.test_plugins import GOOD

    site = tmp_path / "site"
    site.mkdir()
    env = {"HERMES_HOME": str(hermes_home), "PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    state_file = hermes_home / "plugin-state.json"

    def sessions_list() -> tuple:  # a command that loads every plugin: what it printed, did it read metadata
        out, mods = _printed_and_imported(env, "hermes.cli.app", "sessions", "list", "--json")
        return out, "importlib.metadata" in mods

    def kept(name: str) -> list:
        rows = json.loads(state_file.read_text())["entry_points"]["hermes.plugins"]
        return [(row["dist"], row["version"]) for row in rows if row["name"] == name]

    first, read = sessions_list()
    assert read and kept("core-tools") == [("hermes-kernel", kept("core-tools")[0][1])]  # read once, kept
    assert sessions_list() == (first, False)  # kept: no metadata parsed, not even imported
    make_dist(site, "hermes-good", "1.2.3", {"good": ("hermes_good_mod", GOOD)})  # an install moves a folder's time
    assert sessions_list() == (first, True) and kept("good") == [("hermes-good", "1.2.3")]
    state = json.loads(state_file.read_text())
    state["entry_points"]["hermes.plugins"][0]["target"] = 42  # a hand edit: the rows are read again, not trusted
    state_file.write_text(json.dumps(state))
    assert sessions_list() == (first, True) and kept("good") == [("hermes-good", "1.2.3")]
    assert json.loads(state_file.read_text())["entry_points"] != state["entry_points"]  # and kept right again
    state_file.write_text("{not json")  # damaged whole: made again, the command works
    assert sessions_list() == (first, True) and kept("good") == [("hermes-good", "1.2.3")]
