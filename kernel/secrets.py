"""A tool's environment without the keys, and masking of key values that still turn up. Which variables
hold keys is the host's to say (``Settings.key_envs()``: those a provider setting names, and the
environment's secret-looking ones); tools see those ``tools.env_passthrough`` names."""

from __future__ import annotations

import os
from typing import Iterable, Mapping, Optional

MIN_MASKED = 8  # shorter values ("1", "true") would mask ordinary text


class Secrets:
    """The secret variables (``names``) of one agent's environment."""

    def __init__(self, names: Iterable[str] = (), passthrough: Iterable[str] = (),
                 environ: Optional[Mapping[str, str]] = None):
        self.environ = os.environ if environ is None else environ
        self.passthrough = set(passthrough)
        self.names = {name for name in names if name}
        # every known key value, longest first (a key that contains another is masked whole)
        values = {(self.environ[name], name) for name in self.names if name in self.environ}
        self.values = sorted(((v, n) for v, n in values if len(v) >= MIN_MASKED), key=lambda p: -len(p[0]))

    def tool_environment(self, extra: Optional[Mapping[str, str]] = None) -> dict:
        """The environment for a process a tool starts: everything but the secrets
        (unless passed through by name)."""
        env = {k: v for k, v in self.environ.items() if k not in self.names or k in self.passthrough}
        env.update(extra or {})
        return env

    def mask(self, text: str) -> str:
        """``text`` with every known key value replaced by a marker naming its variable."""
        if not self.values or not isinstance(text, str):
            return text
        for value, name in self.values:
            if value in text:
                text = text.replace(value, f"[hermes: the value of ${name} was masked]")
        return text
