"""Skills in the agentskills.io layout: a folder holding ``SKILL.md`` (YAML
front matter with ``name`` and ``description``, then the instructions) and
any files beside it.

Where they are found, later ones winning a name: the ones plugins register
(``register_skills``), ``$HERMES_HOME/skills/<name>/`` (hermes-agent's
layout; ``skill_manage`` writes here), the folders of ``skills.paths``, and
the project's ``.hermes/skills/`` and ``.agents/skills/`` (from the
repository root, else the working folder).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
PLUGIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}:[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")  # plugin:skill
MAX_BODY_CHARS = 40_000
MAX_DESCRIPTION_CHARS = 300


class SkillError(ValueError):
    """A skill that cannot be read or written, phrased for the user or the model."""


@dataclass
class Skill:
    name: str
    description: str
    path: Path  # its SKILL.md
    source: str  # user, project, a skills.paths folder, or the plugin that registered it

    @property
    def folder(self) -> Path:
        return self.path.parent

    def body(self) -> str:
        return split(read_text(self.path))[1]

    def files(self) -> list:
        """The other files of the skill, relative to its folder."""
        if self.path.name != "SKILL.md":
            return []
        try:
            return sorted(str(p.relative_to(self.folder)) for p in self.folder.rglob("*")
                          if p.is_file() and p != self.path and not any(part.startswith(".") for part in
                                                                         p.relative_to(self.folder).parts))
        except OSError:
            return []

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "source": self.source, "path": str(self.path)}


def read_text(path: Path, missing_ok: bool = False) -> Optional[str]:
    """The file's text; None for a missing file when ``missing_ok``; a
    SkillError for any other failure."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        if missing_ok:
            return None
        raise SkillError(f"{path}: no such file") from None
    except OSError as exc:
        raise SkillError(f"{path}: cannot read it ({exc.strerror or exc})") from None


_SIMPLE = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$")


def _front_matter(block: str) -> dict:
    """The front matter as a dict: plain ``key: value`` lines directly (most
    skills; YAML's parser would cost a millisecond each), anything fancier
    (block scalars, lists, quotes) through YAML."""
    meta = {}
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _SIMPLE.match(line)
        value = match.group(2) if match else ""
        if not match or value[:1] in ("|", ">", "[", "{", "'", '"', "&", "*", "!") or " #" in value:
            import yaml

            try:
                data = yaml.safe_load(block) or {}
            except yaml.YAMLError:
                return {}
            return data if isinstance(data, dict) else {}
        meta[match.group(1)] = value
    return meta


def split(text: str) -> tuple:
    """``(front matter dict, body)``; a file without front matter is all body."""
    if not text.startswith("---"):
        return {}, text.strip()
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text.strip()
    return _front_matter(text[3:end]), text[end + 4:].lstrip("-").strip()


def load(path: Path, source: str, name: Optional[str] = None) -> Optional[Skill]:
    """The skill at ``path`` (a SKILL.md or its folder), or None when it has none."""
    path = Path(path)
    if path.is_dir():
        path = path / "SKILL.md"
    return _parse(path, source, name)


def _parse(path: Path, source: str, name: Optional[str] = None) -> Optional[Skill]:
    text = read_text(path, missing_ok=True)
    if text is None:
        return None
    meta, _ = split(text)
    own = str(meta.get("name") or "").strip()
    name = name or (own if NAME.match(own) else path.parent.name)
    description = " ".join(str(meta.get("description") or "").split())[:MAX_DESCRIPTION_CHARS]
    return Skill(name=name, description=description, path=path, source=source)


def user_dir() -> Path:
    from hermes.host.paths import data_dir

    return data_dir() / "skills"


def project_dirs(cwd: Path) -> list:
    from plugins.prompt.project import git_root

    root = git_root(cwd.resolve()) or cwd.resolve()
    return [root / ".hermes" / "skills", root / ".agents" / "skills"]


def _folder(root: Path, source: str) -> list:
    import os

    try:  # scandir: the entry types come with the listing, no stat per skill
        names = sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))
    except OSError:
        return []
    return [s for s in (_parse(root / n / "SKILL.md", source) for n in names) if s is not None]


def find(config: Any, registered: Iterable[Skill] = (), cwd: Optional[Path] = None) -> dict:
    """name -> Skill, from every place skills live."""
    found = {s.name: s for s in registered}
    roots = [(user_dir(), "user")]
    extra = config.get("skills.paths", []) if config is not None else []
    roots += [(Path(str(p)).expanduser(), str(p)) for p in (extra if isinstance(extra, list) else [])]
    roots += [(p, "project") for p in project_dirs(cwd or Path.cwd())]
    for root, source in roots:
        for skill in _folder(root, source):
            found[skill.name] = skill
    return found


def lookup(skills: dict, name: str) -> Skill:
    """A skill by its name, or by the part after ``plugin:``; a clear error otherwise."""
    if name in skills:
        return skills[name]
    matches = [s for key, s in skills.items() if key.split(":")[-1] == name]
    if len(matches) == 1:
        return matches[0]
    from kernel.hints import did_you_mean

    hint = did_you_mean(name, skills) or f"; known: {', '.join(sorted(skills)) or 'none'}"
    raise SkillError(f"no skill named {name!r}{hint}")


def _document(name: str, description: str, body: str) -> str:
    import yaml

    meta = yaml.safe_dump({"name": name, "description": description}, sort_keys=False, allow_unicode=True)
    return f"---\n{meta}---\n\n{body.strip()}\n"


def write(name: str, description: str, body: str, *, replace: bool) -> Skill:
    """Create (or, with ``replace``, rewrite) ``$HERMES_HOME/skills/<name>/SKILL.md``."""
    from hermes.host.files import atomic_write

    if not NAME.match(name or ""):
        raise SkillError(f"a skill's name is letters, digits, - and _ (at most 64), not {name!r}")
    description = " ".join(str(description or "").split())
    if not description:
        raise SkillError("a skill needs a one-line description: it is what the index shows")
    if not str(body or "").strip():
        raise SkillError("a skill needs instructions (its body)")
    if len(body) > MAX_BODY_CHARS:
        raise SkillError(f"the body is {len(body)} characters; at most {MAX_BODY_CHARS}")
    path = user_dir() / name / "SKILL.md"
    if path.exists() and not replace:
        raise SkillError(f"the skill {name!r} exists already ({path}); edit it instead")
    if not path.exists() and replace:
        raise SkillError(f"there is no skill {name!r} in {user_dir()} to edit")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, _document(name, description[:MAX_DESCRIPTION_CHARS], body))
    return load(path, "user")


def install(source: Path, name: Optional[str] = None) -> Skill:
    """Copy a skill folder (or a lone SKILL.md) into ``$HERMES_HOME/skills/``."""
    source = Path(source).expanduser()
    skill = load(source, "user")
    if skill is None:
        raise SkillError(f"{source}: no SKILL.md there")
    target = user_dir() / (name or skill.name)
    if not NAME.match(target.name):
        raise SkillError(f"{target.name!r} is not a skill name (letters, digits, - and _)")
    if target.exists():
        raise SkillError(f"the skill {target.name!r} is installed already ({target}); remove it first")
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(".git", "__pycache__"))
    else:
        target.mkdir()
        shutil.copy2(source, target / "SKILL.md")
    return load(target, "user", target.name)


def remove(name: str) -> Path:
    """Delete a skill of ``$HERMES_HOME/skills/`` (never a project's or a plugin's)."""
    target = user_dir() / name
    if not NAME.match(name or "") or not (target / "SKILL.md").is_file():
        raise SkillError(f"no skill {name!r} in {user_dir()} (project and plugin skills are not removed here)")
    shutil.rmtree(target)
    return target
