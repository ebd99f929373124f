"""Which variables of the environment hold keys, and masking of their values where they still turn up (a tool's
output, the model's answer). Which variables those are is the host's to say (``Settings.key_envs()``: those a
provider setting names, and the environment's secret-looking ones); ``passthrough`` names those tools may still see
(``tools.env_passthrough``), which :func:`plugins.tool_args.tool_environment` leaves in a tool's environment."""

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

    def mask(self, text: str) -> str:
        """``text`` with every known key value replaced by a marker naming its variable."""
        if not self.values or not isinstance(text, str):
            return text
        for value, name in self.values:
            if value in text:
                text = text.replace(value, f"[hermes: the value of ${name} was masked]")
        return text
