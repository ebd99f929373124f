"""Built-in plugin lsp: a language server's new errors in the result of the write that brought them in.

After ``write_file`` or ``patch``, the errors a language server finds that the change brought in are in the same
result (hermes-agent's ``lsp`` keys).

A file inside a git repository, of a language whose server is on PATH (pyright or pylsp for Python,
typescript-language-server, gopls, rust-analyzer, clangd; ``lsp.servers.NAME.command`` names another, ``disabled``
turns one off), is shown to that server as it was and as it is now; the errors it reports now and did not before
(by their message, wherever they moved) are added to the result as ``lsp_diagnostics``, at most 20. A server is
started at the first such write, one per language and repository, and ends with hermes. One that is not there, fails
or says nothing within ``lsp.wait_timeout`` seconds adds nothing: the write itself is never held up by it. Servers run
in the tool sandbox (some run a repository's build scripts), with hermes' environment without the keys; what they say
is cut to one line a finding, since a hostile repository can put text of its own in an error message."""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import threading
from pathlib import Path

from kernel import hookimpl

log = logging.getLogger(__name__)
CHANGING = ("write_file", "patch")
BEFORE = "lsp.before"  # agent.state: call id -> the file's text before the call (None: no file)
MOST_BYTES = 2_000_000  # a bigger file is not sent to a server
MOST_SAID = 20
LANGUAGES = {".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "typescriptreact",
             ".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript", ".go": "go",
             ".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp"}
SERVERS = {  # hermes-agent's server names -> (the extensions it takes, the commands tried in turn)
    "pyright": ((".py", ".pyi"), [["pyright-langserver", "--stdio"], ["basedpyright-langserver", "--stdio"]]),
    "pylsp": ((".py", ".pyi"), [["pylsp"]]),
    "typescript": ((".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"), [["typescript-language-server", "--stdio"]]),
    "gopls": ((".go",), [["gopls"]]),
    "rust-analyzer": ((".rs",), [["rust-analyzer"]]),
    "clangd": ((".c", ".h", ".cc", ".cpp", ".cxx", ".hpp"), [["clangd"]]),
}
_running: dict = {}  # (server name, root) -> Server, or None when it could not start (not tried again)
_lock = threading.Lock()
IDLE = 600  # seconds a server may go unused before it is ended (hermes serve edits in many repositories)


@hookimpl
def register_config(declare):
    declare("lsp.enabled", bool, True, "after write_file or patch, the errors a language server on PATH finds that "
            "the change brought in are in the result (a git repository's files)")
    declare("lsp.wait_timeout", float, 5.0, "seconds a language server may take to say what it finds in a file",
            minimum=0.1)
    declare("lsp.servers", dict, {}, "per server (pyright, pylsp, typescript, gopls, rust-analyzer, clangd or a name "
            "of yours with extensions): {command: [...], env: {...}, initialization_options: {...}, disabled: true}")


def servers(config) -> list:
    """``(name, extensions, command, env, options)`` of each server that may run here, in the order tried."""
    own = config.get("lsp.servers") or {}
    return _servers(os.environ.get("PATH", ""), json.dumps(own, sort_keys=True, default=str))


@functools.lru_cache(maxsize=4)  # asked at each write: one search of PATH while it and the settings stay the same
def _servers(path: str, settings: str) -> list:
    import shlex
    import shutil

    own = json.loads(settings)
    names = list(SERVERS) + [name for name in own if name not in SERVERS]
    found = []
    for name in names:
        mine = own.get(name) if isinstance(own.get(name), dict) else {}
        if mine.get("disabled"):
            continue
        extensions = tuple(mine.get("extensions") or SERVERS.get(name, ((), []))[0])
        given = shlex.split(mine["command"]) if isinstance(mine.get("command"), str) else mine.get("command")
        commands = [given] if isinstance(given, list) and given else SERVERS.get(name, ((), []))[1]
        command = next((c for c in commands if shutil.which(str(c[0]), path=path)), None)
        if command and extensions:
            found.append((name, extensions, [str(part) for part in command],
                          {str(k): str(v) for k, v in (mine.get("env") or {}).items()},
                          mine.get("initialization_options") or {}))
    return found


@hookimpl
def pre_tool_call(call, agent):
    """The file's text before the change (read now: the server is asked after, never holding the write up)."""
    if call.name not in CHANGING or not agent.config.get("lsp.enabled") or not isinstance(call.args.get("path"), str) \
            or os.path.splitext(call.args["path"])[1] not in _extensions(agent.config):
        return None
    from plugins.tool_args import resolve_path, working_folder

    try:
        path = resolve_path(call.args["path"], call.name, working_folder(agent))
        before = path.read_text(encoding="utf-8") if path.stat().st_size <= MOST_BYTES else None
    except Exception:  # noqa: BLE001 - no file yet, a path the tool will refuse, no text: nothing was there
        before = None
    agent.state.setdefault(BEFORE, {})[call.id] = before
    return None


@hookimpl
def transform_tool_result(call, outcome, agent):
    before = (agent.state.get(BEFORE) or {}).pop(call.id, None) if call.name in CHANGING else None
    if call.name not in CHANGING or outcome.status != "ok" or not agent.config.get("lsp.enabled"):
        return None
    try:
        result = json.loads(outcome.result)
        path = Path(result["path"])
        found = _found(path, before, agent) if path.suffix in _extensions(agent.config) else None
    except (ValueError, KeyError, TypeError):
        return None
    if not found:
        return None
    secrets = getattr(agent, "secrets", None)  # a key in the code can be in an error message: masked as results are
    return json.dumps({**result, "lsp_diagnostics": [secrets.mask(line) for line in found] if secrets else found})


def _extensions(config) -> set:
    return {ext for _, extensions, *_ in servers(config) for ext in extensions}


def _found(path: Path, before, agent) -> list:
    """The errors the server reports in ``path`` now and did not in ``before``, one line each."""
    from plugins.prompt.project import git_root

    root = git_root(path.parent) if path.parent.is_dir() else None
    if root is None or not path.is_file() or path.stat().st_size > MOST_BYTES:
        return []
    server = _server(path, root, agent)
    if server is None:
        return []
    from plugins.lsp.client import ServerGone

    wait, uri = float(agent.config.get("lsp.wait_timeout")), path.as_uri()
    try:
        now_text = path.read_text(encoding="utf-8")
        if before is None:  # a new file: all it has is new
            earlier = []
        elif before == server.texts.get(uri):  # the server had this text last: what it said of it stands
            earlier = server.diagnostics.get(uri, (0, []))[1]
        else:
            earlier = server.diagnose(path, before, wait) or []
        after = server.diagnose(path, now_text, wait)
    except (ServerGone, OSError, UnicodeDecodeError) as exc:
        log.info("lsp: %s: %s", server.name, exc)
        return []
    return said(new_errors(earlier, after or []))


def new_errors(earlier: list, after: list) -> list:
    """The errors (severity 1, or none given) of ``after`` beyond those of ``earlier`` with the same message."""
    from collections import Counter

    key = lambda d: (str(d.get("message")), str(d.get("code")), str(d.get("source")))  # noqa: E731
    had = Counter(key(d) for d in earlier if (d.get("severity") or 1) == 1)
    fresh = []
    for d in after:
        if (d.get("severity") or 1) != 1:
            continue
        if had[key(d)]:
            had[key(d)] -= 1
        else:
            fresh.append(d)
    return fresh


def said(diagnostics: list) -> list:
    """``line:column: message [code] (source)``, each on one line and cut short."""
    out = []
    for d in diagnostics[:MOST_SAID]:
        start = (d.get("range") or {}).get("start") or {}
        parts = [" ".join(str(d.get("message") or "").split())[:300]]
        parts += [f"[{str(d['code'])[:80]}]"] if d.get("code") not in (None, "") else []
        parts += [f"({str(d['source'])[:80]})"] if d.get("source") else []
        out.append(f"{int(start.get('line', 0)) + 1}:{int(start.get('character', 0)) + 1}: {' '.join(parts)}")
    return out + ([f"... and {len(diagnostics) - MOST_SAID} more"] if len(diagnostics) > MOST_SAID else [])


def _server(path: Path, root: Path, agent):
    """The running server for ``path``'s language in ``root``, started now if none is; None when none can run."""
    from kernel.types import ToolError
    from plugins.core_tools.sandbox import Sandbox
    from plugins.lsp.client import Server, ServerGone
    from plugins.tool_args import tool_environment

    import time

    with _lock:
        idle = [key for key, s in _running.items() if s is not None and time.monotonic() - s.last_used > IDLE]
        for key in idle:
            _running.pop(key).close()
    for name, extensions, command, env, options in servers(agent.config):
        if path.suffix not in extensions:
            continue
        with _lock:
            if (name, root) not in _running:
                try:  # in the tool sandbox: some servers run a repository's build scripts (rust-analyzer's build.rs)
                    argv, _ = Sandbox.from_config(agent.config).wrap(command, str(root), readable=_read(command, root))
                    environment = {**tool_environment(agent.secrets), **env}
                    _running[name, root] = Server(argv, root, LANGUAGES.get(path.suffix, path.suffix[1:]),
                                                  environment, options, name=os.path.basename(command[0]))
                except (ServerGone, OSError, ToolError) as exc:
                    log.warning("lsp: %s could not start in %s: %s", command[0], root, exc)
                    _running[name, root] = None
            server = _running[name, root]
        if server is not None and server.alive():
            return server
    return None


def _read(command: list, root: Path) -> tuple:
    """What the server reads that the sandbox's own /tmp would hide: the repository, and the folders of the program
    and the files its command names (a virtual environment in /tmp, a script of its own)."""
    import shutil

    named = [shutil.which(command[0]) or command[0], *(p for p in command[1:] if os.path.isabs(p))]
    return (str(root), *dict.fromkeys(os.path.dirname(os.path.dirname(os.path.abspath(p))) for p in named
                                      if os.path.exists(p)))


@atexit.register
def _end_all() -> None:
    for server in list(_running.values()):
        if server is not None:
            server.close()


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    from plugins.doctor.hookspecs import OK, Check

    if not agent.config.get("lsp.enabled"):
        return None
    found = servers(agent.config)
    text = ", ".join(f"{name} ({os.path.basename(command[0])})" for name, _, command, *_ in found)
    return [Check("lsp", OK, f"language servers for the files the agent writes: {text}" if found else
                  "no language server on PATH (pyright, pylsp, typescript-language-server, gopls, rust-analyzer, "
                  "clangd): the file tools check Python, JSON, YAML and TOML syntax only")]
