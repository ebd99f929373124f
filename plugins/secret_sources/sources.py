"""Reading the two sources (``op read`` per reference, ``bws secret list`` per project), keeping what they gave for
``cache_ttl_seconds``, and putting it into the environment."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from hermes.host.config import Key
from plugins.secret_sources import KEYS

log = logging.getLogger("hermes.secrets")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
TIMEOUT = 30  # seconds one CLI call may take
DEFAULTS = {key[0]: key[2] for key in KEYS}


@dataclass
class Report:
    """What one source did this start (for ``hermes doctor``)."""

    applied: list = field(default_factory=list)
    kept: list = field(default_factory=list)  # the environment's values left in place (override_existing: false)
    error: str = ""
    cached: bool = False


REPORTS: dict = {}  # source -> Report, this process's
CLAIMED: set = set()  # the variables a source set this start: a later source does not replace them


BASE_ENV = ("PATH", "HOME", "USER", "TMPDIR", "LANG", "LC_ALL", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR")
SESSION = {"onepassword": ("OP_SESSION_", "OP_ACCOUNT", "OP_CONNECT_HOST", "OP_CONNECT_TOKEN"), "bitwarden": ()}


def _child_env(name: str, environ: dict, extra: dict) -> dict:
    """A CLI's environment: the basics, its own session variables and ``extra``; never the other keys hermes holds
    by now (those of .env among them)."""
    env = {k: v for k, v in environ.items() if k in BASE_ENV or SESSION[name] and k.startswith(SESSION[name])}
    return {**env, **extra, "NO_COLOR": "1"}


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", line)[:300]  # a CLI's colours are no part of the message


def onepassword(get: Callable, environ: dict) -> tuple:
    """``(values, error)`` from ``op read`` of each reference of ``secrets.onepassword.env``."""
    from plugins.bounded import find_program, run_within

    refs = get("env") or {}
    if not isinstance(refs, dict) or not refs:
        return {}, "env maps no variable to a reference (OPENAI_API_KEY: op://vault/item/field)"
    bad = [str(n) for n, ref in refs.items() if not NAME.match(str(n)) or not str(ref).startswith("op://")]
    if bad:
        return {}, f"not a variable name and an op:// reference: {', '.join(bad)}"
    program = find_program(get("binary_path") or "op")
    if program is None:
        return {}, "the op CLI is not installed (https://developer.1password.com/docs/cli)"
    token = environ.get(get("service_account_token_env") or "")
    env = _child_env("onepassword", environ, {"OP_SERVICE_ACCOUNT_TOKEN": token} if token else {})
    account = ["--account", get("account")] if get("account") else []
    values = {}
    for name, ref in refs.items():  # one after the other: the 1Password app may ask the person for each
        ran, = run_within([[program, "read", "--no-newline", *account, "--", str(ref)]], TIMEOUT, env)
        if ran is None or ran[0] != 0:
            why = "no answer within 30 s" if ran is None else _first_line(ran[2]) or f"status {ran[0]}"
            return {}, f"op read {ref} failed: {why}"
        values[str(name)] = ran[1]
    return values, ""


def bitwarden(get: Callable, environ: dict) -> tuple:
    """``(values, error)``: every secret of ``project_id`` under its key, from ``bws secret list``."""
    from plugins.bounded import find_program, run_within

    token_name = get("access_token_env") or "BWS_ACCESS_TOKEN"
    if not environ.get(token_name):
        return {}, f"{token_name} is not set (the machine account's access token, in the environment or .env)"
    if not get("project_id"):
        return {}, "project_id is not set"
    program = find_program("bws")
    if program is None:
        return {}, "the bws CLI is not installed (https://bitwarden.com/help/secrets-manager-cli/)"
    env = _child_env("bitwarden", environ, {"BWS_ACCESS_TOKEN": environ[token_name],
                                            **({"BWS_SERVER_URL": get("server_url")} if get("server_url") else {})})
    ran, = run_within([[program, "secret", "list", get("project_id"), "--output", "json"]], TIMEOUT, env)
    if ran is None or ran[0] != 0:
        return {}, "bws secret list failed: " + ("no answer within 30 s" if ran is None else
                                                 _first_line(ran[2]) or f"status {ran[0]}")
    try:
        items = json.loads(ran[1])
    except ValueError:
        return {}, "bws secret list did not print JSON"
    values, skipped = {}, []
    for item in items if isinstance(items, list) else ():
        key, value = (item.get("key"), item.get("value")) if isinstance(item, dict) else (None, None)
        if isinstance(key, str) and NAME.match(key) and isinstance(value, str):
            values[key] = value
        elif key is not None:
            skipped.append(str(key))
    if skipped:
        log.warning("secrets.bitwarden: keys that are no variable names were left out: %s", ", ".join(skipped))
    return values, ""


PULLS = {"onepassword": (onepassword, ("env", "account", "binary_path")),
         "bitwarden": (bitwarden, ("project_id", "server_url"))}
TOKENS = {"onepassword": ("service_account_token_env", "OP_SERVICE_ACCOUNT_TOKEN"),
          "bitwarden": ("access_token_env", "BWS_ACCESS_TOKEN")}


def _cache_path(name: str):
    from hermes.host.paths import data_dir

    return data_dir() / "cache" / f"secrets-{name}.json"


def _fingerprint(name: str, get: Callable, environ: dict) -> str:
    """What the kept values were read with: the source's settings and a hash of its token and sessions (never
    themselves): signed in as someone else, the values are asked for again."""
    import hashlib

    fields, (token_key, token_default) = PULLS[name][1], TOKENS[name]
    token = environ.get(get(token_key) or token_default, "") + "".join(
        f"\n{k}={v}" for k, v in sorted(_child_env(name, environ, {}).items()) if k not in BASE_ENV)
    raw = json.dumps([name, {f: get(f) for f in fields}, hashlib.sha256(token.encode()).hexdigest()],
                     sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def _cached(name: str, fingerprint: str, ttl: float) -> Optional[dict]:
    try:
        kept = json.loads(_cache_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    fresh = isinstance(kept, dict) and kept.get("fingerprint") == fingerprint \
        and 0 <= time.time() - float(kept.get("time", 0)) < ttl and isinstance(kept.get("values"), dict)
    return kept["values"] if fresh else None


def _keep(name: str, fingerprint: str, values: dict) -> None:
    path = _cache_path(name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # keys: the user's eyes only
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"fingerprint": fingerprint, "time": time.time(), "values": values}, out)
        os.replace(temporary, path)
    except OSError as exc:
        log.warning("secrets.%s: cannot keep the values in %s: %s", name, path, exc.strerror or exc)


def apply_all(config: Any, environ: Optional[dict] = None) -> dict:
    """Read each enabled source (1Password first) and set what it gave in ``environ`` (``os.environ``); the
    reports, also kept in :data:`REPORTS`."""
    from hermes.host.paths import config_dir
    from plugins.hermes_compat.dotenv import load

    environ = os.environ if environ is None else environ
    load(config_dir())  # a token may be in .env, read into the environment before the first provider is built
    for name in PULLS:
        def get(key, name=name):  # the declarations are not in force yet while register_config runs: defaults here
            value = config.get(f"secrets.{name}.{key}")
            return DEFAULTS[f"secrets.{name}.{key}"] if value is None else value

        if get("enabled") is not True or name in REPORTS:  # read once a process (a second host: already set)
            continue
        report = REPORTS[name] = Report()
        ttl = float(get("cache_ttl_seconds") or 0)
        fingerprint = _fingerprint(name, get, environ)
        values = _cached(name, fingerprint, ttl) if ttl else None
        report.cached = values is not None
        if values is None:
            values, report.error = PULLS[name][0](get, environ)
            if report.error:
                log.warning("secrets.%s: %s; going on with the keys the environment and .env have", name,
                            report.error)
                continue
            if ttl:
                _keep(name, fingerprint, values)
        protected = {get(TOKENS[name][0]) or TOKENS[name][1], TOKENS[name][1]}  # the token that reads the vault
        _put(values, report, bool(get("override_existing")), protected, environ)
    return REPORTS


def _put(values: dict, report: Report, override: bool, protected: set, environ: dict) -> None:
    """Set what a source gave, unless an earlier source of this start set it or (without ``override``) the
    environment has it."""
    for variable, value in values.items():
        if variable in protected or variable in CLAIMED:
            continue
        if environ.get(variable) and environ[variable] != value and not override:  # an empty one is no value
            report.kept.append(variable)
            continue
        environ[variable] = value
        CLAIMED.add(variable)
        report.applied.append(variable)


def read_sources(sources: list, declare: Callable, config: Any, environ: Optional[dict] = None) -> None:
    """hermes plugins' sources (``ctx.register_secret_source``), each read when its ``secrets.<name>`` section turns
    it on, within its ``fetch_timeout_seconds``; after the built-in ones."""
    import threading

    from hermes.host.paths import data_dir

    for source in sources:
        declare(Key(f"secrets.{source.name}", dict, {}, f"the settings of {getattr(source, 'label', '') or source.name}"
                    f", a plugin's secret source: enabled, override_existing and its own"))
    environ = os.environ if environ is None else environ
    data = getattr(config, "data", None) or {}
    sections = data.get("secrets") if isinstance(data.get("secrets"), dict) else {}
    for source in sorted(sources, key=lambda s: getattr(s, "shape", "") == "bulk"):  # a binding before a dump
        name, cfg = source.name, sections.get(source.name) or {}
        try:
            if not source.is_enabled(cfg) or name in REPORTS:
                continue
            report, box = REPORTS.setdefault(name, Report()), {}
            reader = threading.Thread(target=lambda: box.update(result=source.fetch(cfg, data_dir())), daemon=True)
            reader.start()
            reader.join(source.fetch_timeout_seconds(cfg))
            result = box.get("result")
            if result is None or getattr(result, "error", None):
                report.error = "no answer within the time it has" if result is None else str(result.error)
                log.warning("secrets.%s: %s; going on with the keys the environment and .env have", name, report.error)
                continue
            for warning in getattr(result, "warnings", None) or ():
                log.warning("secrets.%s: %s", name, warning)
            values = {k: v for k, v in (result.secrets or {}).items() if isinstance(v, str) and NAME.match(str(k))}
            _put(values, report, bool(source.override_existing(cfg)), set(source.protected_env_vars(cfg)), environ)
        except Exception as exc:  # a plugin's source that breaks its contract: said, and hermes goes on
            REPORTS.setdefault(name, Report()).error = f"{type(exc).__name__}: {exc}"
            log.warning("secrets.%s failed: %s: %s", name, type(exc).__name__, exc)
