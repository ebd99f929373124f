"""A default install's first ``hermes --help`` and ``plugins list`` print the built-ins' commands and records as
shipped (plugins/commands/first-run.json) without importing the plugins; anything installed, configured or selected
besides makes them load, as before. Run as a user runs them: a subprocess, on a site of only hermes and its
dependencies (the example plugins the test command installs left out)."""

import json
import os
import subprocess
import sys
import sysconfig
from importlib import metadata

import pytest

from tests.conftest import ROOT
from tests.kernel.fakedist import make_dist

HERMES = "import sys; sys.argv[0] = 'hermes'; from hermes.cli.entry import main; main()"


@pytest.fixture(scope="module")
def plain_site(tmp_path_factory):
    """site-packages as symlinks, without the distributions (and their files) that bring hermes plugins or distros
    other than hermes' own: what ``pip install hermes-kernel`` leaves."""
    purelib = sysconfig.get_paths()["purelib"]
    left_out = set()
    for dist in metadata.distributions(path=[purelib]):
        if dist.metadata["Name"] != "hermes-kernel" and any(ep.group.startswith("hermes") for ep in dist.entry_points):
            left_out.update(str(f).split("/")[0] for f in dist.files or [])
    assert left_out, "the test command installs the example plugin: this test leaves it out"
    site = tmp_path_factory.mktemp("plain-site")
    for entry in os.scandir(purelib):
        if entry.name not in left_out:
            (site / entry.name).symlink_to(entry.path)
    return site


def hermes(site, home, *args, env=None, more_path=(), imports=False):
    """(stdout, the modules imported) of ``hermes ARGS`` without site's own processing (-S): sys.path is this
    checkout, ``more_path`` and ``site``."""
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    run_env.update(HERMES_HOME=str(home), PYTHONPATH=os.pathsep.join([str(ROOT), *map(str, more_path), str(site)]),
                   **(env or {}))
    done = subprocess.run([sys.executable, "-S", *(["-X", "importtime"] if imports else []), "-c", HERMES, *args],
                          capture_output=True, text=True, env=run_env, timeout=60, cwd=home.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "import time:" in line}


def loaded(imported: set, package: str) -> bool:
    return any(name.startswith(f"{package}.") for name in imported)  # (a plugin's package line may be missing)


def test_the_shipped_file_is_what_a_load_of_the_builtins_finds():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "first_run.py"), "--check"], capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("args", [["--help"], ["plugins", "list", "--json"]])
def test_a_default_installs_first_run_prints_what_a_load_would_without_importing_the_plugins(plain_site, tmp_path,
                                                                                              args):
    fresh, imported = hermes(plain_site, tmp_path / "fresh", *args, imports=True)
    assert "hermes.cli.app" in imported and not loaded(imported, "plugins.gateway")
    assert not loaded(imported, "plugins.mcp")
    assert "hermes.host.plugins" not in imported  # nor the plugin host
    configured = tmp_path / "configured"  # a config.yaml: the plugins load to find out
    configured.mkdir()
    (configured / "config.yaml").write_text("plugins:\n  disabled: []\n")
    full, imported = hermes(plain_site, configured, *args, imports=True)
    assert loaded(imported, "plugins.gateway")
    assert fresh == full and ("gateway" in fresh and "sessions" in fresh)
    again, imported = hermes(plain_site, tmp_path / "fresh", *args, imports=True)  # remembered now: not even click
    assert again == fresh and "click" not in imported


def test_once_plugins_loaded_the_listing_is_what_the_load_found(plain_site, tmp_path):
    home, script = tmp_path / "home", tmp_path / "script.json"
    script.write_text('["hello"]')
    hermes(plain_site, home, "run", "--api-mode", "scripted", "--base-url", str(script), "hi")  # its load is kept
    listed, imported = hermes(plain_site, home, "plugins", "list", "--json", imports=True)
    assert "hermes.host.plugins" in imported  # (a built-in that failed there would be said so)
    assert [r["name"] for r in json.loads(listed)] == [r["name"] for r in json.loads(
        (ROOT / "plugins/commands/first-run.json").read_text())["records"]]


OTHER_PLUGIN = '''
import click
from kernel import hookimpl

@hookimpl
def register_commands(cli):
    @cli.command("other-hello")
    def hello():
        """Say hello from another plugin."""
'''


@pytest.mark.parametrize("besides", ["another plugin installed", "config.yaml", "HERMES_PLUGINS", "a plugin folder"])
def test_anything_installed_configured_or_selected_besides_the_builtins_loads_them(plain_site, tmp_path, besides):
    home, env, more_path = tmp_path / "home", {}, []
    if besides == "another plugin installed":
        more_path.append(tmp_path / "other-site")
        make_dist(more_path[0], "hermes-other", "1.0", {"other": ("hermes_other", OTHER_PLUGIN)})
    elif besides == "config.yaml":
        home.mkdir()
        (home / "config.yaml").write_text("plugins:\n  disabled: [gateway]\n")
    elif besides == "HERMES_PLUGINS":
        env["HERMES_PLUGINS"] = "cron"
    else:
        (home / "plugins" / "mine").mkdir(parents=True)
        (home / "plugins" / "mine" / "plugin.yaml").write_text("name: mine\nversion: 2.0\ndescription: my own\n")
        (home / "plugins" / "mine" / "__init__.py").write_text("def register(ctx):\n    pass\n")
    listed, _ = hermes(plain_site, home, "plugins", "list", "--json", env=env, more_path=more_path)
    status = {record["name"]: record["status"] for record in json.loads(listed)}
    shipped = json.loads((ROOT / "plugins" / "commands" / "first-run.json").read_text())["records"]
    shipped = {record["name"]: record["status"] for record in shipped}
    assert status != shipped
    assert {"another plugin installed": status.get("other") == "enabled",
            "config.yaml": status["gateway"] == "disabled",
            "HERMES_PLUGINS": status["gateway"] == "not enabled", "a plugin folder": "mine" in status}[besides], status
    helped, _ = hermes(plain_site, home, "--help", env=env, more_path=more_path)
    assert ("other-hello" in helped) == (besides == "another plugin installed")
    assert ("gateway" in helped) == (besides not in ("config.yaml", "HERMES_PLUGINS"))
