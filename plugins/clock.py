"""What time it is for the user: ``HERMES_TIMEZONE``, else config.yaml's ``timezone`` (an IANA name, hermes-agent's
key), else this machine's zone. The system prompt's date and the cron schedules use it."""

from __future__ import annotations

import logging
import os
import time
from datetime import datetime, tzinfo
from typing import Any, Optional

_said: set = set()
_from_file: dict = {}  # config.yaml's stamp -> its timezone (read once per change, for callers without config)


def zone(config: Any = None) -> Optional[tzinfo]:
    """The user's zone (None: this machine's); a name that is no zone is one warning, then this machine's."""
    name = os.environ.get("HERMES_TIMEZONE", "").strip()
    if not name:
        name = str((config.get("timezone") if config is not None else _configured()) or "").strip()
    if not name:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        if name not in _said:
            _said.add(name)
            logging.getLogger("hermes.clock").warning("timezone %r is no IANA time zone (Europe/Berlin, "
                                                      "America/New_York, ...); this machine's is used", name)
        return None


def now(config: Any = None, epoch: Optional[float] = None) -> datetime:
    """Now (or the time ``epoch``), in the user's zone."""
    found = zone(config)
    return datetime.fromtimestamp(time.time() if epoch is None else epoch, found).astimezone(found)


def _configured() -> str:
    """``timezone`` of config.yaml, for code that has no config at hand (the cron jobs' times)."""
    from hermes.host.config import ConfigError, load_config
    from hermes.host.paths import config_dir, stamp

    key = stamp(str(config_dir() / "config.yaml"))
    if key not in _from_file:
        try:
            found = load_config(lenient=True).get("timezone") if key else None
        except ConfigError:  # unreadable: the command that reads config says so
            found = None
        _from_file.clear()
        _from_file[key] = found
    return str(_from_file[key] or "")
