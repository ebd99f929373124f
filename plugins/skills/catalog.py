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

import functools
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

from plugins.text import decoded

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")  # \Z: "$" also matches before a final newline
PLUGIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}:[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")  # plugin:skill
MAX_BODY_CHARS = 40_000
MAX_DESCRIPTION_CHARS = 300
MAX_FILE_BYTES = 1_000_000  # a SKILL.md or a file of a skill read at most
MAX_FRONT_MATTER = 16_000  # characters of front matter parsed
MAX_INSTALL_BYTES, MAX_INSTALL_FILES = 50_000_000, 2_000  # a skill folder copied by `skills install`
log = logging.getLogger("hermes.plugins.skills")


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
    SkillError for any other failure, for what is not a regular file (a link
    to ``/dev/zero``, a pipe) and for a file over :data:`MAX_FILE_BYTES`."""
    try:
        with open(path, "rb") as handle:  # opened first: what is checked is what is read
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise SkillError(f"{path}: not a regular file; it is not read")
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise SkillError(f"{path}: larger than {MAX_FILE_BYTES // 1000} kB; it is not read")
        if (text := decoded(data)) is None:
            raise SkillError(f"{path}: not text (a binary file); it is not shown")
        return text
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

            try:  # without aliases: a few lines of them can expand to gigabytes
                data = yaml.load(block[:MAX_FRONT_MATTER], Loader=_no_aliases_loader()) or {}
            except yaml.YAMLError:
                return {}
            return data if isinstance(data, dict) else {}
        meta[match.group(1)] = value
    return meta


@functools.lru_cache(maxsize=1)
def _no_aliases_loader():
    """YAML's safe loader without aliases (made when YAML is first needed: most front matter never is)."""
    import yaml

    class NoAliases(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("aliases are not read in a skill's front matter")
            return super().compose_node(parent, index)

    return NoAliases


def split(text: str) -> tuple:
    """``(front matter dict, body)``; a file without front matter is all body."""
    if not text.startswith("---"):
        return {}, text.strip()
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text.strip()
    return _front_matter(text[3:end]), text[end + 4:].lstrip("-").strip()


def front_matter_problem(path: Path) -> str:
    """Why the file's front matter gives nothing (it is not valid YAML: where and what), or ""."""
    import yaml

    text = read_text(path, missing_ok=True) or ""
    end = text.find("\n---", 3) if text.startswith("---") else -1
    try:
        yaml.safe_load(text[3:end]) if end > 0 else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return f"its front matter is not valid YAML ({getattr(exc, 'problem', None) or 'unreadable'}" + (
            f", line {mark.line + 1})" if mark else ")")  # the block starts on the file's first line
    return ""


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
    name = name or (own if NAME.match(own) else path.parent.name if path.name == "SKILL.md" else path.stem)
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
    try:  # scandir: the entry types come with the listing, no stat per skill
        names = sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))
    except OSError:
        return []
    found = []
    for n in names:
        try:
            skill = _parse(root / n / "SKILL.md", source)
        except SkillError as exc:  # one bad skill is left out, never the others
            log.warning("skill %s left out: %s", n, exc)
            continue
        if skill is not None:
            found.append(skill)
    return found


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
    import shutil  # here: only install and remove need them
    import tempfile

    source = Path(source).expanduser().absolute()  # `SKILL.md` alone: named after the folder it is in
    skill = load(source, "user")
    if skill is None:
        raise SkillError(f"{source}: no SKILL.md there")
    if not NAME.match(name or skill.name):  # the name itself: `--name ../plugins` would leave the folder
        raise SkillError(f"{name or skill.name!r} is not a skill name (letters, digits, - and _)")
    target = user_dir() / (name or skill.name)
    if target.exists():
        raise SkillError(f"the skill {target.name!r} is installed already ({target}); remove it first")
    if source.is_dir():
        _check_tree(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))  # whole, or nothing installed
    try:
        if source.is_dir():
            shutil.copytree(source, part, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        else:
            shutil.copy2(source, part / "SKILL.md")
        os.replace(part, target)
    except OSError as exc:
        shutil.rmtree(part, ignore_errors=True)
        raise SkillError(f"{source}: cannot copy it ({exc.strerror or exc}); nothing was installed") from None
    return load(target, "user", target.name)


def install_url(url: str, name: Optional[str] = None, force: bool = False) -> Skill:
    """A ``SKILL.md`` at an http(s) URL into ``$HERMES_HOME/skills/`` (hermes-agent's ``skills install URL``). Text
    from the web that reads like an instruction to the agent itself is refused unless ``force``."""
    import shutil
    import tempfile
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit

    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"User-Agent": "hermes"}), timeout=30) as got:
            data = got.read(MAX_FILE_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise SkillError(f"{url}: cannot download it ({getattr(exc, 'reason', None) or exc}); nothing was "
                         "installed") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"{url}: not a SKILL.md (not text); nothing was installed") from None
    if len(data) > MAX_FILE_BYTES or not text.strip():
        raise SkillError(f"{url}: not a SKILL.md ({'over 1 MB' if text.strip() else 'empty'}); nothing was installed")
    from plugins.prompt.project import scan

    findings = scan(text)
    if findings and not force:
        raise SkillError(f"{url}: refused: it reads like an instruction to the agent itself ({', '.join(findings)}); "
                         "--force installs it all the same")
    segments = [p for p in urlsplit(url).path.split("/") if p]
    named = name or str(split(text)[0].get("name") or "") or \
        (segments[-2] if len(segments) > 1 and segments[-1].lower() == "skill.md" else "")
    if not named:
        raise SkillError(f"{url}: no name in its front matter nor its URL: give --name")
    folder = Path(tempfile.mkdtemp(prefix="hermes-skill-"))
    try:
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
        return install(folder, named)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _check_tree(source: Path) -> None:
    """A skill folder to copy holds regular files and folders only, within the limits."""
    count = size = 0
    for root, dirs, files in os.walk(source):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
        for entry in [*dirs, *files]:
            path = os.path.join(root, entry)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode) or not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                kind = "a symlink" if stat.S_ISLNK(info.st_mode) else "not a regular file"
                raise SkillError(f"{path} is {kind}; a skill to install holds files and folders only")
            count, size = count + 1, size + info.st_size
        if count > MAX_INSTALL_FILES or size > MAX_INSTALL_BYTES:
            raise SkillError(f"{source} holds more than {MAX_INSTALL_FILES} files or {MAX_INSTALL_BYTES // 10**6} MB; "
                             "is it a skill folder?")


def remove(name: str) -> Path:
    """Delete a skill of ``$HERMES_HOME/skills/`` (never a project's or a plugin's)."""
    import shutil

    target = user_dir() / name
    if not NAME.match(name or "") or not (target / "SKILL.md").is_file():
        raise SkillError(f"no skill {name!r} in {user_dir()} (project and plugin skills are not removed here)")
    shutil.rmtree(target)
    return target
