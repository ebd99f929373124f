"""The memory plugin's config keys (declared through ``register_config``)."""

from __future__ import annotations

from typing import Any

from kernel.keys import Key

CONFIG_KEYS = [
    Key("memory.provider", str, "", "the external memory backend to use (`hermes memory status` lists them, "
        "`setup` chooses)", names="memory_backends"),
    Key("memory.memory_enabled", bool, True, "keep MEMORY.md, the agent's notes, in the system prompt"),
    Key("memory.user_profile_enabled", bool, True, "keep USER.md, what the agent knows about you, in the prompt"),
    Key("memory.memory_char_limit", int, 2200, "the size limit of MEMORY.md in characters", minimum=1),
    Key("memory.user_char_limit", int, 1375, "the size limit of USER.md in characters", minimum=1),
    Key("memory.prefetch_timeout", float, 8, "seconds a backend may take to recall before the model call", minimum=0.1),
]
DEFAULTS = {k.name: k.default for k in CONFIG_KEYS}


def get(config: Any, name: str) -> Any:
    """A memory setting, with its declared default when config.yaml has none."""
    return config.get(name, DEFAULTS[name])
