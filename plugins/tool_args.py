"""Small helpers shared by the built-in tool plugins: argument checking that
speaks to the model, config settings that never crash a plugin, atomic writes.

The model sends arguments as JSON; a wrong or missing one becomes a
:class:`kernel.types.ToolError` whose message says exactly what to send instead.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from pathlib import Path
from typing import Any, Mapping, Optional

from kernel.types import ToolError

log = logging.getLogger("hermes.plugins.tools")

_MISSING = object()

_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
               dict: "an object"}


def _type_ok(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:  # not NaN: it compares false with every limit, so no check would stop it
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    return isinstance(value, kind)


def check_args(args: Any, tool: str) -> dict:
    """The argument object itself must be a JSON object."""
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise ToolError(f"{tool}: arguments must be a JSON object, got {type(args).__name__}")
    return args


def arg(args: dict, name: str, kind: type, *, tool: str, default: Any = _MISSING) -> Any:
    """Read one argument; ``default`` missing means the argument is required.

    Lenient where the intent is unambiguous (models often send numbers and
    booleans as strings): ``"5"`` for an integer, ``"true"`` for a boolean,
    ``'["a"]'`` for a list.
    """
    value = args.get(name, None)
    if value is None:
        if default is _MISSING:
            raise ToolError(f"{tool}: missing required argument '{name}' ({_TYPE_NAMES.get(kind, kind.__name__)})")
        return default
    if _type_ok(value, kind):
        return value
    if kind is int and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    if kind is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind is float and isinstance(value, str):
        try:
            if (number := float(value)) == number:
                return number
        except ValueError:
            pass
    if kind is bool and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if kind in (list, dict) and isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:  # a list or object sent as its JSON text: some models encode nested values twice
            if isinstance(parsed := json.loads(value), kind):
                return parsed
        except (ValueError, RecursionError):
            pass
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    raise ToolError(
        f"{tool}: argument '{name}' must be {_TYPE_NAMES.get(kind, kind.__name__)}, got {type(value).__name__} {shown}"
    )


def setting(config: Any, key: str, default: Any, kind: type = int, minimum: Any = None) -> Any:
    """A plugin setting from config; a wrong type or out-of-range value falls
    back to the default with a warning, so a typo never disables the tools."""
    if config is None:
        return default
    try:
        value = config.get(key, default)
    except Exception:  # a config object without our key
        return default
    if value is None:
        return default
    if not _type_ok(value, kind) or (minimum is not None and value < minimum):
        log.warning("config %s: expected %s >= %s, got %r; using %r", key, kind.__name__, minimum, value, default)
        return default
    return value


ORIGIN = "deliver.origin"  # agent.state key: the chat a gateway agent answers ("telegram:123"), for a job it schedules
WORKING_FOLDER = "tools.working_folder"  # agent.state key: the folder the agent's last terminal command ended in


def start_folder(config: Any) -> str:
    """The folder an agent's tools start in: ``terminal.cwd`` (hermes-agent's key), or where hermes started."""
    raw = setting(config, "terminal.cwd", "", str).strip()
    if raw in ("", ".", "./"):
        return os.getcwd()
    path = os.path.abspath(os.path.expandvars(os.path.expanduser(raw)))
    if not os.path.isdir(path):
        raise ToolError(f"terminal.cwd is {raw!r}, which is not a folder here: set it to one in config.yaml")
    return path


def tool_environment(secrets: Any, extra: Optional[Mapping[str, str]] = None) -> dict:
    """The environment of a process a tool starts: ``secrets``' environment without its keys (but those passed
    through by name), nor a variable named as a key that came since they were read, and ``extra``."""
    from hermes.host.config import is_secret_name

    env = {k: v for k, v in secrets.environ.items()
           if k in secrets.passthrough or (k not in secrets.names and not is_secret_name(k))}
    env.update(extra or {})
    return env


def working_folder(agent: Any, config: Any = None) -> str:
    """Where ``agent``'s tools work now: the folder its last terminal command ended in (``cd src`` moves the next
    commands and the file tools' relative paths, as in a shell), else :func:`start_folder`."""
    folder = (getattr(agent, "state", None) or {}).get(WORKING_FOLDER)
    if folder and os.path.isdir(folder):  # a folder removed since: back to the start
        return folder
    return start_folder(config if config is not None else getattr(agent, "config", None))


EXPORTED = "tools.exported"  # agent.state key: {name: value, or None when unset} the agent's commands changed
SHELL_OWN = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})  # each shell sets these itself


def with_exports(agent: Any, environ: dict) -> dict:
    """``environ`` with what ``agent``'s terminal commands exported (``export``, ``source .venv/bin/activate``) and
    unset, as a shell keeps them for its next command."""
    changes = (getattr(agent, "state", None) or {}).get(EXPORTED)
    if not changes:
        return environ
    env = {**environ, **{name: value for name, value in changes.items() if value is not None}}
    for name in [name for name, value in changes.items() if value is None]:
        env.pop(name, None)
    return env


def remember_exports(agent: Any, started: dict, ended: dict) -> None:
    """Keep what a command changed in the environment it ``started`` with (the ``ended`` one) for the next."""
    state = getattr(agent, "state", None)
    if isinstance(state, dict):
        changes = dict(state.get(EXPORTED) or {})
        changes.update((name, ended.get(name)) for name in (started.keys() | ended.keys()) - SHELL_OWN
                       if started.get(name) != ended.get(name))
        state[EXPORTED] = changes


def resolve_path(raw: str, tool: str, cwd: str | None = None) -> Path:
    """A user path: ``~`` expanded, relative to ``cwd`` (default: the process's working directory)."""
    if not raw.strip():
        raise ToolError(f"{tool}: 'path' is empty")
    if "\x00" in raw:
        raise ToolError(f"{tool}: 'path' contains a NUL character")
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = Path(cwd or os.getcwd()) / path
    return path


def kept(folder: str, name: str, data: bytes, most: int) -> str:
    """``data`` written to ``name`` in the data folder's ``folder`` (0600, the folder 0700), the newest ``most`` files of
    the same suffix kept; its path, or "" when it cannot be written (the caller's result still stands)."""
    import contextlib

    from hermes.host.paths import data_dir

    where = data_dir() / folder
    path = where / name
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
            fh.write(data)
    except OSError:
        return ""
    with contextlib.suppress(OSError):  # another process pruning at once: its loss, not this file's
        for old in sorted(where.glob(f"*{path.suffix}"), key=lambda p: p.stat().st_mtime)[:-most]:
            old.unlink(missing_ok=True)
    return str(path)


def clip(text: str, limit: int, what: str = "characters") -> str:
    """Keep the head and the tail of a long text and say how much was cut."""
    if len(text) <= limit:
        return text
    head = int(limit * 0.4)
    tail = limit - head
    dropped = len(text) - head - tail
    return f"{text[:head]}\n\n[... {dropped} {what} omitted ...]\n\n{text[-tail:]}"


def endpoint_error(tool: str, what: str, exc: Exception) -> ToolError:
    """The one line the model reads when an openai SDK call to an endpoint of ``what`` (images, speech) failed: its
    status and message, or why nothing came."""
    body = getattr(exc, "body", None)
    status = getattr(exc, "status_code", None)
    if status is None:
        first = str(exc).splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        return ToolError(f"{tool}: the {what} endpoint did not answer ({first})")
    inner = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else body
    said = str(inner.get("message") if isinstance(inner, dict) and inner.get("message") else getattr(exc, "message", exc))
    return ToolError(f"{tool}: the {what} endpoint said {status}: {said[:300]}")


def fresh_path(folder: Path, words: str, suffix: str, fallback: str) -> Path:
    """A new file in ``folder`` named by the time and the first words of ``words`` (what the model asked for), never
    one that is there: ``20261207-101500-a-red-fox.png``, then ``...-a-red-fox-2.png``."""
    slug = "-".join("".join(c if c.isalnum() else " " for c in words.lower()).split()[:6])[:48] or fallback
    stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"
    taken = {p.stem for p in folder.glob(stem + "*")} if folder.is_dir() else set()
    return folder / (next(n for n in (stem, *(f"{stem}-{i}" for i in range(2, 10**6))) if n not in taken) + suffix)


def headline(tool_name: str, args: Any, most: int = 120) -> str:
    """A call in one line, for people: the tool and the first of its arguments that says what it works on."""
    given = args if isinstance(args, dict) else {}
    detail = next((given[k] for k in ("command", "path", "pattern", "query", "url", "action", "code") if given.get(k)),
                  "")
    first = str(detail).strip().splitlines()[0][:most] if str(detail).strip() else ""
    return f"{tool_name}: {first}" if first else tool_name


def is_interrupted(agent: Any) -> bool:
    """Whether the user interrupted ``agent`` (long tools poll this)."""
    return bool(getattr(agent, "interrupted", False)) if agent is not None else False


def carried_key(text: str, agent: Any) -> str:
    """The variable whose key ``text`` (a URL, a query, a command) carries, as it is, percent-encoded, in hex or in
    base64 (within a longer encoded text too); "" for none. A model talked into sending one (a page's hidden
    instructions) would hand it to whoever reads the other end, and such instructions ask for it encoded."""
    from urllib.parse import unquote_plus

    plain = unquote_plus(text)
    return next((name for value, name in getattr(getattr(agent, "secrets", None), "values", ())
                 if value in text or value in plain or any(form in text for form in _encoded(value))), "")


@functools.lru_cache(maxsize=64)
def _encoded(value: str) -> tuple:
    """``value`` in hex, and the part of its base64 (and base64url) that stays the same wherever it sits in a longer
    encoded text: base64 turns 3 bytes into 4 characters, so each of the 3 offsets has its own; parts under 16
    characters (a short key) are left out, since they would turn up by chance."""
    import base64

    raw = value.encode()
    forms = [raw.hex(), raw.hex().upper()]
    for shift in range(3):
        coded = base64.b64encode(bytes(shift) + raw).decode()
        first, last = -(-shift // 3), (shift + len(raw)) // 3  # the 4-character groups made of the key's bytes alone
        core = coded[4 * first:4 * last]
        if len(core) >= 16:
            forms += [core, core.replace("+", "-").replace("/", "_")]
    return tuple(forms)


def masked(value: Any, agent: Any) -> Any:
    """``value`` (a tool call's arguments) with the value of every key the agent knows masked in its strings: what a
    front end shows of a call (the model may have typed a key into it)."""
    mask = getattr(getattr(agent, "secrets", None), "mask", None)
    if mask is None or not getattr(agent.secrets, "values", None):
        return value
    return each_string(value, mask)


def each_string(value: Any, change: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with ``change`` applied to every string in it."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {key: each_string(item, change) for key, item in value.items()}
    return [each_string(item, change) for item in value] if isinstance(value, list) else value


def masked_calls(message: dict, agent: Any) -> dict:
    """``message`` with the keys a model typed into its tool calls' arguments masked (:func:`masked`): the kernel masks
    the answers and the tools' results, and what leaves the turn (the store, ``run --json``, a trajectory) must not
    carry a key in a call either. Within the turn the model reads its calls as it wrote them."""
    calls = message.get("tool_calls")
    if not calls:
        return message
    return {**message, "tool_calls": [
        {**call, "function": {**call["function"], "arguments": masked(call["function"].get("arguments"), agent)}}
        if isinstance(call, dict) and isinstance(call.get("function"), dict) else call for call in calls]}


def masked_result(result: Any, agent: Any) -> dict:
    """A turn's result (``TurnResult.to_dict()``) as it leaves the process: its messages' calls masked."""
    data = result.to_dict()
    data["messages"] = [masked_calls(message, agent) for message in data.get("messages") or []]
    return data
