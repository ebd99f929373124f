"""hermes-agent's shell hooks: commands in config.yaml's ``hooks:`` that run on the hermes hooks' events.

::

    hooks:
      pre_tool_call:
        - command: ~/.hermes/hooks/guard.sh    # run without a shell (shlex-split, ~ expanded)
          matcher: "terminal|patch"             # pre/post_tool_call only: a regex the tool's name must match whole
          timeout: 10                           # seconds, 1 to 300 (default 60)
      pre_llm_call:
        - command: python3 ~/hooks/today.py

Each firing pipes one JSON object to the command's stdin: ``hook_event_name``, ``tool_name``, ``tool_input``,
``session_id``, ``cwd`` and ``extra`` (the hook's other hermes keywords). What it prints may answer:
``{"action": "block", "message": ...}`` or ``{"decision": "block", "reason": ...}`` blocks a ``pre_tool_call``
(so does exit status 2, with stderr as the reason, as in Claude Code); ``{"context": ...}`` adds to a
``pre_llm_call``'s user message. Anything else is ignored. The hooks run as one hermes plugin, ``shell-hooks``,
after the others (a Python plugin's block wins a tie), through the same bridge, so each event carries exactly
hermes-agent's keywords.

A command runs only once approved (``hermes hooks approve``, ``HERMES_ACCEPT_HOOKS=1`` or ``hooks_auto_accept:
true``): the approvals are kept in the data folder's ``shell-hooks-allowlist.json``, hermes-agent's file and format,
so a data folder shared with it shares them. Where hermes-agent lets a tool run, here a guard that cannot answer
(not found, not executable, past its timeout) blocks the call: hooks that guard tools fail closed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from plugins.hermes_compat.discovery import SHELL_HOOKS as NAME, TRUE_WORDS
from plugins.hermes_compat.state import log

ALLOWLIST = "shell-hooks-allowlist.json"
DEFAULT_TIMEOUT, MAX_TIMEOUT = 60, 300
TOOL_EVENTS = ("pre_tool_call", "post_tool_call")
MAX_OUTPUT = 1024 * 1024  # bytes a hook may print (its answer is a line of JSON)
_PAYLOAD_KEYS = {"tool_name", "args", "session_id", "parent_session_id"}  # the rest goes to ``extra``


class HookFailed(Exception):
    """The command did not answer: not found, not executable, past its timeout."""


@dataclass
class Spec:
    """One entry of ``hooks:``."""

    event: str
    command: str
    matcher: Optional[str] = None
    timeout: int = DEFAULT_TIMEOUT

    def matches(self, tool_name: Any) -> bool:
        if not self.matcher:
            return True
        try:
            return isinstance(tool_name, str) and re.fullmatch(self.matcher, tool_name) is not None
        except re.error:
            return tool_name == self.matcher  # said when parsed

    def label(self) -> str:
        return f"{self.event}{f' [{self.matcher}]' if self.matcher else ''}: {self.command}"


def parse(block: Any) -> tuple:
    """``(specs, problems)`` of a ``hooks:`` mapping; a bad entry is a problem and is left out, the others stay."""
    from kernel.hints import did_you_mean
    from plugins.hermes_compat.context import HERMES_HOOKS

    specs: list = []
    problems: list = []
    if block is None:
        return specs, problems
    if not isinstance(block, dict):
        return specs, [f"hooks: must be a mapping of event names to lists, not {type(block).__name__}"]
    for event, entries in block.items():
        if event == "output_spill":  # hermes-agent's setting for long hook output, not an event
            continue
        if event not in HERMES_HOOKS:
            problems.append(f"hooks.{event}: no such event{did_you_mean(str(event), HERMES_HOOKS, 1)}")
            continue
        if not isinstance(entries, list):
            if entries is not None:
                problems.append(f"hooks.{event}: must be a list of entries with a command, not "
                                f"{type(entries).__name__}")
            continue
        for i, raw in enumerate(entries):
            where = f"hooks.{event}[{i}]"
            command = raw.get("command") if isinstance(raw, dict) else None
            if not isinstance(command, str) or not command.strip():
                problems.append(f"{where}: needs a command (a mapping with `command: ...`)" + (
                    f"; YAML reads an unquoted yes, no, on or off as {command}: quote the command"
                    if isinstance(command, bool) else ""))
                continue
            spec = Spec(event, command.strip())
            matcher = raw.get("matcher")
            if isinstance(matcher, str) and matcher.strip():
                if event not in TOOL_EVENTS:
                    problems.append(f"{where}.matcher: only pre_tool_call and post_tool_call have a tool to match; "
                                    f"this hook runs on every {event}")
                else:
                    spec.matcher = matcher.strip()
                    try:
                        re.compile(spec.matcher)
                    except re.error as exc:
                        problems.append(f"{where}.matcher: not a regular expression ({exc}); matched as plain text")
            elif matcher is not None:
                problems.append(f"{where}.matcher: must be text (a regular expression); ignored")
            timeout = raw.get("timeout", DEFAULT_TIMEOUT)
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 1:
                problems.append(f"{where}.timeout: {timeout!r} is not a number of seconds >= 1; "
                                f"{DEFAULT_TIMEOUT} is used")
                timeout = DEFAULT_TIMEOUT
            elif timeout > MAX_TIMEOUT:
                problems.append(f"{where}.timeout: {timeout} is over the most, {MAX_TIMEOUT}; {MAX_TIMEOUT} is used")
                timeout = MAX_TIMEOUT
            spec.timeout = int(timeout)
            specs.append(spec)
    return specs, problems


# --------------------------------------------------------------------------
# Approvals (hermes-agent's file and format)


def allowlist_path() -> Path:
    from hermes.host.paths import data_dir

    return data_dir() / ALLOWLIST


def approvals() -> list:
    """The recorded approvals (dicts with ``event``, ``command``, ``approved_at``); a spoilt file counts as none."""
    try:
        data = json.loads(allowlist_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    entries = data.get("approvals") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def approval_of(spec: Spec, entries: Optional[list] = None) -> Optional[dict]:
    return next((e for e in (approvals() if entries is None else entries)
                 if e.get("event") == spec.event and e.get("command") == spec.command), None)


def _change(edit) -> Any:
    """Edit the approvals under hermes-agent's lock file, then write them whole."""
    import fcntl

    from hermes.host.files import atomic_write

    path = allowlist_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        data = data if isinstance(data, dict) else {}
        entries = [e for e in data.get("approvals") or [] if isinstance(e, dict)]
        entries, answer = edit(entries)
        atomic_write(path, json.dumps({**data, "approvals": entries}, indent=2, sort_keys=True) + "\n")
    return answer


def _iso(stamp: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(stamp, timezone.utc).isoformat().replace("+00:00", "Z")  # hermes-agent's form


def script_mtime(command: str) -> Optional[str]:
    """When the command's script last changed (None: no such file), as an approval records it."""
    script = script_of(command)
    return _iso(os.path.getmtime(script)) if script and os.path.isfile(script) else None


def approve(spec: Spec) -> None:
    entry = {"event": spec.event, "command": spec.command, "approved_at": _iso(time.time()),
             "script_mtime_at_approval": script_mtime(spec.command)}
    _change(lambda entries: ([e for e in entries if (e.get("event"), e.get("command")) != (spec.event, spec.command)]
                             + [entry], None))


def revoke(command: str) -> int:
    """Forget every approval of ``command``; how many there were."""
    return _change(lambda entries: ([e for e in entries if e.get("command") != command],
                                    sum(e.get("command") == command for e in entries)))


def accepts_all(config: Any) -> bool:
    """``HERMES_ACCEPT_HOOKS`` or ``hooks_auto_accept: true``: every configured hook is approved as it loads."""
    if os.environ.get("HERMES_ACCEPT_HOOKS", "").strip().lower() in TRUE_WORDS:
        return True
    value = config.get("hooks_auto_accept") if config is not None else None
    return value is True or (isinstance(value, str) and value.strip().lower() in TRUE_WORDS)


def script_of(command: str) -> str:
    """The script a command runs (the first word with a script's suffix, else the program), expanded: what
    ``hermes hooks list`` checks and an approval remembers the time of."""
    try:
        argv = words(command)
    except ValueError:
        return ""
    return next((w for w in argv if w.endswith((".sh", ".bash", ".py", ".rb", ".pl", ".js", ".mjs", ".ts"))),
                None) or (argv or [""])[0]


def script_problem(command: str) -> Optional[str]:
    """Why the command cannot run as written (None: it can)."""
    import shutil

    try:
        argv = words(command)
    except ValueError as exc:
        return f"cannot be split into words ({exc})"
    if not argv:
        return "is empty"
    if shutil.which(argv[0]) is None:
        return f"{argv[0]}: not found or not executable"
    script = script_of(command)
    if script != argv[0] and not os.path.isfile(script):
        return f"{script}: no such file"
    return None


def words(command: str) -> list:
    """The command's words as a shell splits them, each ``~`` at a word's start expanded (no shell runs it)."""
    return [os.path.expanduser(word) for word in shlex.split(command)]


# --------------------------------------------------------------------------
# Running one


@dataclass
class Ran:
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    error: str = ""  # not found, not executable, timed out


def payload(event: str, kwargs: dict) -> str:
    """The JSON a command reads on stdin (hermes-agent's shape)."""
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    args = kwargs.get("args")
    return json.dumps({"hook_event_name": event, "tool_name": kwargs.get("tool_name"),
                       "tool_input": args if isinstance(args, dict) else None,
                       "session_id": kwargs.get("session_id") or kwargs.get("parent_session_id") or "",
                       "cwd": cwd, "extra": {k: v for k, v in kwargs.items() if k not in _PAYLOAD_KEYS}},
                      ensure_ascii=False, default=str)


def run(spec: Spec, stdin: str) -> Ran:
    """Run the command (its own process group, killed whole when it ends, at its timeout or an interrupt) with
    ``stdin``. Its time counts against its own timeout, not ``plugins.hook_timeout``; its output goes through files,
    and past :data:`MAX_OUTPUT` it is stopped (a hook printing without end would fill memory until its timeout)."""
    import signal
    import subprocess
    import tempfile

    from hermes.host.isolation import WATCHDOG

    ran, started = Ran(), time.monotonic()
    try:
        argv = words(spec.command)
    except ValueError as exc:
        ran.error = f"cannot be split into words: {exc}"
        return ran
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        given.write(stdin.encode("utf-8", "replace"))  # a file: a hook that never reads it cannot block us
        given.seek(0)
        try:
            proc = subprocess.Popen(argv, stdin=given, stdout=out, stderr=err, start_new_session=True)
        except OSError as exc:
            ran.error = f"{argv[0]}: {exc.strerror or exc}"
            return ran
        try:
            with WATCHDOG.waiting():
                while proc.poll() is None:  # short waits, so an interrupt gets in between
                    if time.monotonic() - started >= spec.timeout:
                        ran.error = f"timed out after {spec.timeout}s"
                        return ran
                    if os.fstat(out.fileno()).st_size + os.fstat(err.fileno()).st_size > MAX_OUTPUT:
                        ran.error = f"printed over {MAX_OUTPUT // 1024 // 1024} MB; stopped"
                        return ran
                    try:
                        proc.wait(min(0.05, max(spec.timeout - (time.monotonic() - started), 0.01)))
                    except subprocess.TimeoutExpired:
                        pass
        finally:
            try:  # what it left running goes with it: nothing writes on into files nobody reads
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
            ran.seconds = round(time.monotonic() - started, 3)
        ran.returncode = proc.returncode
        out.seek(0)
        err.seek(0)
        ran.stdout = out.read(MAX_OUTPUT).decode("utf-8", "replace")
        ran.stderr = err.read(MAX_OUTPUT).decode("utf-8", "replace")
    return ran


def answer(event: str, ran: Ran) -> Optional[dict]:
    """What the command's output means to hermes: a block of ``pre_tool_call``, a context, or nothing."""
    text, data = ran.stdout.strip(), None
    if text:
        try:
            data = json.loads(text)
        except ValueError:
            log.warning("shell hook %s: its output is not JSON, ignored: %s", event, text[:200])
    data = data if isinstance(data, dict) else {}
    if event == "pre_tool_call":
        if data.get("action") == "block" or data.get("decision") == "block":
            first, second = ("message", "reason") if data.get("action") == "block" else ("reason", "message")
            message = data.get(first) or data.get(second)
            return {"action": "block", "message": message if isinstance(message, str) and message
                    else "blocked by a shell hook"}
        if ran.returncode == 2:  # Claude Code's convention: exit 2 blocks, stderr says why
            return {"action": "block", "message": ran.stderr.strip()[:2000] or "blocked by a shell hook"}
        return None
    context = data.get("context")
    return {"context": context} if isinstance(context, str) and context.strip() else None


def callback(spec: Spec):
    """The hermes-style callback that runs ``spec`` when its event fires."""

    def fire(**kwargs: Any) -> Optional[dict]:
        if spec.event in TOOL_EVENTS and not spec.matches(kwargs.get("tool_name")):
            return None
        ran = run(spec, payload(spec.event, kwargs))
        if ran.error:
            raise HookFailed(f"`{spec.command}`: {ran.error}")
        if ran.returncode and not (ran.returncode == 2 and spec.event == "pre_tool_call"):
            log.warning("shell hook %s exited %s: %s", spec.label(), ran.returncode, ran.stderr.strip()[:400])
        return answer(spec.event, ran)

    fire.__name__ = fire.__qualname__ = f"shell_hook[{spec.event}:{spec.command}]"
    return fire


# --------------------------------------------------------------------------
# The plugin


def candidate(config: Any, make_candidate) -> Any:
    """The ``shell-hooks`` plugin when config.yaml has hooks (None without)."""
    block = config.get("hooks") if config is not None else None
    if not block:
        return None
    specs, _problems = parse(block)
    cand = make_candidate(name=NAME, source="hermes-compat", target="config.yaml hooks:",
                          description=f"hermes-agent's shell hooks: {len(specs)} command(s) from config.yaml's "
                                      "hooks: (`hermes hooks list`)")
    cand.load = lambda: load(config)
    return cand


_unsaid: list = []  # what the last load found wrong, said when an agent starts (a listing says nothing)


def say_problems() -> None:
    """Warn of the configured hooks' problems once, as the first session starts."""
    for problem in _unsaid:
        log.warning("%s", problem)
    _unsaid.clear()


def load(config: Any) -> Any:
    """The approved hooks as one hermes plugin's record, bridged like any other; the others are said and left out."""
    from plugins.hermes_compat import state
    from plugins.hermes_compat.bridge import build_adapter

    specs, problems = parse(config.get("hooks"))
    record = state.PluginRecord(name=NAME, source="config")
    accept, entries, waiting = accepts_all(config), approvals(), []
    for spec in specs:
        if approval_of(spec, entries) is None:
            if not accept:
                waiting.append(spec)
                continue
            approve(spec)
        record.hooks.setdefault(spec.event, []).append(callback(spec))
    if waiting:
        problems.append(f"{len(waiting)} shell hook(s) of config.yaml not approved, so not run: "
                        f"{'; '.join(s.label() for s in waiting)}; `hermes hooks approve` approves them (or "
                        "HERMES_ACCEPT_HOOKS=1, or hooks_auto_accept: true)")
    _unsaid[:] = problems
    state.add(record)
    return build_adapter(record)
