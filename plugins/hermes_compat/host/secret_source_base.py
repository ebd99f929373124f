"""``agent.secret_sources.base``: the contract of hermes-agent's secret sources (0.19), for a plugin that registers one
with ``ctx.register_secret_source``. hermes calls its ``fetch(cfg, home_path)`` once per process when config.yaml's
``secrets.<name>`` section turns it on, waits ``fetch_timeout_seconds`` at most, and puts what it returns into the
environment as it does its own sources' (:mod:`plugins.secret_sources`): after 1Password's and Bitwarden's, never
over a variable they set, nor over the ones ``protected_env_vars`` names."""

from __future__ import annotations

import os
import re
import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Sequence

SECRET_SOURCE_API_VERSION = 1  # a source built against another is left out, with a warning
DEFAULT_FETCH_TIMEOUT_SECONDS = 120.0
DEFAULT_CLI_TIMEOUT_SECONDS = 30.0


class ErrorKind(str, Enum):
    """Why a fetch gave nothing (``FetchResult.error_kind``)."""

    NOT_CONFIGURED = "not_configured"
    BINARY_MISSING = "binary_missing"
    AUTH_FAILED = "auth_failed"
    AUTH_EXPIRED = "auth_expired"
    REF_INVALID = "ref_invalid"
    NETWORK = "network"
    EMPTY_VALUE = "empty_value"
    TIMEOUT = "timeout"
    INTERNAL = "internal"


@dataclass
class FetchResult:
    """What a fetch found: ``secrets`` (variable -> value), ``warnings`` to say, or an ``error``."""

    secrets: Dict[str, str] = field(default_factory=dict)
    applied: List[str] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    error: Optional[str] = None
    error_kind: Optional[ErrorKind] = None
    binary_path: Optional[Path] = None

    @property
    def ok(self) -> bool:
        return self.error is None


class SecretSource(ABC):
    """A backend that reads keys from a secret manager. ``name`` is its section under ``secrets:``; ``shape``
    ``mapped`` (the user binds each variable) or ``bulk`` (a whole project's)."""

    api_version: int = SECRET_SOURCE_API_VERSION
    name: str = ""
    label: str = ""
    shape: str = "mapped"
    scheme: Optional[str] = None

    @abstractmethod
    def fetch(self, cfg: dict, home_path: Path) -> FetchResult:
        """Read the secrets; never raise, never ask anyone (``cfg``: the ``secrets.<name>`` section)."""

    def is_enabled(self, cfg: dict) -> bool:
        return isinstance(cfg, dict) and bool(cfg.get("enabled"))

    def override_existing(self, cfg: dict) -> bool:
        return isinstance(cfg, dict) and bool(cfg.get("override_existing", False))

    def protected_env_vars(self, cfg: dict) -> FrozenSet[str]:
        return frozenset()

    def fetch_timeout_seconds(self, cfg: dict) -> float:
        try:
            seconds = float((cfg or {}).get("timeout_seconds", DEFAULT_FETCH_TIMEOUT_SECONDS))
        except (TypeError, ValueError, AttributeError):
            return DEFAULT_FETCH_TIMEOUT_SECONDS
        return seconds if seconds > 0 else DEFAULT_FETCH_TIMEOUT_SECONDS

    def config_schema(self) -> dict:
        return {}


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?)")
_KEPT = ("PATH", "HOME", "USERPROFILE", "SYSTEMROOT", "TMPDIR", "TEMP", "LANG", "LC_ALL", "XDG_CONFIG_HOME",
         "XDG_DATA_HOME")


def is_valid_env_name(name: str) -> bool:
    return bool(name) and bool(_NAME.match(name))


def scrub_ansi(text: str) -> str:
    """``text`` without terminal escape sequences (a CLI's colours, cursor moves)."""
    return _ESCAPES.sub("", text or "")


def run_secret_cli(argv: Sequence[str], *, allow_env: Sequence[str] = (), extra_env: Optional[Dict[str, str]] = None,
                   timeout: float = DEFAULT_CLI_TIMEOUT_SECONDS) -> subprocess.CompletedProcess:
    """Run a secret manager's CLI with the basics of the environment, the variables ``allow_env`` names and
    ``extra_env`` (never the keys hermes holds), no input and no colours; ``RuntimeError`` when it cannot start or
    does not end within ``timeout``."""
    env = {k: os.environ[k] for k in (*_KEPT, *allow_env) if k in os.environ}
    env.update(extra_env or {})
    env.setdefault("NO_COLOR", "1")
    try:
        done = subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"{Path(str(argv[0])).name} did not end within {timeout:g}s") from exc
    except OSError as exc:
        raise RuntimeError(f"{Path(str(argv[0])).name} could not start: {exc}") from exc
    done.stdout, done.stderr = done.stdout or "", scrub_ansi(done.stderr or "")
    return done
