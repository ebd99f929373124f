"""What a shell command does, from its parse tree (bashlex), for the approval
plugin: which of its simple commands delete, overwrite or re-permission
something outside the working folder and the temporary folder, which run code
that is not analysed, and which cannot be analysed at all.

Parsing beats matching the raw text: ``$(echo rm) -rf ~``, ```echo rm` -rf ~``,
``R=rm; $R -rf ~`` and ``rm${IFS}-rf${IFS}$HOME`` all have a command word
built at run time, which this module reports instead of guessing. Paths are
resolved where that is certain (``~``, ``$HOME``, ``$PWD``, ``cd``/``pushd``
and symlinks made earlier in the same command line, symlinks on disk);
anything else counts as outside. The rules go by class, each a table below:
wrappers and their options, commands that run another command (``xargs``,
``find -exec``, ``env -S``), interpreters and their code flags, deleting
commands, and the options and in-place modes through which a command writes
a file. This is the human layer: the sandbox is what the OS enforces.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Iterator, Optional

from plugins.shell_commands import (COMPILERS, DELETING, EDITORS, FIND_RUNS, FIND_WRITES, INTERPRETERS, KEEPING,
                                    OUTPUT_OPERANDS, OUTPUT_OPTIONS, PERMISSIONS, REPLACING, SAFE_WRITE_TARGETS,
                                    SED_RUNS, SED_WRITES, SHELLS, WRAPPERS, XARGS_TAKES)

# what is parsed (here-document bodies aside): bashlex takes about 0.1 ms a token, and a check stays under 100 ms
MAX_PARSED, MAX_TOKENS = 4_000, 500
_TOKEN = re.compile(r"[^\s;&|()<>]+|[;&|()<>]+")
# a here-document: its body is cut out before parsing (it is data, unless a shell reads it)
_SUBSTITUTIONS = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\1[^\n]*\n(.*?)^\t*\2[ \t]*$", re.S | re.M)

DYNAMIC_CWD = "/nonexistent-dynamic-cd"


@dataclass(frozen=True)
class Finding:
    key: str  # a rule key the user can allow: delete_outside, dynamic_command, ...
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


def analyse(command: str, cwd: Optional[str] = None, environ: Optional[dict] = None, _state=None) -> Analysis:
    """The simple commands of ``command`` and what needs approval in them."""
    result = Analysis()
    bodies: list = []  # each body apart, behind a marker line: parsed quickly, and bashlex reads no <<'EOF'
    command = _HEREDOC.sub(lambda m: _keep(m, bodies), command) if "<<" in command else command
    if len(command) > MAX_PARSED or len(_TOKEN.findall(command)) > MAX_TOKENS or command.count("$(") > 50:
        size = f"{len(command) // 1000} kB" if len(command) > MAX_PARSED else f"over {MAX_TOKENS} words and operators"
        result.findings.append(Finding("too_long", f"the command is too long to check ({size}; write long text "
                                       "with the file tools)", command[:200]))
        return result
    import bashlex

    state = _state or _State(cwd or os.getcwd(), environ if environ is not None else dict(os.environ))
    state.heredocs.update((f"hermes-heredoc-{id(bodies)}-{i}", body) for i, (body, _) in enumerate(bodies))
    for body, quoted in bodies:  # an unquoted delimiter: the body's $(...) and `...` run
        for code in [] if quoted else _SUBSTITUTIONS.findall(body):
            state.nested(code[0] or code[1], result, body[:200])
    try:
        trees = bashlex.parse(command)
    except Exception as exc:  # bashlex raises its own errors, and others on odd input
        result.findings.append(Finding("unparsed", f"the command could not be parsed ({type(exc).__name__})", command))
        return result
    for tree in trees:
        _walk(tree, state, result, command)
    return result


def _keep(match, bodies: list) -> str:
    """A here-document with its body replaced by a marker and its delimiter unquoted."""
    bodies.append((match.group(3), bool(match.group(1))))
    head = match.group(0)[:match.start(3) - match.start()].replace(match.group(1) + match.group(2) + match.group(1),
                                                                    match.group(2), 1)
    return f"{head}hermes-heredoc-{id(bodies)}-{len(bodies) - 1}\n{match.group(0)[match.end(3) - match.start():]}"


class _State:
    def __init__(self, cwd: str, environ: dict):
        self.cwd, self.environ = os.path.realpath(cwd), environ
        self.workspace = self.cwd  # the folder the tool runs in: what "inside" means
        self.links: dict = {}  # symlinks this command line makes: link path -> where it points
        self.written: set = set()  # files this command line writes (a script run later is unknown)
        self.heredocs: dict = {}  # marker -> the here-document body cut out before parsing
        self.depth = 0

    def nested(self, code: str, result: "Analysis", text: str) -> None:
        """Analyse code a command runs (``sh -c``, ``env -S``, a here-string) in this state."""
        if self.depth > 8:
            result.findings.append(Finding("dynamic_command", "commands nested too deep to analyse", text))
            return
        self.depth += 1
        try:
            inner = analyse(code, _state=self)
        finally:
            self.depth -= 1
        result.commands.extend(inner.commands)
        result.findings.extend(inner.findings)

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
        """Where ``text`` leads: symlinks made earlier in this command and those on disk followed."""
        path = os.path.normpath(os.path.join(self.cwd, os.path.expanduser(text)))
        for _ in range(10):
            link = next((k for k in self.links if path == k or path.startswith(k + os.sep)), None)
            if link is None:
                break
            path = os.path.normpath(os.path.join(os.path.dirname(link), self.links[link]) + path[len(link):])
        return os.path.realpath(path)

    def inside(self, text: Optional[str]) -> bool:
        """Strictly inside the working folder (the folder itself is not)."""
        if text is None:
            return False
        if any(ch in text for ch in "*?["):  # a glob: judge the folder it expands in
            path = self.path(os.path.dirname(text) or ".")
            return path == self.workspace or path.startswith(self.workspace + os.sep)
        return self.path(text.rstrip("/") or "/").startswith(self.workspace + os.sep)

    def writable(self, text: Optional[str]) -> bool:
        """A change there needs no approval: inside the working folder, a null
        device, or the temporary folder (unless that holds the home folder)."""
        if text is None:
            return False
        if os.path.normpath(os.path.join(self.cwd, text)) in SAFE_WRITE_TARGETS:
            return True
        path = self.path(text) if not any(ch in text for ch in "*?[") else self.path(os.path.dirname(text) or ".")
        temp = os.path.realpath(tempfile.gettempdir())
        home = os.path.realpath(self.environ.get("HOME", os.path.expanduser("~")))
        in_temp = path.startswith(temp + os.sep) and not (path == home or path.startswith(home + os.sep))
        return self.inside(text) or in_temp


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
            words = _strip_wrappers(_words(part, state))
            if i > 0 and words and words[0] is not None and _reads_code_from_stdin(words):
                feeder = " | ".join(" ".join(w or "?" for w in _words(c, state)) for c in commands[:i])
                result.findings.append(Finding("pipe_to_interpreter", "text piped into a shell or interpreter "
                                               f"({feeder} | {words[0]})", _text(part, source)))
        for part in node.parts:
            if part.kind != "command" and part.kind != "pipe":
                _walk(part, state, result, source)
    else:
        for child in getattr(node, "parts", None) or []:
            _walk(child, state, result, source)
        for child in getattr(node, "list", None) or []:
            _walk(child, state, result, source)
        for redirect in getattr(node, "redirects", None) or []:  # { ...; } > FILE, if ...; fi > FILE
            _redirect(redirect, state, result, _text(node, source))
    if kind == "command":  # substitutions run too: look inside them
        for sub in list(_nodes(node, "commandsubstitution")) + list(_nodes(node, "processsubstitution")):
            if sub.command is not None:
                _walk(sub.command, state, result, source)


def _words(node, state: _State, literal: bool = False) -> list:
    """The words of a simple command, each resolved (None where built at run time), or as written."""
    return [w.word if literal else state.resolve(w) for w in node.parts if w.kind == "word"]


def _text(node, source: str) -> str:
    return source[node.pos[0]:node.pos[1]]


def _options(args: list, takes: set) -> tuple:
    """(``[(option, value)]``, operands) of ``args``: ``takes`` names the
    options with an argument (``-o FILE``, ``-oFILE``, ``-so FILE``, ``--output=FILE``)."""
    options, operands, i = [], [], 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            operands.extend(args[i + 1:])
            break
        if arg is None or not arg.startswith("-") or arg == "-":
            operands.append(arg)
        elif arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name in takes and not eq:
                i += 1
                value = args[i] if i < len(args) else None
            options.append((name, value if name in takes else None))
        elif arg in takes:  # -o FILE, and -Command, -out: single-dash long options
            i += 1
            options.append((arg, args[i] if i < len(args) else None))
        else:
            for j, letter in enumerate(arg[1:], 1):
                if f"-{letter}" in takes:
                    value = arg[j + 1:]
                    if not value:
                        i += 1
                        value = args[i] if i < len(args) else None
                    options.append((f"-{letter}", value))
                    break
                options.append((f"-{letter}", None))
        i += 1
    return options, operands


def _take_options(words: list, takes: set) -> list:
    """Pop the leading options of ``words`` (a list, changed in place): ``[(option, value)]``."""
    taken = []
    while words and words[0] is not None and words[0].startswith("-") and words[0] != "-":
        arg = words.pop(0)
        if arg == "--":
            break
        name, value = arg, None
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name in takes and not eq:
                value = words.pop(0) if words else None
        elif arg in takes:
            value = words.pop(0) if words else None
        else:  # a cluster: the first letter that takes an argument takes the rest, or the next word
            for j, letter in enumerate(arg[1:], 1):
                if f"-{letter}" in takes:
                    name, value = f"-{letter}", arg[j + 1:] or (words.pop(0) if words else None)
                    break
        taken.append((name, value))
    return taken


def _strip_wrappers(words: list, state: Optional[_State] = None, result: Optional[Analysis] = None,
                    text: str = "") -> list:
    """The words after assignments and wrappers (``sudo -u x``, ``nice -n 5``,
    ``timeout -s KILL 10``, ``flock FILE``); with ``result``, a wrapper's
    command string (``env -S``, ``script -c``) is analysed, and ``[]`` returned."""
    words = list(words)
    while words and words[0] is not None and "=" in words[0] and not words[0].startswith("="):
        words.pop(0)  # VAR=value before the command
    while words and words[0] is not None and os.path.basename(words[0]) in WRAPPERS:
        takes, leading, runs = WRAPPERS[os.path.basename(words.pop(0))]
        options = _take_options(words, takes)
        while words and words[0] is not None and "=" in words[0]:
            words.pop(0)  # env A=1
        if leading and words:
            del words[:leading]  # timeout DURATION, flock FILE, taskset MASK
            options += _take_options(words, takes)  # flock FILE -c CMD
        for name, value in options:
            if name in runs and result is not None:
                if value is None:
                    result.findings.append(Finding("dynamic_command", f"a command string built at run time ({text})",
                                                   text))
                else:
                    state.nested(value, result, text)
                return []
    return words


def _reads_code_from_stdin(words: list) -> bool:
    name = os.path.basename(words[0])
    base = name.rstrip("0123456789.")
    if name in SHELLS or base in SHELLS or base in INTERPRETERS or name in INTERPRETERS:
        args = [w for w in words[1:] if w is not None and not w.startswith("-")]
        return not args or args[0] == "-" or "-s" in words
    return False


def _redirect(redirect, state: _State, result: Analysis, text: str) -> None:
    target = redirect.output
    if redirect.type in (">", ">>", ">|", "&>", "&>>", "<>") and not isinstance(target, int) and target is not None:
        value = state.resolve(target)
        if not state.writable(value):
            result.findings.append(Finding("overwrite_outside", f"writes to {value or target.word!r}, outside "
                                           "the working folder", text))
        elif value is not None:
            state.written.add(state.path(value))


def _command(node, state: _State, result: Analysis, source: str) -> None:
    text = _text(node, source)
    literal = _words(node, state, literal=True)
    result.commands.append(_strip_wrappers(literal) or literal)
    for word in (p for p in node.parts if p.kind in ("word", "assignment") and p.word.startswith("CDPATH=")):
        state.environ = {**state.environ, "CDPATH": word.word.split("=", 1)[1]}
    redirects = [p for p in node.parts if p.kind == "redirect"]
    for redirect in redirects:
        _redirect(redirect, state, result, text)
    words = _strip_wrappers(_words(node, state), state, result, text)
    name = os.path.basename(words[0]) if words and words[0] is not None else ""
    if name in SHELLS or name.rstrip("0123456789.") in SHELLS or name.rstrip("0123456789.") in INTERPRETERS:
        for redirect in redirects:  # bash <<< 'code', bash <<EOF ... EOF, python3 < file
            _code_from_redirect(name, redirect, state, result, text)
    _judge(words, state, result, text)


def _code_from_redirect(name: str, redirect, state: _State, result: Analysis, text: str) -> None:
    shell = name in SHELLS or name.rstrip("0123456789.") in SHELLS
    if redirect.type == "<<<":
        code = state.resolve(redirect.output) if not isinstance(redirect.output, int) else None
    elif redirect.type in ("<<", "<<-") and getattr(redirect, "heredoc", None) is not None:
        code = redirect.heredoc.value.rsplit("\n", 1)[0] if "\n" in redirect.heredoc.value else ""
        code = state.heredocs.get(code.strip(), code)
    elif redirect.type == "<" and not isinstance(redirect.output, int):
        _script(name, state.resolve(redirect.output), state, result, text)
        return
    else:
        return
    if code is None or not shell:
        result.findings.append(Finding("inline_code", f"{name} reads code that is not analysed", text))
    else:
        state.nested(code, result, text)


def _script(name: str, path: Optional[str], state: _State, result: Analysis, text: str) -> None:
    """A shell or interpreter runs the file ``path``: one this command writes is
    unknown; a shell script on disk is analysed (an interpreter's is not)."""
    if path is None or state.path(path) in state.written:
        result.findings.append(Finding("runs_new_script", f"{name} runs a script this command writes or builds "
                                       f"({path or '<dynamic>'})", text))
        return
    if name in SHELLS or name.rstrip("0123456789.") in SHELLS or name in ("source", "."):
        try:
            with open(state.path(path), "rb") as handle:
                code = handle.read(64 * MAX_PARSED)  # longer than that is too long to check anyway
        except OSError:
            return  # it does not exist: the shell fails
        state.nested(code.decode("utf-8", "replace"), result, text)


def _judge(words: list, state: _State, result: Analysis, text: str) -> None:
    """What one simple command (its words after the wrappers) does."""
    if not words:
        return
    if words[0] is None:
        result.findings.append(Finding("dynamic_command", f"the command word is built at run time ({text})", text))
        return
    name, args = os.path.basename(words[0]), words[1:]
    if "/" in words[0] and state.path(words[0]) in state.written:
        result.findings.append(Finding("runs_new_script", f"runs {words[0]}, which this command writes", text))
        return
    if name in ("cd", "pushd", "popd"):
        _change_directory(name, args, state)
        return
    if name == "eval" or (name in ("source", ".") and not args):
        result.findings.append(Finding("dynamic_command", f"{name} runs text that is not analysed", text))
        return
    if name in ("source", "."):
        _script(name, args[0], state, result, text)
        return
    base = name.rstrip("0123456789.")
    if name in SHELLS or base in SHELLS:
        _shell(name, args, state, result, text)
    elif base in INTERPRETERS or name in INTERPRETERS:
        _interpreter(name, base if base in INTERPRETERS else name, args, state, result, text)
    elif name == "xargs":
        rest = list(args)
        replace = next((v for o, v in _take_options(rest, XARGS_TAKES) if o in ("-I", "-i")), None)
        # what xargs reads becomes arguments, unknown here
        inner = [None if replace and a is not None and replace in a else a for a in rest] or ["echo"]
        _judge(_strip_wrappers([*inner, None], state, result, text), state, result, text)
    elif name == "find":
        _find(args, state, result, text)
    elif name == "sed":
        _sed(args, state, result, text)
    else:
        _writes(name, args, state, result, text)


def _change_directory(name: str, args: list, state: _State) -> None:
    targets = [a for a in args if a is None or not a.startswith("-") or a == "-"]
    if name == "popd" or (targets and (targets[0] is None or targets[0] == "-" or targets[0][:1] in "+")):
        state.cwd = DYNAMIC_CWD  # where it goes is not known here
        return
    target = targets[0] if targets else state.environ.get("HOME", "~")
    if state.environ.get("CDPATH") and not target.startswith(("/", "./", "../", "~")) and target not in (".", ".."):
        state.cwd = DYNAMIC_CWD  # CDPATH decides
        return
    state.cwd = state.path(target)


def _shell(name: str, args: list, state: _State, result: Analysis, text: str) -> None:
    options, operands = _options(args, {"-o", "-O"})
    if any(o == "-c" for o, _ in options):
        code = operands[0] if operands else None
        if code is None:
            result.findings.append(Finding("dynamic_command", f"{name} -c with code built at run time", text))
        else:
            state.nested(code, result, text)
    elif operands and operands[0] != "-" and not any(o == "-s" for o, _ in options):
        _script(name, operands[0], state, result, text)


def _interpreter(name: str, kind: str, args: list, state: _State, result: Analysis, text: str) -> None:
    letters, words = INTERPRETERS[kind]
    if kind in ("awk", "gawk"):
        if any(a is not None and ("system(" in a or "| getline" in a or '"sh"' in a) for a in args):
            result.findings.append(Finding("inline_code", f"{name} runs commands from its program", text))
        return
    for i, arg in enumerate(args):
        if arg is None:
            break
        if arg in words or (arg.startswith("-") and not arg.startswith("--") and set(arg[1:]) & set(letters)) \
                or (arg.startswith("-i") and kind in ("perl", "ruby")):
            result.findings.append(Finding("inline_code", f"{name} runs inline code that is not analysed", text))
            return
        if not arg.startswith("-"):
            if arg not in ("-",) and not (kind == "python" and i and args[i - 1] == "-m"):
                _script(name, arg, state, result, text)
            return


def _find(args: list, state: _State, result: Analysis, text: str) -> None:
    starts = []
    for arg in args:
        if arg is not None and (arg.startswith("-") or arg in ("(", "!", ")")):
            break
        starts.append(arg)
    starts = starts or ["."]
    outside = [s for s in starts if not state.writable(s + "/x" if s else None)]
    for i, arg in enumerate(args):
        if arg == "-delete" and outside:
            result.findings.append(Finding("find_delete", f"find -delete removes files outside the working folder: "
                                           f"{', '.join(s or '<dynamic>' for s in outside)}", text))
        elif arg in FIND_WRITES and i + 1 < len(args) and not state.writable(args[i + 1]):
            result.findings.append(Finding("overwrite_outside", f"find {arg} writes to {args[i + 1] or '<dynamic>'}",
                                           text))
        elif arg in FIND_RUNS:
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            for start in starts:  # {} is each file found: under a start folder
                found = None if start is None else os.path.join(start, "x")
                inner = [found if a is not None and "{}" in a else a for a in args[i + 1:end]]
                _judge(_strip_wrappers(inner, state, result, text), state, result, text)


def _sed(args: list, state: _State, result: Analysis, text: str) -> None:
    options, operands = _options(args, {"-e", "--expression", "-f", "--file", "-l", "--line-length"})
    in_place = any(o in ("-i", "--in-place") for o, _ in options)
    scripts = [v for o, v in options if o in ("-e", "--expression")]
    if not scripts and not any(o in ("-f", "--file") for o, _ in options) and operands:
        scripts, operands = [operands[0]], operands[1:]
    for script in scripts:
        if script is None or SED_RUNS.search(script):
            result.findings.append(Finding("inline_code", "sed runs a command from its script", text))
            return
        for match in SED_WRITES.finditer(script):
            target = (match.group(1) or match.group(3) or "").strip()
            if target and not state.writable(target):
                result.findings.append(Finding("overwrite_outside", f"sed writes to {target}", text))
    if in_place:
        outside = [a for a in operands if not state.writable(a)]
        if outside:
            result.findings.append(Finding("overwrite_outside", "sed -i edits files outside the working folder: "
                                           f"{', '.join(a or '<dynamic>' for a in outside)}", text))


def _writes(name: str, args: list, state: _State, result: Analysis, text: str) -> None:
    """Deletes, permission changes, and files written through operands or options."""
    options, operands = _options(args, OUTPUT_OPTIONS.get(name, set()) | ({"-s"} if name == "truncate" else set()))
    recursive = any(o in ("--recursive", "-R", "-r") for o, _ in options)

    def flag(key: str, what: str, paths: list) -> None:
        outside = [p for p in paths if not state.writable(p)]
        if outside:
            result.findings.append(Finding(key, f"{what} outside the working folder: "
                                           f"{', '.join(p or '<dynamic>' for p in outside)}", text))

    if name in DELETING:
        flag("recursive_delete_outside" if recursive else "delete_outside",
             "deletes recursively" if recursive else "deletes", operands)
    elif name in REPLACING and not any(o in KEEPING for o, _ in options):
        flag("delete_outside", f"{name} replaces files", operands)
    elif name in PERMISSIONS:
        flag("recursive_chmod_outside" if recursive else "chmod_outside",
             "changes permissions recursively" if recursive else "changes permissions", operands[1:])
    elif name == "ln" and operands:
        flag("overwrite_outside", "ln changes files", operands[-1:])  # the link itself, before it leads elsewhere
        symbolic = any(o in ("-s", "--symbolic") for o, _ in options)
        if symbolic and len(operands) >= 2 and operands[-1] is not None and operands[0] is not None:
            state.links[os.path.normpath(os.path.join(state.cwd, operands[-1]))] = operands[0]  # from the link's folder
    elif name == "dd":
        targets = [a[3:] if a is not None else None for a in args if a is None or a.startswith("of=")]
        flag("overwrite_outside", "dd writes", targets)
    elif name == "tar":
        _tar(args, state, flag)
    elif name in OUTPUT_OPERANDS and operands:
        which = OUTPUT_OPERANDS[name]
        written = [] if which is None else operands if which == "all" else operands[which:][:1] if which < 0 \
            else operands[which:which + 1]
        flag("overwrite_outside", f"{name} writes", written)
        state.written.update(state.path(p) for p in written if p is not None)
    elif name in EDITORS:
        flag("overwrite_outside", f"{name} edits files", [o for o in operands if o is None or not o.startswith("+")])
    targets = [v for o, v in options if o in OUTPUT_OPTIONS.get(name, ()) and name != "tar"]
    flag("overwrite_outside", f"{name} writes", targets)
    if name not in COMPILERS:  # a program built and run is development; a script fetched and run is not analysed
        state.written.update(state.path(p) for p in targets if p is not None)


def _tar(args: list, state: _State, flag) -> None:
    """``tar cf ARCHIVE`` writes the archive; ``tar x`` writes where ``-C`` says, and anywhere with ``-P``."""
    if not args or args[0] is None:
        return
    first = args[0] if args[0].startswith("-") else "-" + args[0]  # tar cf: the old style
    options, operands = _options([first, *args[1:]], {"-f", "--file", "-C", "--directory"})
    letters = {o for o, _ in options}
    archive = [v for o, v in options if o in ("-f", "--file")]
    if letters & {"-c", "-r", "-u", "-A", "--create", "--append", "--update"}:
        flag("overwrite_outside", "tar writes its archive", [a for a in archive if a != "-"])
    if letters & {"-x", "--extract", "--get"}:
        flag("overwrite_outside", "tar extracts", [v for o, v in options if o in ("-C", "--directory")] or ["."])
        if letters & {"-P", "--absolute-names"}:
            flag("overwrite_outside", "tar extracts absolute names", [None])
