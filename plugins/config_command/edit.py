"""Changing config.yaml without losing anything.

Every writer of config.yaml (``hermes config set|unset``, ``hermes plugins
enable|disable``, the approval question's "always", hermes-compat) goes
through :func:`edit`: the file is changed in a round trip (ruamel.yaml) that
keeps its comments, key order and quoting; a symlinked config.yaml is written
through its link; writers from several terminals take turns (a lock, then
the file is read again, so no change of another is lost); and a crash leaves
the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import Any, Callable

MISSING = object()


class EditError(Exception):
    """config.yaml cannot be read back for a change (invalid YAML, not a mapping)."""


def edit(path: "str | Path", change: Callable[[Any], Any]) -> Any:
    """Call ``change(document)`` on config.yaml as it is now (a mapping that
    keeps comments; empty when the file is missing), then write it back;
    ``change``'s answer is returned."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from hermes.host.files import atomic_write

    real = Path(os.path.realpath(path))  # through a symlink: the link stays a link
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long line that was not folded
    with _locked(real):
        try:
            text = real.read_text(encoding="utf-8") if real.exists() else ""
            document = yaml.load(text) if text.strip() else None
        except (YAMLError, UnicodeDecodeError) as exc:
            raise EditError(f"{path} cannot be changed: {problem(exc)}") from None
        # a file of comments alone (notes, keys commented out) is no document to ruamel: they are kept above
        notes = "".join(line for line in text.splitlines(keepends=True) if line.lstrip().startswith("#"))
        if document is None:
            from ruamel.yaml.comments import CommentedMap

            document, above = CommentedMap(), notes
        else:
            above = ""
        if not isinstance(document, dict):
            raise EditError(f"{path} cannot be changed: it holds a {type(document).__name__}, not a mapping of keys")
        answer = change(document)
        out = io.StringIO()
        yaml.dump(document, out)
        atomic_write(real, above + out.getvalue() if document else notes)  # no key left: the comments stay
    return answer


def problem(exc: Exception) -> str:
    """One line for what ruamel.yaml found wrong and where (its message's first line is only the context)."""
    from ruamel.yaml.constructor import DuplicateKeyError

    what, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if isinstance(exc, DuplicateKeyError):
        return f"line {mark.line + 1}: {what}: runs use the last; delete the other"
    if what and mark is not None:
        return f"it is not valid YAML (line {mark.line + 1}: {what})"
    return f"it is not valid YAML ({str(exc).splitlines()[0]})"


def duplicate_key(path: "str | Path") -> str:
    """The first key config.yaml gives twice in a mapping (PyYAML, which runs read it with, keeps the last
    unsaid), or ''; a file that cannot be read or parsed is the reader's to name."""
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import YAMLError

    try:
        YAML(typ="rt").load(Path(path).read_text(encoding="utf-8"))
    except DuplicateKeyError as exc:
        return problem(exc)
    except (OSError, ValueError, YAMLError):
        pass
    return ""


@contextlib.contextmanager
def _locked(path: Path):
    """One writer at a time (an advisory lock beside the file, held while it is read and written)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def plain(value: Any) -> Any:
    """``value`` as it must be written for hermes to read it back the same: a
    string that YAML 1.1 (how config.yaml is read) would take for something
    else (``off``, ``yes``, ``1e3``, ``null``) is quoted."""
    import yaml
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str):
        try:
            same = yaml.safe_load(value) == value
        except yaml.YAMLError:
            same = False
        return value if same else DoubleQuotedScalarString(value)
    return value


def _parts(dotted: "str | list") -> list:
    return dotted.split(".") if isinstance(dotted, str) else list(dotted)


def get(document: Any, dotted: "str | list") -> Any:
    node = document
    for part in _parts(dotted):
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return node


def set_key(document: Any, dotted: "str | list", value: Any) -> Any:
    """Set a dotted key (or a list of its parts), creating sections on the way;
    what it replaced (``MISSING``: nothing)."""
    parts = _parts(dotted)
    node = document
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    old = node.get(parts[-1], MISSING)
    node[parts[-1]] = plain(value)
    return old


def unset_key(document: Any, dotted: "str | list") -> bool:
    """Remove a dotted key and the sections it leaves empty; False if it was not there."""
    parts = _parts(dotted)
    trail, node = [], document
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            return False
        trail.append((node, part))
        node = node[part]
    if parts[-1] not in node:
        return False
    del node[parts[-1]]
    for parent, part in reversed(trail):
        if parent[part]:
            break
        del parent[part]
    return True


def replace_all(document: Any, data: dict) -> None:
    """Make the document hold ``data``, keeping the comments of what stays."""
    for key in [k for k in document if k not in data]:
        del document[key]
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(document.get(key), dict):
            replace_all(document[key], value)
        elif document.get(key, MISSING) != value:
            document[key] = plain(value)


def path_of(config: Any) -> Path:
    """The config.yaml a loaded configuration came from, or would be written to."""
    from hermes.host.paths import config_dir

    return Path(getattr(config, "path", None) or (config_dir() / "config.yaml"))


def add_to_list(document: Any, dotted: str, item: Any, remove_from: str = "") -> None:
    """Append ``item`` to the list at ``dotted`` once (the list made if missing), and
    take it out of the list at ``remove_from``: the lists keep their comments. A
    bare name where a list belongs (a type problem) counts as a list of it."""
    if remove_from and isinstance(get(document, remove_from), (list, str)):
        if isinstance(get(document, remove_from), str):
            set_key(document, remove_from, [get(document, remove_from)])
        while item in get(document, remove_from):
            get(document, remove_from).remove(item)
    found = get(document, dotted)
    if not isinstance(found, list):
        set_key(document, dotted, [found, item] if isinstance(found, str) and found != item else [item])
    elif item not in found:
        found.append(plain(item))


def write(path: "str | Path", data: dict) -> Path:
    """config.yaml holding ``data`` (hermes-compat's whole-file writes), comments of what stays kept."""
    edit(path, lambda document: replace_all(document, data))
    return Path(path)
