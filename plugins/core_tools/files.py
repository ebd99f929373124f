"""The file tools: ``read_file``, ``write_file``, ``patch`` and
``search_files``, path-scoped so the kernel can run them in parallel when
their paths do not overlap."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from hermes.host.files import atomic_write
from kernel.types import Tool, ToolError
from plugins.text import UTF16_MARKS, is_binary, text_lines
from plugins.tool_args import arg, check_args, clip, is_interrupted, resolve_path, setting, working_folder


MAX_READ_CHARS = 100_000
MAX_READ_BYTES = 20 * 1024 * 1024
DEFAULT_READ_LINES = 2000
MAX_LINE_CHARS = 2000


def _suggest_siblings(path: Path) -> str:
    """' Did you mean ...?' for a missing file, from its folder's names."""
    try:
        names = os.listdir(path.parent)
    except OSError:
        return f" (folder {str(path.parent)!r} does not exist either)" if not path.parent.exists() else ""
    import difflib  # here, as below: only a mistake or a patch needs it, and every start would pay its import

    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    return f" Did you mean: {', '.join(close)}?" if close else ""


def _open_existing(path: Path, raw: str, tool: str) -> None:
    """The errors every file tool gives for a path that is not a readable file."""
    if not path.exists():
        raise ToolError(f"{tool}: file not found: {raw}.{_suggest_siblings(path)}")
    if path.is_dir():
        raise ToolError(f"{tool}: {raw} is a directory, not a file; use search_files or terminal (ls) to look inside")
    if not path.is_file():
        raise ToolError(f"{tool}: {raw} is not a regular file")
    if not os.access(path, os.R_OK):
        raise ToolError(f"{tool}: permission denied reading {raw}")


def _resolve(raw: str, tool: str, ctx, config) -> Path:
    """A path the model gave, relative to the folder its terminal commands work in."""
    return resolve_path(raw, tool, working_folder(getattr(ctx, "agent", None), config))


def make_read_file(config=None) -> Tool:
    max_chars = setting(config, "file.max_read_chars", MAX_READ_CHARS, int, 1000)
    max_bytes = setting(config, "file.max_read_bytes", MAX_READ_BYTES, int, 1)
    max_lines = setting(config, "file.max_read_lines", DEFAULT_READ_LINES, int, 1)
    line_chars = setting(config, "file.max_line_chars", MAX_LINE_CHARS, int, 100)

    def read_file(args, ctx):
        args = check_args(args, "read_file")
        raw = arg(args, "path", str, tool="read_file")
        offset = arg(args, "offset", int, tool="read_file", default=1)
        limit = arg(args, "limit", int, tool="read_file", default=None)
        if offset < 1:
            raise ToolError("read_file: 'offset' is a 1-based line number (1 = first line)")
        if limit is not None and limit < 1:
            raise ToolError("read_file: 'limit' must be at least 1 line")
        path = _resolve(raw, "read_file", ctx, config)
        _open_existing(path, raw, "read_file")
        size = path.stat().st_size
        if size > max_bytes and "offset" not in args and "limit" not in args:
            raise ToolError(
                f"read_file: {raw} is too large to read whole ({size} bytes, limit {max_bytes}); "
                "read a part with 'offset' and 'limit', or use search_files / terminal (grep, head, tail)"
            )
        want = min(limit or max_lines, max_lines)
        with open(path, "rb") as fh:
            if (lines := text_lines(fh)) is None:
                raise ToolError(f"read_file: {raw} is a binary file ({size} bytes); it cannot be shown as text")
            out, used, lineno, last_shown, cut_by_chars = [], 0, 0, 0, False
            count_all, more_unknown = size <= max_bytes, False  # do not scan a huge file just to count
            for lineno, line in enumerate(lines, 1):
                if lineno < offset:
                    continue
                if lineno >= offset + want or cut_by_chars:
                    if not count_all:
                        more_unknown = True
                        break
                    continue  # keep counting lines for the footer
                text = line.rstrip("\r\n")
                if len(text) > line_chars:
                    text = text[:line_chars] + f"... [line cut: {len(text)} characters]"
                row = f"{lineno:>6}|{text}"
                if used + len(row) > max_chars and out:
                    cut_by_chars = True
                    continue
                out.append(row)
                used += len(row) + 1
                last_shown = lineno
            total = lineno
        if total == 0:
            return f"{raw}: (empty file)"
        if offset > total:
            raise ToolError(f"read_file: offset {offset} is past the end of {raw}, which has {total} lines")
        if more_unknown:
            return "\n".join(out) + f"\n[{raw}: lines {offset}-{last_shown}; more follow: continue with offset={last_shown + 1}]"
        footer = f"[{raw}: lines {offset}-{last_shown} of {total}"
        if last_shown < total:
            footer += f"; continue with offset={last_shown + 1}"
            if cut_by_chars:
                footer += f" (stopped at {max_chars} characters)"
        return "\n".join(out) + "\n" + footer + "]"

    return Tool(
        name="read_file",
        description=(
            "Read a text file with line numbers (format 'NUMBER|text'). By default the first "
            f"{max_lines} lines (the most one read returns); page with 'offset' (1-based first line) and 'limit' "
            "(number of lines). "
            "The line numbers are not part of the file: leave them out when you patch."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to read (absolute, ~, or relative to the current directory)."},
                "offset": {"type": "integer", "description": "First line to read, 1-based (default 1)."},
                "limit": {"type": "integer", "description": f"How many lines to read (default {max_lines})."},
            },
            "required": ["path"],
        },
        handler=read_file,
        toolset="file",
        parallel_safe=True,
        path_arg="path",
    )


def _text_of(path: Path) -> "str | None":
    """The text of a file whose syntax is checked after a write (:mod:`plugins.core_tools.syntax`), as it was."""
    from plugins.core_tools.syntax import MOST, checked

    try:
        return path.read_text(encoding="utf-8") if checked(path) and path.stat().st_size <= MOST else None
    except (OSError, UnicodeDecodeError):
        return None


def _with_syntax(result: dict, path: Path, before: "str | None", after: str) -> dict:
    """``result`` with ``syntax`` saying what of the file no longer parses, when something does not."""
    from plugins.core_tools.syntax import after_write

    if problem := after_write(path, before, after):
        result["syntax"] = problem
    return result


def make_write_file(config=None) -> Tool:
    def write_file(args, ctx):
        args = check_args(args, "write_file")
        raw = arg(args, "path", str, tool="write_file")
        content = arg(args, "content", str, tool="write_file")
        path = _resolve(raw, "write_file", ctx, config)
        if path.is_dir():
            raise ToolError(f"write_file: {raw} is a directory; give a file path")
        created = not path.exists()
        before = None if created else _text_of(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise ToolError(f"write_file: cannot create folder {str(path.parent)!r}: a file is in the way") from None
        except PermissionError:
            raise ToolError(f"write_file: permission denied creating folder {str(path.parent)!r}") from None
        data = content.encode("utf-8")
        try:
            atomic_write(path, data)
        except PermissionError:
            raise ToolError(f"write_file: permission denied writing {raw}") from None
        except OSError as exc:
            raise ToolError(f"write_file: cannot write {raw}: {exc.strerror or exc}") from None
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        return _with_syntax({"path": str(path), "bytes_written": len(data), "lines": lines, "created": created},
                            path, before, content)

    return Tool(
        name="write_file",
        description=(
            "Write a whole file (UTF-8), replacing it if it exists; missing parent folders are created. "
            "The write is atomic; 'syntax' in the result says when a Python, JSON, YAML or TOML file no longer "
            "parses. To change part of an existing file use patch instead."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to write."},
                "content": {"type": "string", "description": "The complete new content of the file."},
            },
            "required": ["path", "content"],
        },
        handler=write_file,
        toolset="file",
        parallel_safe=True,
        path_arg="path",
    )


def _closest_line(text: str, old: str) -> str:
    """A hint for a missing ``old_string``: the file line most like its first line."""
    needle = next((ln.strip() for ln in old.splitlines() if ln.strip()), "")
    if not needle:
        return ""
    import difflib

    lines = text.splitlines()
    best, best_ratio = -1, 0.0
    matcher = difflib.SequenceMatcher(b=needle, autojunk=False)
    for i, line in enumerate(lines):
        cand = line.strip()
        if not cand:
            continue
        matcher.set_seq1(cand)
        if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    if best < 0 or best_ratio < 0.5:
        return ""
    shown = lines[best] if len(lines[best]) <= 300 else lines[best][:300] + "..."
    return f" The closest line is {best + 1}: {shown!r}."


def _line_numbers(text: str, old: str, limit: int = 10) -> list:
    numbers, start = [], 0
    while len(numbers) < limit:
        at = text.find(old, start)
        if at < 0:
            break
        numbers.append(text.count("\n", 0, at) + 1)
        start = at + 1
    return numbers


def make_patch(config=None) -> Tool:
    def patch(args, ctx):
        args = check_args(args, "patch")
        raw = arg(args, "path", str, tool="patch")
        old = arg(args, "old_string", str, tool="patch")
        new = arg(args, "new_string", str, tool="patch")
        replace_all = arg(args, "replace_all", bool, tool="patch", default=False)
        if old == "":
            raise ToolError("patch: 'old_string' is empty; to create or overwrite a whole file use write_file")
        if old == new:
            raise ToolError("patch: 'old_string' and 'new_string' are identical; nothing would change")
        path = _resolve(raw, "patch", ctx, config)
        _open_existing(path, raw, "patch")
        data = path.read_bytes()
        if data[:2] in UTF16_MARKS:  # written back as UTF-8 it would break the program that reads it
            raise ToolError(f"patch: {raw} is UTF-16 text; patch edits UTF-8 files (rewrite it whole with write_file, "
                            "in UTF-8, if its reader takes that)")
        if is_binary(data):
            raise ToolError(f"patch: {raw} is a binary file; patch edits text files only")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"patch: {raw} is not valid UTF-8; rewrite it with write_file if you must change it") from None

        count = text.count(old)
        if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
            # The file uses CRLF; models send LF. Match (and write) in the file's style.
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            count = text.count(old)
        if count == 0:
            hint = _closest_line(text, old)
            squashed = re.sub(r"\s+", " ", old).strip()
            if squashed and squashed in re.sub(r"\s+", " ", text):
                hint += " The text exists with different whitespace or indentation: copy it exactly (read_file shows it)."
            raise ToolError(f"patch: old_string not found in {raw}.{hint} Read the file and copy the text exactly.")
        if count > 1 and not replace_all:
            where = ", ".join(str(n) for n in _line_numbers(text, old))
            raise ToolError(
                f"patch: old_string occurs {count} times in {raw} (at lines {where}{', ...' if count > 10 else ''}); "
                "include more surrounding lines to make it unique, or set replace_all=true to change every one"
            )
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        try:
            atomic_write(path, updated.encode("utf-8"))
        except OSError as exc:
            raise ToolError(f"patch: cannot write {raw}: {exc.strerror or exc}") from None
        import difflib

        diff = "".join(
            difflib.unified_diff(
                text.splitlines(keepends=True), updated.splitlines(keepends=True), f"a/{raw}", f"b/{raw}", n=2
            )
        )
        return _with_syntax({"path": str(path), "replacements": count if replace_all else 1, "diff": clip(diff, 4000)},
                            path, text, updated)

    return Tool(
        name="patch",
        description=(
            "Edit a file by exact string replacement: 'old_string' must match the file exactly (whitespace "
            "included, no line-number prefixes) and be unique unless replace_all=true. Returns a diff, and "
            "'syntax' when a Python, JSON, YAML or TOML file no longer parses."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to edit."},
                "old_string": {"type": "string", "description": "Exact text to replace, with enough context to be unique."},
                "new_string": {"type": "string", "description": "Replacement text."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
            },
            "required": ["path", "old_string", "new_string"],
        },
        handler=patch,
        toolset="file",
        parallel_safe=True,
        path_arg="path",
    )


# Folders nobody means to search: version control and caches.
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", "node_modules"}
MAX_SEARCH_FILE_BYTES = 10 * 1024 * 1024
MAX_FILES_SCANNED = 50_000


def _glob_match(glob: str, rel: str, name: str) -> bool:
    if "/" not in glob:
        return fnmatch.fnmatch(name, glob)
    # fnmatch's * already crosses folders; "**/" must also match no folder at all
    variants = {glob, glob.replace("/**/", "/")}
    variants |= {v[3:] for v in list(variants) if v.startswith("**/")}
    return any(fnmatch.fnmatch(rel, v) for v in variants)


def make_search_files(config=None) -> Tool:
    max_files = setting(config, "file.max_search_files", MAX_FILES_SCANNED, int, 1)

    def search_files(args, ctx):
        args = check_args(args, "search_files")
        pattern = arg(args, "pattern", str, tool="search_files")
        raw = arg(args, "path", str, tool="search_files", default=".")
        glob = arg(args, "glob", str, tool="search_files", default=None)
        target = arg(args, "target", str, tool="search_files", default="content")
        ignore_case = arg(args, "ignore_case", bool, tool="search_files", default=False)
        max_results = arg(args, "max_results", int, tool="search_files", default=50)
        if target not in ("content", "files"):
            raise ToolError("search_files: 'target' must be 'content' (search inside files) or 'files' (match file paths)")
        if max_results < 1:
            raise ToolError("search_files: 'max_results' must be at least 1")
        max_results = min(max_results, 1000)
        try:
            regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise ToolError(f"search_files: invalid regular expression {pattern!r}: {exc} (Python re syntax)") from None
        root = _resolve(raw, "search_files", ctx, config)
        if not root.exists():
            raise ToolError(f"search_files: path not found: {raw}.{_suggest_siblings(root)}")

        if root.is_file():
            walk = [(str(root.parent), [], [root.name])]
            base = root.parent
        else:
            walk = os.walk(root)
            base = root
        hits, files_hit, visited, binary = [], set(), 0, 0
        stop = None  # why the walk ended early: "results", "files" or "interrupted"
        for folder, dirs, names in walk:
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for name in sorted(names):
                visited += 1
                if visited > max_files:
                    stop = "files"
                    break
                if visited % 500 == 0 and is_interrupted(getattr(ctx, "agent", None)):
                    stop = "interrupted"
                    break
                full = os.path.join(folder, name)
                rel = os.path.relpath(full, base).replace(os.sep, "/")
                if glob and not _glob_match(glob, rel, name):
                    continue
                if target == "files":
                    if regex.search(rel):
                        if len(hits) >= max_results:
                            stop = "results"
                            break
                        hits.append(rel)
                    continue
                try:
                    if not os.path.isfile(full) or os.path.getsize(full) > MAX_SEARCH_FILE_BYTES:
                        continue
                    with open(full, "rb") as fh:
                        if (lines := text_lines(fh)) is None:
                            binary += 1
                            continue
                        for lineno, line in enumerate(lines, 1):
                            text = line.rstrip("\r\n")
                            if regex.search(text):
                                if len(hits) >= max_results:
                                    stop = "results"
                                    break
                                shown = text if len(text) <= 300 else text[:300] + "..."
                                hits.append(f"{rel}:{lineno}: {shown}")
                                files_hit.add(rel)
                except OSError:
                    continue  # unreadable file: skip it like grep -s
                if stop:
                    break
            if stop:
                break

        where = f"{raw}" + (f" (glob {glob})" if glob else "")
        notes = {
            "results": f"[stopped at {len(hits)} results; more exist: narrow 'pattern', 'path' or 'glob', or raise max_results]",
            "files": f"[stopped after {max_files} files; search a smaller 'path' or use a 'glob']",
            "interrupted": "[interrupted by the user]",
        }
        if not hits:
            skipped = f", {binary} binary skipped" if binary else ""
            text = f"No matches for /{pattern}/ in {where}: looked at {min(visited, max_files)} files{skipped}."
            return text + (" " + notes[stop] if stop else "")
        if target == "files":
            head = f"{len(hits)} files matching /{pattern}/ under {where}"
        else:
            head = f"{len(hits)} matches in {len(files_hit)} files for /{pattern}/ under {where}"
        lines = [head + ":"] + hits
        if stop:
            lines.append(notes[stop])
        return "\n".join(lines)

    return Tool(
        name="search_files",
        description=(
            "Search files with a Python regular expression. target='content' (default) returns matching lines as "
            "'path:line: text'; target='files' matches file paths instead (find files by name). 'glob' filters "
            "file names (e.g. '*.py', 'src/**/*.ts'). Skips binary files and .git, node_modules, caches."
        ),
        parameters={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression (Python re syntax)."},
                "path": {"type": "string", "description": "File or folder to search (default: current directory)."},
                "glob": {"type": "string", "description": "Only files whose name matches this glob."},
                "target": {"type": "string", "enum": ["content", "files"], "description": "What to match (default content)."},
                "ignore_case": {"type": "boolean", "description": "Case-insensitive match (default false)."},
                "max_results": {"type": "integer", "description": "Maximum results (default 50, max 1000)."},
            },
            "required": ["pattern"],
        },
        handler=search_files,
        toolset="file",
        parallel_safe=True,
    )
