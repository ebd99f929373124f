"""``hermes_constants``: where hermes keeps its files (the kernel's rules)."""

from __future__ import annotations

import os
from pathlib import Path

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
OPENROUTER_MODELS_URL = f"{OPENROUTER_BASE_URL}/models"
FINISH_REASON_LENGTH = "length"
PARTIAL_STREAM_STUB_ID = "partial-stream-stub"
VALID_REASONING_EFFORTS = ("minimal", "low", "medium", "high", "xhigh")


def get_hermes_home() -> Path:
    """``$HERMES_HOME`` if set, else the kernel's data folder."""
    from hermes.host.paths import data_dir

    return data_dir()


def get_process_hermes_home() -> Path:
    return get_hermes_home()


def get_default_hermes_root() -> Path:
    return get_hermes_home()


def display_hermes_home() -> str:
    home = str(get_hermes_home())
    user = str(Path.home())
    return "~" + home[len(user):] if home.startswith(user + os.sep) else home


def get_hermes_dir(new_subpath: str, old_name: str = "") -> Path:
    home = get_hermes_home()
    old = home / old_name if old_name else None
    if old is not None and old.exists() and not (home / new_subpath).exists():
        return old
    return home / new_subpath


def get_config_path() -> Path:
    from hermes.host.paths import config_dir

    return config_dir() / "config.yaml"


def get_skills_dir() -> Path:
    return get_hermes_home() / "skills"


def get_env_path() -> Path:
    return get_hermes_home() / ".env"


def secure_parent_dir(path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)


def get_real_home(env=None) -> str:
    return str(Path.home())


def is_container() -> bool:
    return os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")


def is_termux() -> bool:
    return "com.termux" in os.environ.get("PREFIX", "")


def is_wsl() -> bool:
    try:
        return "microsoft" in Path("/proc/version").read_text().lower()
    except OSError:
        return False
