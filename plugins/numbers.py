"""Numbers the command line takes: ``--timeout nan`` or ``--every inf`` is no duration, no size and no interval, and
click's ranges let both through (a comparison with nan is always false); and a time as ``--since`` takes it."""

from __future__ import annotations

import math
import re
import time

import click


class FiniteRange(click.FloatRange):
    """A :class:`click.FloatRange` that refuses ``nan`` and ``inf`` with click's one-line usage error."""

    name = "finite float range"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def cutoff(age: str, option: str = "--older-than") -> float:
    """The time ``option`` names: a duration before now (``30d``, ``12h``, ``2w``, ``30m``; a bare number is days) or
    a local date (``2026-11-01``)."""
    from datetime import datetime

    text = age.strip().lower()
    if found := re.fullmatch(r"(\d+(?:\.\d+)?)\s*([mhdw]?)", text):
        return time.time() - float(found[1]) * {"m": 60, "h": 3600, "d": 86400, "w": 604800}[found[2] or "d"]
    try:
        return datetime.strptime(text, "%Y-%m-%d").timestamp()
    except ValueError:
        raise click.BadParameter(f"{age!r}: expected a duration (30d, 12h, 2w, 30m) or a date (2026-11-01)",
                                 param_hint=f"'{option}'") from None
