"""Numbers the command line takes: ``--timeout nan`` or ``--every inf`` is no duration, no size and no interval, and
click's ranges let both through (a comparison with nan is always false)."""

from __future__ import annotations

import math

import click


class FiniteRange(click.FloatRange):
    """A :class:`click.FloatRange` that refuses ``nan`` and ``inf`` with click's one-line usage error."""

    name = "finite float range"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number
