"""``hermes plugins install`` / ``uninstall`` against a throwaway virtual
environment, no network: the fixture package is packed into a wheel here
(pip installs wheels without a build backend) and installed with ``--no-index``.
One test, a few seconds (several pip runs)."""

from __future__ import annotations

import json
import os
import shutil
import tomllib
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.conftest import ROOT
from tests.wheels import build_wheel

from .conftest import FIXTURES, kernel_entry_points, write_dist

PIP_OFFLINE = ("--", "--no-index", "--no-deps")
# hermes run by the interpreter under test (the throwaway venv's, or ours)
RUNNER = "import sys, hermes.cli.app as c\nc.main(sys.argv[1:])\n"


def wheel_from_fixture(out: Path, folder: Path) -> Path:
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    files = {p.name: p.read_text() for p in folder.glob("*.py")}
    return build_wheel(out, project["name"], project["version"], files, project.get("entry-points"),
                       project.get("description", ""))


def _venv(tmp_path: Path) -> tuple:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # the project and the dev dependencies (pip, setuptools, pluggy, click) without copying them
    (site / "_hermes_dev.pth").write_text(f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n")
    write_dist(site, "hermes_kernel", "0.1.0", {"hermes.plugins": kernel_entry_points()}, "the kernel")
    return python, site


def test_install_enable_run_fail_cleanly_and_uninstall(tmp_path, hermes_home):
    python, site = _venv(tmp_path)
    env = dict(os.environ, HERMES_HOME=str(hermes_home))
    env.pop("PYTHONPATH", None)

    def hermes(*args):
        return subprocess.run([str(python), "-c", RUNNER, *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=60)

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    tally = wheel_from_fixture(wheels, FIXTURES / "pkg_tally")
    # a plugin that drags in an incompatible "click": hermes would no longer start
    clobber = build_wheel(wheels, "hermes-clobber", "1.0", {
        "hermes_clobber.py": "def register(ctx):\n    pass\n",
        "click/__init__.py": "raise ImportError('incompatible click')\n",
    }, {"hermes_agent.plugins": {"clobber": "hermes_clobber"}})

    before = sorted(p.name for p in site.iterdir())
    out = hermes("plugins", "install", tmp_path / "missing.whl", *PIP_OFFLINE)
    assert out.returncode == 1 and "pip could not install" in out.stderr, out.stderr
    assert "the environment is unchanged" in out.stderr and "Traceback" not in out.stderr
    out = hermes("plugins", "install", "hermes-not-on-any-index", *PIP_OFFLINE)
    assert out.returncode == 1 and "pip could not install hermes-not-on-any-index" in out.stderr
    out = hermes("plugins", "install", clobber, "--enable", *PIP_OFFLINE)
    assert out.returncode == 1, out.stdout
    assert "broke hermes (ImportError: incompatible click)" in out.stderr and "the environment is unchanged" in out.stderr
    assert sorted(p.name for p in site.iterdir()) == before
    assert hermes("plugins", "list", "--json").returncode == 0

    out = hermes("plugins", "install", tally, "--enable", *PIP_OFFLINE)
    assert out.returncode == 0, out.stderr
    assert "added: hermes-tally 0.1.0" in out.stdout or "added: hermes_tally 0.1.0" in out.stdout
    assert "new plugin: tally (hermes_agent.plugins)" in out.stdout
    assert "enabled: tally" in out.stdout
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json").stdout)}
    assert rows["tally"]["status"] == "enabled" and rows["tally"]["source"] == "hermes-compat"
    assert rows["tally"]["description"] == "Count words (a fixture hermes-agent plugin package)"  # its own summary
    assert hermes("plugins", "disable", "tally").returncode == 0
    out = hermes("plugins", "install", tally, "--enable", *PIP_OFFLINE)  # again: nothing to install
    assert out.returncode == 0 and "nothing changed" in out.stdout and "enabled: tally" in out.stdout, out.stdout
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json").stdout)}
    assert rows["tally"]["status"] == "enabled"

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [["tally", {"text": "one two three"}]]}, "three"]))
    out = hermes("run", "--api-mode", "scripted", "--base-url", script, "--json", "count")
    assert out.returncode == 0, out.stderr
    tools = [json.loads(m["content"]) for m in json.loads(out.stdout)["messages"] if m["role"] == "tool"]
    assert tools == [{"words": 3}]

    out = hermes("plugins", "uninstall", "hermes-kernel")
    assert out.returncode == 1 and "part of hermes itself" in out.stderr
    # a package that is no hermes plugin is not left behind (uninstall would leave it to pip)
    helper = build_wheel(wheels, "hermes-helper-lib", "1.0", {"hermes_helper_lib.py": "X = 1\n"})
    out = hermes("plugins", "install", helper, *PIP_OFFLINE)
    assert out.returncode == 1 and "holds no hermes plugin or distro; the environment is unchanged" in out.stderr
    assert not any(p.name.startswith("hermes_helper_lib") for p in site.iterdir())
    out = hermes("plugins", "uninstall", "hermes-helper-lib")
    assert out.returncode == 1 and "no installed plugin or distribution named 'hermes-helper-lib'" in out.stderr
    # a native plugin is on once installed: nothing to enable
    native = build_wheel(wheels, "hermes-native-hi", "1.0", {"hermes_native_hi.py": "X = 1\n"},
                         {"hermes.plugins": {"native-hi": "hermes_native_hi"}})
    out = hermes("plugins", "install", native, *PIP_OFFLINE)
    assert out.returncode == 0 and "enabled: native-hi (installed plugins are on)" in out.stdout, out.stderr
    assert "enable with" not in out.stdout
    assert hermes("plugins", "uninstall", "native-hi").returncode == 0
    out = hermes("plugins", "uninstall", "tally")
    assert out.returncode == 0, out.stderr
    assert "removed plugin: tally" in out.stdout
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json").stdout)}
    assert "tally" not in rows
    assert "tally" not in (hermes_home / "config.yaml").read_text()
    out = hermes("plugins", "uninstall", "tally")
    assert out.returncode == 1 and "no installed plugin" in out.stderr


def test_install_and_uninstall_a_folder_plugin(tmp_path, hermes_home):
    from .conftest import make_site

    site = make_site(tmp_path / "site")
    env = dict(os.environ, HERMES_HOME=str(hermes_home), PYTHONPATH=f"{ROOT}{os.pathsep}{site}")

    def hermes(*args):
        return subprocess.run([sys.executable, "-c", RUNNER, *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=60)

    out = hermes("plugins", "install", FIXTURES / "hxfix_dirplugin", "--enable")
    assert out.returncode == 0, out.stderr
    assert f"copied directory plugin greeter to {hermes_home / 'plugins' / 'greeter'}" in out.stdout
    assert (hermes_home / "plugins" / "greeter" / "helpers.py").is_file()
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json").stdout)}
    assert rows["greeter"]["status"] == "enabled" and rows["greeter"]["source"] == "hermes-compat"
    out = hermes("plugins", "install", FIXTURES / "hxfix_dirplugin")
    assert out.returncode == 1 and "already exists" in out.stderr
    # names that only point somewhere are no plugin: nothing outside a plugin folder is ever removed
    outside = tmp_path / "outside"
    outside.mkdir()
    for bad in ("..", ".", "", str(outside), "../config.yaml", "greeter/.."):
        out = hermes("plugins", "uninstall", bad)
        assert out.returncode == 1 and "no installed plugin" in out.stderr, (bad, out.stderr)
    assert outside.is_dir() and (hermes_home / "config.yaml").is_file()
    assert (hermes_home / "plugins" / "greeter" / "__init__.py").is_file()
    out = hermes("plugins", "uninstall", "greeter")
    assert out.returncode == 0 and "removed directory plugin greeter" in out.stdout
    assert not (hermes_home / "plugins" / "greeter").exists()
    assert "greeter" not in {r["name"] for r in json.loads(hermes("plugins", "list", "--json").stdout)}

    # a manifest name that is a path is not used as one; a category plugin goes by its key
    odd = tmp_path / "odd-plugin"
    shutil.copytree(FIXTURES / "hxfix_dirplugin", odd)
    (odd / "plugin.yaml").write_text("name: ../../escaped\n")
    out = hermes("plugins", "install", odd, "--enable")
    assert out.returncode == 0 and f"copied directory plugin odd-plugin to {hermes_home / 'plugins' / 'odd-plugin'}" \
        in out.stdout, out.stderr
    assert not (hermes_home.parent / "escaped").exists()
    rows = {r["name"]: r for r in json.loads(hermes("plugins", "list", "--json").stdout)}
    assert rows["odd-plugin"]["status"] == "enabled" and not [n for n in rows if "escaped" in n]
    shutil.copytree(FIXTURES / "hxfix_dirplugin", hermes_home / "plugins" / "greeting" / "formal")
    out = hermes("plugins", "uninstall", "greeting/formal")
    assert out.returncode == 0 and "removed directory plugin greeting/formal" in out.stdout
    assert (hermes_home / "plugins" / "greeting").is_dir() and not (hermes_home / "plugins" / "greeting" / "formal").exists()


def test_an_interrupted_install_is_rolled_back(monkeypatch, hermes_home):
    """Ctrl-C while pip runs: what pip had already installed is uninstalled again."""
    from click.testing import CliRunner

    from plugins.hermes_compat import manage

    env = {"hermes-kernel": ("hermes-kernel", "0.1.0")}
    pip_calls = []

    def fake_pip(*args):
        pip_calls.append(args)
        if args[0] == "install":
            env["half_dep"] = ("half-dep", "1.0")  # pip got this far before the interrupt
            raise KeyboardInterrupt
        if args[0] == "uninstall":
            env.pop("half_dep", None)
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(manage, "_pip", fake_pip)
    monkeypatch.setattr(manage, "installed", lambda: dict(env))
    monkeypatch.setattr(manage, "plugin_entry_points", lambda: {})
    out = CliRunner().invoke(manage.install_command, ["some-plugin"])
    assert out.exit_code == 130 and "interrupted; the environment is unchanged" in out.output
    assert pip_calls[-1][:3] == ("uninstall", "-y", "half-dep") and "half_dep" not in env
