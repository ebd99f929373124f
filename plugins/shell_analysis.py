"""What a shell command does, from its parse tree (bashlex), for the approval
plugin: which of its simple commands delete recursively or overwrite outside
the working directory, and which cannot be analysed at all.

Parsing beats matching the raw text: ``$(echo rm) -rf ~``, ```echo rm` -rf ~``,
``R=rm; $R -rf ~`` and ``rm${IFS}-rf${IFS}$HOME`` all have a command word
built at run time, which this module reports instead of guessing. Paths are
resolved where that is certain (``~``, ``$HOME``, ``$PWD``, ``cd`` earlier in
the same command line); anything else counts as outside the working folder.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Iterator, Optional

WRAPPERS = {"sudo", "doas", "nohup", "nice", "time", "command", "builtin", "exec", "stdbuf", "env", "timeout",
            "ionice", "chronic", "unbuffer"}
SHELLS = {"sh", "bash", "zsh", "ksh", "dash", "fish", "csh", "tcsh", "ash"}
INTERPRETERS = {"python": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",), "node": ("-e", "--eval", "-p", "--print"),
                "php": ("-r",), "lua": ("-e",), "osascript": ("-e",), "pwsh": ("-c", "-Command"),
                "awk": (), "deno": ("eval",)}
DESTRUCTIVE = {"rm", "rmdir", "shred", "unlink", "mv", "dd", "chmod", "chown", "chgrp", "truncate", "mkfs", "wipefs",
               "srm", "cp", "install", "ln", "tee"}
SAFE_WRITE_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}


@dataclass(frozen=True)
class Finding:
    key: str  # a rule key the user can allow: recursive_delete_outside, dynamic_command, ...
    description: str
    command: str  # the simple command it was found in, as parsed


@dataclass
class Analysis:
    commands: list = field(default_factory=list)  # each simple command as written: its words, quotes removed
    findings: list = field(default_factory=list)

    @property
    def normalized(self) -> list:
        """Each simple command as one string (wrappers such as sudo dropped), for
        the named rules and the user's deny globs."""
        return [" ".join(words) for words in self.commands]


def analyse(command: str, cwd: Optional[str] = None, environ: Optional[dict] = None) -> Analysis:
    """The simple commands of ``command`` and what needs approval in them."""
    import bashlex

    state = _State(cwd or os.getcwd(), environ if environ is not None else dict(os.environ))
    result = Analysis()
    try:
        trees = bashlex.parse(command)
    except Exception as exc:  # bashlex raises its own errors, and others on odd input
        result.findings.append(Finding("unparsed", f"the command could not be parsed ({type(exc).__name__})", command))
        return result
    for tree in trees:
        _walk(tree, state, result, command)
    return result


class _State:
    def __init__(self, cwd: str, environ: dict):
        self.cwd, self.environ = os.path.realpath(cwd), environ
        self.workspace = self.cwd  # the folder the tool runs in: what "inside" means

    def resolve(self, word) -> Optional[str]:
        """The literal value of a word, or None when it is built at run time."""
        text = word.word  # quotes already removed by the parser
        home = self.environ.get("HOME", os.path.expanduser("~"))
        for part in getattr(word, "parts", []) or []:
            if part.kind == "tilde" and part.value == "~" and text.startswith("~"):
                text = home + text[1:]
            elif part.kind == "parameter" and part.value in ("HOME", "PWD"):
                value = home if part.value == "HOME" else self.cwd
                for token in ("${" + part.value + "}", "$" + part.value):
                    if token in text:
                        text = text.replace(token, value, 1)
                        break
            else:
                return None  # $(...), `...`, $VAR, ${VAR}, ~user: not known before it runs
        return text

    def path(self, text: str) -> str:
        return os.path.normpath(os.path.join(self.cwd, os.path.expanduser(text)))

    def inside(self, text: Optional[str]) -> bool:
        """Strictly inside the working folder (the folder itself is not)."""
        if text is None:
            return False
        path = self.path(text.rstrip("/") or "/")
        if any(ch in text for ch in "*?["):  # a glob: judge the folder it expands in
            path = self.path(os.path.dirname(text) or ".")
            return path == self.workspace or path.startswith(self.workspace + os.sep)
        return path.startswith(self.workspace + os.sep)

    def writable(self, text: Optional[str]) -> bool:
        """A write there needs no approval: inside the working folder, a null
        device, or the temporary folder (unless that holds the home folder)."""
        if text is None:
            return False
        path = self.path(text)
        temp = os.path.realpath(tempfile.gettempdir())
        home = os.path.realpath(self.environ.get("HOME", os.path.expanduser("~")))
        in_temp = path.startswith(temp + os.sep) and not (path == home or path.startswith(home + os.sep))
        return path in SAFE_WRITE_TARGETS or self.inside(text) or in_temp


def _nodes(node, kind: str) -> Iterator:
    if getattr(node, "kind", None) == kind:
        yield node
    for child in getattr(node, "parts", None) or []:
        yield from _nodes(child, kind)
    for attr in ("command", "list"):
        child = getattr(node, attr, None)
        if child is not None and not isinstance(child, (str, list)):
            yield from _nodes(child, kind)
        elif isinstance(child, list):
            for c in child:
                yield from _nodes(c, kind)


def _walk(node, state: _State, result: Analysis, source: str) -> None:
    kind = node.kind
    if kind == "command":
        _command(node, state, result, source)
    elif kind == "pipeline":
        commands = [p for p in node.parts if p.kind == "command"]
        for i, part in enumerate(commands):
            _walk(part, state, result, source)
            words = _words(part, state)
            if i > 0 and words and _reads_code_from_stdin(words):
                feeder = " | ".join(" ".join(w or "?" for w in _words(c, state)) for c in commands[:i])
                result.findings.append(Finding("pipe_to_interpreter", "text piped into a shell or interpreter "
                                               f"({feeder} | {words[0]})", _text(part, source)))
    else:
        for child in getattr(node, "parts", None) or []:
            _walk(child, state, result, source)
        for attr in ("list",):
            for child in getattr(node, attr, None) or []:
                _walk(child, state, result, source)
    # substitutions run too: look inside them
    if kind in ("command",):
        for sub in list(_nodes(node, "commandsubstitution")) + list(_nodes(node, "processsubstitution")):
            if sub.command is not None:
                _walk(sub.command, state, result, source)


def _words(node, state: _State, literal: bool = False) -> list:
    """The words of a simple command after assignments and wrappers: each resolved
    (None where built at run time), or with ``literal`` as written."""
    words = [p for p in node.parts if p.kind == "word"]
    values = [w.word if literal else state.resolve(w) for w in words]
    while values and values[0] is not None and os.path.basename(values[0]) in WRAPPERS:
        wrapper = os.path.basename(values.pop(0))
        while values and values[0] is not None and (values[0].startswith("-") or "=" in values[0]
                                                    or (wrapper == "timeout" and values[0][:1].isdigit())):
            values.pop(0)
    if values and values[0] is not None:
        values[0] = os.path.basename(values[0])
    return values


def _text(node, source: str) -> str:
    return source[node.pos[0]:node.pos[1]]


def _reads_code_from_stdin(words: list) -> bool:
    name = words[0] or ""
    base = name.rstrip("0123456789.")
    if name in SHELLS or base in SHELLS:
        args = [w for w in words[1:] if w is not None and not w.startswith("-")]
        return not args or args[0] == "-" or "-s" in words
    if base in INTERPRETERS or name in INTERPRETERS:
        args = [w for w in words[1:] if w is not None and not w.startswith("-")]
        return not args or args[0] == "-"
    return False


def _command(node, state: _State, result: Analysis, source: str) -> None:
    text = _text(node, source)
    words = _words(node, state)
    result.commands.append(_words(node, state, literal=True))
    for redirect in (p for p in node.parts if p.kind == "redirect"):
        target = redirect.output
        if redirect.type in (">", ">>", ">|", "&>") and not isinstance(target, int) and target is not None:
            value = state.resolve(target)
            if not state.writable(value):
                result.findings.append(Finding("overwrite_outside", f"writes to {value or target.word!r}, outside "
                                               "the working folder", text))
    if not words:
        return
    name = words[0]
    if name is None:
        result.findings.append(Finding("dynamic_command", "the command word is built at run time "
                                       f"({node.parts[[p.kind for p in node.parts].index('word')].word})", text))
        return
    args = words[1:]
    if name == "cd":
        target = args[0] if args else state.environ.get("HOME", "~")
        state.cwd = state.path(target) if target is not None else "/nonexistent-dynamic-cd"
        return
    if name == "eval" or (name in ("source", ".") and any(a is None for a in args)):
        result.findings.append(Finding("dynamic_command", f"{name} runs text that is not analysed", text))
        return
    base = name.rstrip("0123456789.")
    if name in SHELLS or base in SHELLS:
        flag = next((i for i, a in enumerate(args) if a is not None and a.startswith("-") and not a.startswith("--")
                     and "c" in a), None)  # -c, -lc, -ec ...
        if flag is not None:
            inner = args[flag + 1] if flag + 1 < len(args) else None
            if inner is None:
                result.findings.append(Finding("dynamic_command", f"{name} -c with code built at run time", text))
            else:
                nested = analyse(inner, state.cwd, state.environ)
                result.commands.extend(nested.commands)
                result.findings.extend(nested.findings)
        return
    flags = INTERPRETERS.get(base) or INTERPRETERS.get(name)
    if flags is not None and (any(a in flags for a in args if a) or base == "awk" and _awk_runs_commands(args)):
        result.findings.append(Finding("inline_code", f"{name} runs inline code that is not analysed", text))
        return
    if name in ("xargs",) or (name == "find" and any(a in ("-exec", "-execdir", "-ok", "-okdir", "-delete") for a in args)):
        inner = _spawned(name, args)
        if name == "find" and "-delete" in args:
            result.findings.append(Finding("find_delete", "find -delete removes what it finds", text))
        elif inner and os.path.basename(inner) in DESTRUCTIVE:
            result.findings.append(Finding("spawns_destructive", f"{name} runs {os.path.basename(inner)} on what it "
                                           "is given", text))
        return
    _destructive(name, args, state, result, text)


def _awk_runs_commands(args: list) -> bool:
    return any(a is not None and ("system(" in a or "| getline" in a or '"sh"' in a) for a in args)


def _spawned(name: str, args: list) -> Optional[str]:
    """The command xargs or find -exec runs."""
    if name == "xargs":
        rest = [a for a in args if a is None or not a.startswith("-")]
        return rest[0] if rest else "echo"
    for flag in ("-exec", "-execdir", "-ok", "-okdir"):
        if flag in args and args.index(flag) + 1 < len(args):
            return args[args.index(flag) + 1]
    return None


def _destructive(name: str, args: list, state: _State, result: Analysis, text: str) -> None:
    options = [a for a in args if a is not None and a.startswith("-") and a != "-"]
    operands = [a for a in args if a is None or not a.startswith("-") or a == "-"]
    recursive = any(o in ("--recursive", "-R") or (not o.startswith("--") and ("r" in o or "R" in o)) for o in options)
    if name in ("rm", "srm") and recursive or name in ("shred", "wipefs"):
        outside = [a for a in operands if not state.inside(a)]
        if outside:
            result.findings.append(Finding("recursive_delete_outside", "deletes recursively outside the working "
                                           f"folder: {', '.join(a or '<dynamic>' for a in outside)}", text))
    elif name in ("chmod", "chown", "chgrp") and recursive:
        outside = [a for a in operands[1:] if not state.inside(a)]
        if outside:
            result.findings.append(Finding("recursive_chmod_outside", "changes permissions recursively outside the "
                                           f"working folder: {', '.join(a or '<dynamic>' for a in outside)}", text))
    elif name in ("mv", "cp", "install", "ln") and operands:
        moved = operands if name == "mv" else operands[-1:]
        outside = [a for a in moved if not state.writable(a)]
        if outside:
            result.findings.append(Finding("overwrite_outside", f"{name} changes files outside the working folder: "
                                           f"{', '.join(a or '<dynamic>' for a in outside)}", text))
    elif name in ("tee", "truncate") and operands:
        outside = [a for a in operands if not state.writable(a) and a not in ("-a",)]
        if outside:
            result.findings.append(Finding("overwrite_outside", f"{name} writes outside the working folder: "
                                           f"{', '.join(a or '<dynamic>' for a in outside)}", text))
    elif name == "dd":
        for a in args:
            if a is None or a.startswith("of="):
                target = None if a is None else a[3:]
                if not state.writable(target):
                    result.findings.append(Finding("overwrite_outside", f"dd writes to {target or '<dynamic>'}", text))

