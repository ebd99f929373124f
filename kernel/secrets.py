"""Which variables hold keys, a tool's environment without them, and masking
of key values that still turn up. A secret is a variable some ``api_key_env``
names, a well-known provider variable, or one ending in ``_API_KEY``,
``_TOKEN``, ``_SECRET`` or ``_PASSWORD``; tools see those ``tools.env_passthrough`` names."""

from __future__ import annotations

import os
from typing import Iterable, Mapping, Optional

WELL_KNOWN = frozenset({
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "MISTRAL_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY", "COHERE_API_KEY", "AZURE_OPENAI_API_KEY", "NOUS_API_KEY", "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN",
})
SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_MASKED = 8  # shorter values ("1", "true") would mask ordinary text


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper in WELL_KNOWN or upper.endswith(SUFFIXES)


class Secrets:
    """The secret variables of one agent's environment."""

    def __init__(self, key_envs: Iterable[str] = (), passthrough: Iterable[str] = (),
                 environ: Optional[Mapping[str, str]] = None):
        self.environ = os.environ if environ is None else environ
        self.passthrough = set(passthrough)
        self.key_envs = {name for name in key_envs if name}
        self.names = {name for name in self.environ if name in self.key_envs or is_secret_name(name)}
        # every known key value, longest first (a key that contains another is masked whole)
        values = {(self.environ[name], name) for name in self.names | self.key_envs if name in self.environ}
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
