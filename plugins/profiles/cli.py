"""``hermes profile``: make, list, choose, rename, export, import and delete profiles (hermes-agent's ``hermes
profile``)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from hermes.cli.app import Fail, echo_json, program
from hermes.cli.entry import KEPT_PROFILE as KEPT, PROFILE_NAME, profile_name, profiles_root
from plugins.profiles.alias import aliases

CONFIG_FILES = ("config.yaml", ".env", "SOUL.md")  # what --clone copies, with the skills
NOT_CLONED = {"profiles", KEPT, "locks", "backups", "checkpoints", "__pycache__"}  # --clone-all leaves these out


def folders(name: str) -> tuple:
    """(config folder, data folder) of a profile: one folder for a profile; for ``default`` the data folder
    holding the profiles, and platformdirs' config folder beside it when the data folder is platformdirs'."""
    root = Path(profiles_root())
    if name != "default":
        return root / name, root / name
    import platformdirs

    data = root.parent
    own = data == Path(platformdirs.user_data_dir("hermes"))
    return (Path(platformdirs.user_config_dir("hermes")) if own else data), data


def kept_file() -> Path:
    return Path(profiles_root()).parent / KEPT


def kept() -> str:
    try:
        return kept_file().read_text(encoding="utf-8").strip() or "default"
    except (OSError, UnicodeDecodeError):
        return "default"


def names() -> list:
    try:
        found = sorted(e.name for e in os.scandir(profiles_root()) if e.is_dir() and valid(e.name))
    except OSError:
        found = []
    return ["default", *found]


def valid(name: str) -> bool:
    return bool(name) and set(name) <= PROFILE_NAME and name[0].isalnum() and len(name) <= 64


def existing(name: str) -> str:
    """``name`` (lowercased, as hermes-agent takes it) if that profile is there, else a one-line error."""
    name = name.strip().lower()
    if name != "default" and not (valid(name) and folders(name)[1].is_dir()):
        from kernel.hints import did_you_mean

        raise Fail(f"no profile '{name}'{did_you_mean(name, names()) or ''}; `{program()} profile list` shows them")
    return name


def running(name: str) -> str:
    """What runs on a profile's folder now and would lose it under it ("" for nothing): its gateway."""
    from plugins.gateway.sending import holder

    held = holder(folders(name)[1])
    return "" if held is None else f"its gateway runs (pid {held or '?'})"


def describe(name: str) -> dict:
    """What ``list`` and ``show`` say of a profile."""
    import yaml

    config, data = folders(name)
    model = ""
    try:
        document = yaml.safe_load((config / "config.yaml").read_text(encoding="utf-8")) or {}
        model = document.get("model") if isinstance(document, dict) else ""
        model = model.get("default") if isinstance(model, dict) else model
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        pass
    return {"name": name, "current": name == profile_name(), "active": name == kept(), "model": str(model or ""),
            "folder": str(data), "config": str(config / "config.yaml"),
            "sessions": (data / "state.db").is_file(), "env": (config / ".env").is_file(), "aliases": aliases(name)}


@click.group()
def profile():
    """Profiles: agents side by side, each with its own config, keys, sessions and memory (`hermes -p NAME`)."""


@profile.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def list_(as_json: bool):
    """Every profile; * marks the one this command runs as."""
    rows = [describe(name) for name in names()]
    if as_json:
        echo_json(rows)
        return
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        note = " (active: `profile use`)" if row["active"] and row["name"] != "default" else ""
        click.echo(f"{'*' if row['current'] else ' '} {row['name']:<{width}}  {row['model'] or '-':<24}  "
                   f"{row['folder']}{note}")


@profile.command("show")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
def show(name: "str | None", as_json: bool):
    """One profile (else the one this command runs as): its folder, config and model."""
    row = describe(existing(name) if name else profile_name())
    if as_json:
        echo_json(row)
        return
    for key in ("name", "model", "folder", "config", "aliases"):
        click.echo(f"{key + ':':<8} {(', '.join(row[key]) if isinstance(row[key], list) else row[key]) or '-'}")
    plain = row["name"] == kept() or row["name"] == "default" and kept() not in names()  # what `hermes ...` runs as
    click.echo(f"{'runs:':<8} `{program()}{'' if plain else ' -p ' + row['name']} ...`")


@profile.command("create")
@click.argument("name")
@click.option("--clone", is_flag=True,
              help="Copy config.yaml, .env, SOUL.md and the skills of the profile this runs as.")
@click.option("--clone-from", metavar="PROFILE", help="Copy them from this profile instead.")
@click.option("--clone-all", is_flag=True, help="Copy everything: sessions, memory, cron jobs too.")
@click.option("--alias", "with_alias", is_flag=True, help="A command named NAME that runs `hermes -p NAME`.")
def create(name: str, clone: bool, clone_from: "str | None", clone_all: bool, with_alias: bool):
    """A new profile, empty or copied from another."""
    name = name.strip().lower()
    if not valid(name) or name == "default":
        raise Fail(f"'{name}' cannot name a profile: lowercase letters, digits, '-' and '_', at most 64, "
                   "not 'default'")
    import shutil

    target = folders(name)[1]
    if target.exists():
        raise Fail(f"profile '{name}' is there already ({target})")
    source = existing(clone_from) if clone_from else profile_name() if clone or clone_all else None
    config, data = folders(source) if source else (None, None)
    partial = target.with_name(f".{name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        if clone_all:
            for entry in data.iterdir():
                _copy(entry, partial / entry.name, leave_out=NOT_CLONED)
        if source:
            for file in CONFIG_FILES:
                _copy(config / file, partial / file)
            _copy(data / "skills", partial / "skills")
        os.replace(partial, target)  # a profile is there whole or not at all
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise Fail(f"profile '{name}' not made: {exc.strerror or exc} ({getattr(exc, 'filename', '') or target})")
    said = (f" from '{source}'" + (" (everything)" if clone_all else " (config, keys, identity, skills)")
            if source else "")
    click.echo(f"Made profile '{name}'{said} in {target}. Use it with `{program()} -p {name} ...` "
               f"or `{program()} profile use {name}`.")
    if with_alias:
        _alias(name, name)


def _copy(source: Path, target: Path, leave_out: set = frozenset()) -> None:
    import shutil

    if source.name in leave_out or not (source.exists() or source.is_symlink()) or target.exists():
        return
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, target, symlinks=True, ignore=lambda folder, found: [n for n in found if n in leave_out
                                                                                  or n.endswith((".lock", ".pid"))])
    else:
        shutil.copy2(source, target, follow_symlinks=False)


def _alias(alias: str, name: str) -> None:
    from plugins.profiles.alias import make, on_path

    if not valid(alias):
        raise Fail(f"'{alias}' cannot name a command: lowercase letters, digits, '-' and '_'")
    path, other = make(alias, name)
    if other:
        raise Fail(f"no alias '{alias}': a command of that name is there already ({other}); `--name` gives another")
    click.echo(f"`{alias} ...` runs `{program()} -p {name} ...` ({path})" +
               ("" if on_path() else f"; {path.parent} is not on PATH: add it to your shell's profile"))


@profile.command("alias")
@click.argument("name")
@click.option("--name", "alias", metavar="ALIAS", help="The command's name (default: the profile's).")
@click.option("--remove", is_flag=True, help="Remove the alias instead.")
def alias_(name: str, alias: "str | None", remove: bool):
    """A command that runs as a profile: `coder chat` for `hermes -p coder chat` (in ~/.local/bin)."""
    from plugins.profiles import alias as aliases

    name = existing(name)
    if not remove:
        _alias(alias or name, name)
        return
    gone = [a for a in ([alias] if alias else aliases.aliases(name)) if aliases.remove(a)]
    if not gone:
        raise Fail(f"no alias of profile '{name}' to remove")
    click.echo(f"Removed {', '.join(gone)}.")


@profile.command("export")
@click.argument("name")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="The archive, or a folder for it "
              "(default: NAME.tar.gz here).")
def export_(name: str, output: "Path | None"):
    """A profile in one .tar.gz to take to another machine (hermes-agent's format); its keys stay here."""
    from plugins.profiles.archive import ArchiveError, export

    name = existing(name)
    target = (output or Path(".")).expanduser().resolve()
    target = target / f"{name}.tar.gz" if target.is_dir() else target
    if target.exists():
        raise Fail(f"{target} is there already; name another (-o)")
    config, data = folders(name)
    try:
        count = export(name, [data, *([config] if config != data else [])], target)
    except ArchiveError as exc:
        raise Fail(str(exc)) from None
    click.echo(f"Exported profile '{name}' ({count} files) to {target}. Its keys (.env, sign-ins) are not in it: "
               f"`{program()} profile import {target.name}` on the other machine, then set them there.")


@profile.command("import")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", help="The profile's name here (default: the name of the archive's folder).")
def import_(archive: Path, name: "str | None"):
    """A profile from an archive of `profile export` (hermes-agent's too)."""
    import shutil

    from plugins.profiles.archive import ArchiveError, top_folder, unpack

    try:
        name = (name or top_folder(archive)).strip().lower()
    except ArchiveError as exc:
        raise Fail(str(exc)) from None
    if not valid(name) or name == "default":
        raise Fail(f"'{name}' cannot name a profile here; --name gives it another")
    target = folders(name)[1]
    if target.exists():
        raise Fail(f"profile '{name}' is there already ({target}); --name gives the import another name")
    partial = target.with_name(f".{name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        unpack(archive, partial)
        os.replace(partial, target)  # there whole or not at all
    except (ArchiveError, OSError, EOFError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise Fail(f"{archive}: not imported: {getattr(exc, 'strerror', None) or exc}") from None
    click.echo(f"Imported profile '{name}' into {target}. Its keys were not in the archive: "
               f"`{program()} -p {name} setup` asks for them.")


@profile.command("use")
@click.argument("name")
def use(name: str):
    """Run every command as this profile from now on (`default`: as none); `-p` still chooses another."""
    from hermes.host.files import atomic_write

    name = existing(name)
    if name == "default":
        kept_file().unlink(missing_ok=True)
    else:
        atomic_write(kept_file(), name + "\n")
    click.echo(f"Commands run as profile '{name}' now" + (f" ({folders(name)[1]})." if name != "default" else "."))


@profile.command("rename")
@click.argument("old")
@click.argument("new")
def rename(old: str, new: str):
    """Give a profile another name (its folder moves)."""
    old, new = existing(old), new.strip().lower()
    if old == "default" or not valid(new) or new == "default":
        raise Fail("the default profile keeps its name" if old == "default" else
                   f"'{new}' cannot name a profile: lowercase letters, digits, '-' and '_', at most 64")
    if folders(new)[1].exists():
        raise Fail(f"profile '{new}' is there already")
    if busy := running(old):
        raise Fail(f"profile '{old}' not renamed: {busy}; stop it first")
    try:
        os.rename(folders(old)[1], folders(new)[1])
    except OSError as exc:
        raise Fail(f"profile '{old}' not renamed: {exc.strerror or exc}") from None
    from plugins.profiles.alias import make, remove

    for alias in aliases(old):  # each runs the new name; the one named as the profile is named anew
        remove(alias)
        make(new if alias == old else alias, new)
    if kept() == old:
        from hermes.host.files import atomic_write

        atomic_write(kept_file(), new + "\n")
    click.echo(f"Renamed profile '{old}' to '{new}'.")


@profile.command("delete")
@click.argument("name")
@click.option("-y", "--yes", is_flag=True, help="Do not ask.")
def delete(name: str, yes: bool):
    """Delete a profile's folder: its config, keys, sessions and memory."""
    import shutil

    from plugins.asking import confirm

    name = existing(name)
    if name == "default":
        raise Fail("the default profile is the data folder itself: it is not deleted (`hermes backup` keeps a copy)")
    if name == profile_name():
        raise Fail(f"this command runs as profile '{name}': delete it as another "
                   f"(`{program()} -p default profile delete {name}`)")
    folder = folders(name)[1]
    if busy := running(name):
        raise Fail(f"profile '{name}' not deleted: {busy}; stop it first")
    if not yes:
        confirm(f"Delete profile '{name}' ({folder}): its config, keys, sessions and memory?",
                f"profile '{name}' not deleted")
    shutil.rmtree(folder)
    from plugins.profiles.alias import remove

    for alias in aliases(name):
        remove(alias)
    if kept() == name:
        kept_file().unlink(missing_ok=True)
    click.echo(f"Deleted profile '{name}'" + (" (commands run as default again)." if kept() == "default" else "."))
