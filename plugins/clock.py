"""What time it is for the user: ``HERMES_TIMEZONE``, else config.yaml's ``timezone`` (an IANA name, hermes-agent's
key), else this machine's zone."""

from __future__ import annotations

import logging
import os
from datetime import datetime
from typing import Any

_said: set = set()


def now(config: Any = None) -> datetime:
    """Now, in the user's zone; a zone that does not exist is one warning, then this machine's."""
    name = os.environ.get("HERMES_TIMEZONE", "").strip() or str((config.get("timezone") if config is not None
                                                                  else "") or "").strip()
    if name:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return datetime.now(ZoneInfo(name))
        except (ZoneInfoNotFoundError, ValueError):
            if name not in _said:
                _said.add(name)
                logging.getLogger("hermes.clock").warning("timezone %r is no IANA time zone (Europe/Berlin, "
                                                          "America/New_York, ...); this machine's is used", name)
    return datetime.now().astimezone()
