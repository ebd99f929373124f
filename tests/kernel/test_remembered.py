"""Remembered outputs are never stale (issue 22, item 3; issue 23, item 3):
``hermes --help`` and ``hermes plugins list`` are printed again from the last
rendering only while nothing they depend on changed. One test for each way a
dependency can change, each through the console script."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile

import pytest

from tests.conftest import ROOT
from tests.kernel.fakedist import make_dist
from tests.kernel.test_startup import _help

GREETER = '''
    import click
    from kernel import hookimpl

    @hookimpl
    def register_commands(cli, config):
        @cli.command()
        def greet():
            """Say hello from a plugin."""
            click.echo("hello")
    '''


def _status(listing: str, name: str) -> str:
    return next(line.split()[1] for line in listing.splitlines() if line.startswith(f"{name} "))


@pytest.fixture
def site(tmp_path, hermes_home):
    folder = tmp_path / "site"
    folder.mkdir()
    return folder, {"HERMES_HOME": str(hermes_home), "PYTHONPATH": f"{ROOT}{os.pathsep}{folder}", "COLUMNS": "80"}


def test_a_plugin_edited_to_fail_at_import_is_listed_as_an_error(site):
    folder, env = site
    make_dist(folder, "hermes-shaky", "1.0", {"shaky": ("hermes_shaky_mod", "X = 1\n")})
    assert _status(_help(env, "plugins", "list")[0], "shaky") == "enabled"
    again, mods = _help(env, "plugins", "list")
    assert _status(again, "shaky") == "enabled" and "click" not in mods  # remembered
    (folder / "hermes_shaky_mod.py").write_text("raise RuntimeError('broken on purpose')\n")  # the folder keeps its time
    listed, mods = _help(env, "plugins", "list")
    assert _status(listed, "shaky") == "error" and "broken on purpose" in listed, listed
    (folder / "hermes_shaky_mod.py").write_text("X = 2\n")
    assert _status(_help(env, "plugins", "list")[0], "shaky") == "enabled"


def _replace_in_place(path, text, when):  # cp -p: the same file, its old time
    path.write_text(text)
    os.utime(path, ns=when)


def _replace_by_rename(path, text, when):  # rsync -t: a new file renamed over it, its old time
    part = path.with_name(".config.yaml.part")
    part.write_text(text)
    os.utime(part, ns=when)
    os.replace(part, path)


def _replace_from_tar(path, text, when):  # tar x: the archived file, its old time
    source = path.with_name("from-tar")
    source.mkdir()
    (source / path.name).write_text(text)
    os.utime(source / path.name, ns=when)
    archive = path.with_name("config.tar")
    with tarfile.open(archive, "w") as tar:
        tar.add(source / path.name, arcname=path.name)
    with tarfile.open(archive) as tar:
        tar.extractall(path.parent, filter="data")


@pytest.mark.parametrize("replace", [_replace_in_place, _replace_by_rename, _replace_from_tar],
                         ids=["cp -p", "rsync -t", "tar x"])
def test_a_config_replaced_with_its_old_time_and_size_is_noticed(replace, site, hermes_home):
    _, env = site
    config = hermes_home / "config.yaml"
    config.write_text("plugins:\n  disabled: [memory]\n")
    whole = (int(os.stat(config).st_mtime) - 60) * 10**9  # a whole second, which tar keeps exactly
    os.utime(config, ns=(whole, whole))
    before = os.stat(config)
    listed, _ = _help(env, "plugins", "list")
    assert _status(listed, "memory") == "disabled" and _status(listed, "skills") == "enabled"
    replace(config, "plugins:\n  disabled: [skills]\n", (before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(config)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    listed, _ = _help(env, "plugins", "list")
    assert _status(listed, "skills") == "disabled" and _status(listed, "memory") == "enabled", listed


def test_help_sees_commands_added_through_pythonpath_and_drops_those_of_a_disabled_plugin(site, tmp_path,
                                                                                         hermes_home):
    folder, env = site
    other = tmp_path / "other"
    other.mkdir()
    make_dist(other, "hermes-greeter", "1.0", {"greeter": ("hermes_greeter_mod", GREETER)})
    plain, _ = _help(env, "--help")
    assert "greet" not in plain
    assert _help(env, "--help")[1] >= {"hermes.cli.entry"}  # remembered now
    with_other = {**env, "PYTHONPATH": f"{env['PYTHONPATH']}{os.pathsep}{other}"}
    shown, mods = _help(with_other, "--help")
    assert "Say hello from a plugin. (plugin)" in shown and "click" in mods  # never run, yet listed
    assert _help(with_other, "--help")[0] == shown
    (hermes_home / "config.yaml").write_text("plugins:\n  disabled: [greeter]\n")
    assert "greet" not in _help(with_other, "--help")[0]
    assert _help(env, "--help")[0] == plain


def test_help_sees_a_wheel_pip_installs_and_uninstalls(tmp_path, hermes_home):
    """A real environment, a real wheel, pip's own install and uninstall between two ``--help``."""
    from tests.wheels import build_wheel

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    ours = [p for p in sys.path if p.endswith("site-packages")]  # hermes' own dependencies, after the venv's
    with open(os.path.join(purelib, "hermes-tests.pth"), "w") as f:
        f.write("\n".join([str(ROOT), *ours]) + "\n")
    wheel = build_wheel(tmp_path, "hermes-greeter", "1.0", {"hermes_greeter_mod.py": GREETER.replace("\n    ", "\n")},
                        entry_points={"hermes.plugins": {"greeter": "hermes_greeter_mod"}})
    env = {**os.environ, "HERMES_HOME": str(hermes_home), "COLUMNS": "80"}
    env.pop("PYTHONPATH", None)

    def help_text() -> str:
        done = subprocess.run([str(python), "-c", "import sys; sys.argv = ['hermes', '--help']; "
                               "from hermes.cli.entry import main; main()"], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def pip(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "pip", "--python", str(python), *args, "--quiet",
                        "--disable-pip-version-check"], check=True, capture_output=True, timeout=120)

    before = help_text()
    assert "greet" not in before and help_text() == before
    pip("install", "--no-index", "--no-deps", str(wheel))
    assert "Say hello from a plugin. (plugin)" in help_text()
    pip("uninstall", "--yes", "hermes-greeter")
    assert help_text() == before
