"""Skill bundles (hermes-agent's): a file in the data folder's ``skill-bundles/`` names skills that one chat command
loads together, ``/NAME``, with an instruction above them if it has one::

    name: backend-dev
    description: Backend feature work
    skills: [code-review, test-first]
    instruction: Review the diff before you merge.

A bundle wins over a skill of the same name (it was made to mean that). A file that cannot be read is left out with
a warning; a skill it names that is not there is said when the bundle is loaded."""

from __future__ import annotations

import logging
import re
from pathlib import Path

log = logging.getLogger(__name__)


class BundleError(Exception):
    """A one-line reason a bundle cannot be made or removed."""


def folder() -> Path:
    from hermes.host.paths import data_dir

    return data_dir() / "skill-bundles"


def slug(name: str) -> str:
    """``Backend Dev`` -> ``backend-dev``: the command's name (hermes-agent's rule)."""
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "", name.lower().replace(" ", "-").replace("_", "-"))).strip("-")


def _load(path: Path):
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        log.warning("skill bundle %s left out: %s", path, str(exc).splitlines()[0])
        return None
    skills = data.get("skills") if isinstance(data, dict) else None
    names = [str(s).strip() for s in skills if str(s).strip()] if isinstance(skills, list) else []
    name = str(data.get("name") or path.stem).strip() if isinstance(data, dict) else ""
    if not names or not slug(name):
        log.warning("skill bundle %s left out: it needs a name and a list of skills", path)
        return None
    return {"name": slug(name), "description": str(data.get("description") or "").strip() or
            f"{len(names)} skills: {', '.join(names)}", "skills": names,
            "instruction": str(data.get("instruction") or "").strip(), "path": str(path)}


def bundles() -> dict:
    """name -> bundle (``description``, ``skills``, ``instruction``, ``path``), from the folder's YAML files."""
    try:
        paths = sorted(p for p in folder().iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    except OSError:
        return {}
    return {b["name"]: b for b in map(_load, paths) if b is not None}


def save(name: str, skills: list, description: str = "", instruction: str = "") -> Path:
    import yaml

    from hermes.host.files import atomic_write

    command = slug(name)
    if not command or not skills:
        raise BundleError("a bundle needs a name (letters, digits, -) and at least one skill")
    if command in bundles():
        raise BundleError(f"a bundle {command!r} exists already ({bundles()[command]['path']}); delete it first")
    path = folder() / f"{command}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"name": command, "description": description, "skills": list(skills), "instruction": instruction}
    atomic_write(path, yaml.safe_dump({k: v for k, v in data.items() if v}, sort_keys=False, allow_unicode=True))
    return path


def delete(name: str) -> Path:
    found = bundles().get(slug(name))
    if found is None:
        raise BundleError(f"no skill bundle {name!r}; there are: {', '.join(bundles()) or 'none'}")
    Path(found["path"]).unlink()
    return Path(found["path"])
