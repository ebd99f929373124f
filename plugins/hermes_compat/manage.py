"""``hermes plugins install NAME_OR_PATH [--enable] [-- PIP_ARGS]`` and
``hermes plugins uninstall NAME``.

Install runs ``pip`` of the interpreter hermes runs on (``sys.executable -m
pip``), so plugins land in the same environment. What changed is worked out
from the installed distributions before and after (added, upgraded, new
plugin entry points) and printed. The environment is never left broken:

* pip installs each package atomically, but a failed install may already have
  installed some dependencies: those are uninstalled again, and upgraded ones
  are put back to their old version (best effort; anything that could not be
  restored is named);
* after a successful install hermes itself must still import (a plugin may
  drag in an incompatible click or pluggy); if it does not, the same rollback
  runs and the command fails.

A local folder that is a hermes directory plugin (``__init__.py``, no
``pyproject.toml``/``setup.py``) is copied into ``$HERMES_HOME/plugins/``
instead. ``--enable`` adds the new plugins to ``plugins.enabled``.

Uninstall removes a distribution that provides hermes plugins (or a distro),
or a plugin folder. It refuses hermes itself and its requirements, and any
package that brings no plugin: pip does not check who else needs a package.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

if TYPE_CHECKING:
    import subprocess

PLUGIN_GROUPS = ("hermes.plugins", "hermes_agent.plugins", "hermes_agent.memory_providers",
                 "hermes_agent.model_providers", "hermes.memory_provider")
PROTECTED = {"hermes_kernel", "pip", "setuptools", "pluggy", "click", "platformdirs", "pyyaml"}
HEALTH_CHECK = "import hermes.cli.app, kernel.agent, hermes.host.plugins, pluggy, click, yaml"


def _norm(name: str) -> str:
    return name.replace("-", "_").replace(".", "_").lower()


def installed() -> dict:
    """norm name -> (name, version) of every distribution on ``sys.path``."""
    import site
    from importlib import metadata

    found: dict = {}
    extra = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []  # pip may fall back to --user
    for dist in metadata.distributions(path=list(sys.path) + extra):
        name = dist.metadata["Name"] or ""
        found.setdefault(_norm(name), (name, dist.version))
    return found


def plugin_entry_points() -> dict:
    """norm dist name -> [(group, plugin name), ...]."""
    from hermes.host.plugins import entry_points

    out: dict = {}
    for group in PLUGIN_GROUPS:
        for ep in entry_points(group):
            out.setdefault(_norm(ep.dist), []).append((group, ep.name))
    return out


def _required_by_hermes() -> set:
    """Norm names of the distributions hermes itself requires (its direct requirements)."""
    from importlib import metadata

    try:
        requires = metadata.requires("hermes-kernel") or []
    except metadata.PackageNotFoundError:
        return set()
    out = set()
    for req in requires:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if match and "extra" not in req.partition(";")[2]:  # not the test extras
            out.add(_norm(match.group(1)))
    return out


def _provides_distro(dist: str) -> bool:
    from hermes.host.distro import GROUP
    from hermes.host.plugins import entry_points

    return any(_norm(ep.dist) == dist for ep in entry_points(GROUP))


def _pip(*args: str) -> subprocess.CompletedProcess:
    import subprocess  # here, as shutil below: every command imports this module, to list `hermes plugins install`

    from hermes.host.plugins import forget_entry_points

    cmd = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check"]
    try:
        return subprocess.run(cmd, capture_output=True, text=True)
    finally:
        forget_entry_points()  # what pip changed is read afresh


def _diff(before: dict, after: dict) -> tuple:
    added = {k: after[k] for k in after if k not in before}
    changed = {k: (before[k], after[k]) for k in after if k in before and before[k][1] != after[k][1]}
    removed = {k: before[k] for k in before if k not in after}
    return added, changed, removed


def _rollback(before: dict, pip_args: tuple) -> list:
    """Undo what a failed or harmful install changed; returns what could not be undone."""
    added, changed, removed = _diff(before, installed())
    left = []
    if added:
        res = _pip("uninstall", "-y", *[name for name, _ in added.values()])
        if res.returncode != 0:
            left += [f"{name} {version} (added)" for name, version in added.values()]
    for old, _new in changed.values():
        res = _pip("install", "--no-deps", f"{old[0]}=={old[1]}", *pip_args)
        if res.returncode != 0:
            left.append(f"{old[0]} (now {_new[1]}, was {old[1]})")
    for name, version in removed.values():
        res = _pip("install", "--no-deps", f"{name}=={version}", *pip_args)
        if res.returncode != 0:
            left.append(f"{name} {version} (removed)")
    return left


def _healthy() -> Optional[str]:
    import subprocess

    res = subprocess.run([sys.executable, "-c", HEALTH_CHECK], capture_output=True, text=True)
    if res.returncode == 0:
        return None
    lines = (res.stderr or res.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit status {res.returncode}"


def _save_enabled(names: list, enable: bool) -> Optional[Path]:
    from hermes.host.config import ConfigError, load_config
    from plugins.config_command.edit import EditError, add_to_list, edit, get, path_of

    try:
        cfg = load_config()
    except ConfigError as exc:
        _fail(f"{exc} (plugins.enabled not changed)")

    def change(document):
        for name in names:
            if enable:
                add_to_list(document, "plugins.enabled", name, remove_from="plugins.disabled")
            elif isinstance(get(document, "plugins.enabled"), list):
                while name in get(document, "plugins.enabled"):
                    get(document, "plugins.enabled").remove(name)

    try:
        edit(path := path_of(cfg), change)
    except (OSError, EditError) as exc:
        _fail(f"{exc} (plugins.enabled not changed)")
    return path


def _fail(message: str) -> None:
    from hermes.cli.app import Fail

    raise Fail(message)


_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")  # \Z: "$" matches before a final newline too


def _folder_plugin(name: str) -> Optional[tuple]:
    """``(folder, key)`` of the user plugin folder named ``name`` (its key, as
    ``plugins list`` shows it, or its path under the plugins folder), found by
    the same scan that discovers them: never a path the name merely points at
    (``..``, ``/x``, ``""``)."""
    from hermes.host.paths import data_dir

    from plugins.hermes_compat.discovery import scan_directory

    root = data_dir() / "plugins"
    for path, key, _manifest in scan_directory(root, "user"):
        if name in (key, path.relative_to(root).as_posix()):
            return path, key
    return None


def _is_directory_plugin(path: Path) -> bool:
    return path.is_dir() and (path / "__init__.py").is_file() and not any(
        (path / f).exists() for f in ("pyproject.toml", "setup.py", "setup.cfg"))


def _install_directory(path: Path, enable: bool) -> None:
    import shutil

    from hermes.host.paths import data_dir

    from plugins.hermes_compat.context import parse_manifest

    manifest = parse_manifest(path, path.name, "", "user")
    name = manifest.name if _SAFE_NAME.match(manifest.name) else path.name
    if not _SAFE_NAME.match(name):  # the name becomes a folder under $HERMES_HOME/plugins
        _fail(f"{path}: cannot tell a plugin folder name (plugin.yaml name {manifest.name!r}); rename the folder")
    dest = data_dir() / "plugins" / name
    if dest.exists():
        _fail(f"{dest} already exists; uninstall {name} first")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(path, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    click.echo(f"copied directory plugin {name} to {dest}")
    if enable:
        click.echo(f"enabled: {name} (saved in {_save_enabled([name], True)})")
    else:
        click.echo(f"enable it with: hermes plugins enable {name}")


@click.command("install")
@click.argument("target", metavar="NAME_OR_PATH")
@click.option("--enable", is_flag=True, help="Enable the plugins the new distributions provide.")
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- PIP_ARGS...]")
def install_command(target: str, enable: bool, pip_args: tuple):
    """Install a plugin package with pip into hermes' own environment."""
    path = Path(target).expanduser()
    if path.exists():
        if _is_directory_plugin(path):
            _install_directory(path.resolve(), enable)
            return
        target = str(path.resolve())
    before = installed()
    before_eps = plugin_entry_points()
    click.echo(f"installing {target} with {Path(sys.executable).name} -m pip ...", err=True)
    try:
        res = _pip("install", "--no-input", target, *pip_args)
    except KeyboardInterrupt:  # pip may have stopped half way: undo what it did, then stop
        from hermes.cli.app import EXIT_INTERRUPTED, Fail

        left = _rollback(before, pip_args)
        raise Fail(f"interrupted; rolled back, except: {', '.join(left)}" if left else
                   "interrupted; the environment is unchanged", EXIT_INTERRUPTED) from None
    problem = None
    if res.returncode != 0:
        tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-5:])
        problem = f"pip could not install {target} (exit status {res.returncode}):\n{tail}"
    else:
        broken = _healthy()
        if broken:
            problem = f"installing {target} broke hermes ({broken})"
    if problem:
        left = _rollback(before, pip_args)
        if left:
            _fail(f"{problem}\nrolled back, except: {', '.join(left)}")
        _fail(f"{problem}\nthe environment is unchanged")

    added, changed, removed = _diff(before, installed())
    if not (added or changed or removed):
        click.echo(f"{target}: already installed, nothing changed")
        if enable:  # enabling what an already installed distribution provides is still asked for
            added = {d: dists_now[d] for d in [_norm(Path(target).name.split("-")[0]), _norm(target)]
                     if d in (dists_now := installed())}
    for name, version in added.values():
        click.echo(f"added: {name} {version}")
    for old, new in changed.values():
        click.echo(f"upgraded: {new[0]} {old[1]} -> {new[1]}")
    for name, version in removed.values():
        click.echo(f"removed: {name} {version}")
    after_eps = plugin_entry_points()
    new_plugins = []
    for dist in list(added) + list(changed):
        for group, name in after_eps.get(dist, []):
            fresh = (group, name) not in before_eps.get(dist, []) or dist in changed
            if fresh or enable:
                new_plugins.append(name)
                click.echo(f"{'new plugin' if fresh else 'plugin'}: {name} ({group})")
    if (added or changed) and not any(after_eps.get(d) or _provides_distro(d) for d in list(added) + list(changed)):
        left = _rollback(before, pip_args)  # left installed, `uninstall` would refuse it: pip's to manage
        _fail(f"{target} holds no hermes plugin or distro; " + (f"rolled back, except: {', '.join(left)}" if left
              else "the environment is unchanged (install other packages with pip)"))
    if enable and new_plugins:
        click.echo(f"enabled: {', '.join(new_plugins)} (saved in {_save_enabled(new_plugins, True)})")
    elif new_plugins:
        off = [name for name in new_plugins if _statuses().get(name) != "enabled"]
        click.echo(f"enable with: hermes plugins enable {off[0]}" if off else
                   f"enabled: {', '.join(new_plugins)} (installed plugins are on)")


def _statuses() -> dict:
    """Plugin name -> the status ``plugins list`` gives it now (the new plugins not imported)."""
    from hermes.cli.app import App
    from hermes.host.plugins import PluginHost

    app = click.get_current_context().find_object(App) or App()
    host = PluginHost.discover(app.config, distro=app.distro, import_third_party=False, warn_unknown=False)
    return {rec.name: rec.status for rec in host.records}


@click.command("uninstall")
@click.argument("name")
def uninstall_command(name: str):
    """Uninstall a plugin: a distribution, a plugin name, or a plugin folder."""
    import shutil

    dists = installed()
    eps = plugin_entry_points()
    dist = _norm(name) if _norm(name) in dists else None
    if dist is None:
        owners = [d for d, items in eps.items() if any(n == name for _g, n in items)]
        dist = owners[0] if owners else None
    if dist is None:
        found = _folder_plugin(name)
        if found is not None:
            folder, key = found
            if folder.is_symlink():
                folder.unlink()  # a linked plugin: remove the link, not what it points at
            else:
                shutil.rmtree(folder)
            click.echo(f"removed directory plugin {key} ({folder})")
            _save_enabled(sorted({key, name}), False)
            return
        _fail(f"no installed plugin or distribution named '{name}' (see `hermes plugins list`)")
    if dist in PROTECTED or dist in _required_by_hermes():
        _fail(f"{dists[dist][0]} is part of hermes itself; refusing to uninstall it")
    if not eps.get(dist) and not _provides_distro(dist):
        # pip does not check who else needs a package: removing an arbitrary one could break hermes
        _fail(f"{dists[dist][0]} provides no hermes plugin or distro; use pip to remove other packages")
    real, version = dists[dist]
    plugins = [n for _g, n in eps.get(dist, [])]
    res = _pip("uninstall", "-y", real)
    if res.returncode != 0 or _norm(real) in installed():
        tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-3:])
        _fail(f"pip could not uninstall {real}: {tail}")
    click.echo(f"removed: {real} {version}")
    for plugin in plugins:
        click.echo(f"removed plugin: {plugin}")
    if plugins:
        _save_enabled(plugins, False)


def add_commands(cli) -> None:
    group = cli.commands.get("plugins")
    if not isinstance(group, click.Group):
        return
    for command in (install_command, uninstall_command):
        if command.name not in group.commands:
            group.add_command(command)
