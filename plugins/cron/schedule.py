"""When a job runs, in hermes-agent's forms: ``30m`` (``2h``, ``1d``, ``90s``) once after that long; ``every 30m``
again and again; a cron expression (``0 9 * * 1-5``: minute, hour, day of month, month, day of week; ``*``,
lists, ranges, ``/step``, ``jan``..``dec``, ``sun``..``sat``) in the user's time; an ISO time (``2026-12-24T09:00``)
once. Times are the user's (``timezone``, ``HERMES_TIMEZONE``, else the machine's), kept as ISO text with their
offset."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Optional

_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hr": 3600, "hour": 3600,
          "d": 86400, "day": 86400, "w": 604800, "week": 604800}
_DURATION = re.compile(r"(\d+)\s*([a-z]+?)s?", re.IGNORECASE)
# minute, hour, day of month, month, day of week: their ranges and names
_FIELDS = ((0, 59, ()), (0, 23, ()), (1, 31, ()),
           (1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")),
           (0, 7, ("sun", "mon", "tue", "wed", "thu", "fri", "sat")))
FORMS = "30m (once), every 2h, 0 9 * * 1-5 (cron) or 2026-12-24T09:00 (once)"


@dataclass(frozen=True)
class Schedule:
    text: str  # as the user wrote it
    kind: str  # "once", "every" or "cron"
    seconds: int = 0  # once after / every
    at: Optional[datetime] = None  # once at
    cron: tuple = ()  # five sets of allowed values, and whether day of month and day of week were both given

    def first(self, now: datetime) -> datetime:
        """When it first runs, scheduled ``now``."""
        if self.kind == "cron":
            return _next_cron(self.cron, now)
        return self.at if self.at is not None else now + timedelta(seconds=self.seconds)

    def after(self, due: datetime, now: datetime) -> Optional[datetime]:
        """When it runs next, its run due at ``due`` taken ``now``; None: never again. Runs missed while nothing
        ran the jobs are not made up: the next one is in the future."""
        if self.kind == "once":
            return None
        if self.kind == "every":
            following = due + timedelta(seconds=self.seconds)
            return following if following > now else now + timedelta(seconds=self.seconds)
        return _next_cron(self.cron, now)


def _seconds(text: str) -> Optional[int]:
    match = _DURATION.fullmatch(text.strip())
    if not match or match.group(2).lower() not in _UNITS:
        return None
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def parse(text: str) -> Schedule:
    """The schedule ``text`` says; ``ValueError`` with a line a person can act on."""
    text = " ".join(str(text).split())
    lowered = text.lower()
    if lowered.startswith("every "):
        seconds = _seconds(lowered[6:])
        if not seconds or seconds < 60:
            raise ValueError(f"'{text}': 'every' takes a duration of at least a minute (every 30m, every 2h)")
        return Schedule(text, "every", seconds=seconds)
    if (seconds := _seconds(lowered)) is not None:
        if seconds < 1:
            raise ValueError(f"'{text}': a duration must be more than nothing")
        return Schedule(text, "once", seconds=seconds)
    if len(text.split()) == 5:
        return Schedule(text, "cron", cron=_cron(text))
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"'{text}' is not a schedule: use {FORMS}") from None
    if at.tzinfo is None:  # without an offset: the user's time (timezone, HERMES_TIMEZONE), else this machine's
        from plugins.clock import zone

        found = zone()
        at = at.replace(tzinfo=found) if found is not None else at.astimezone()
    return Schedule(text, "once", at=at)


def local_now() -> datetime:
    """Now in the user's zone (``timezone``, ``HERMES_TIMEZONE``): cron expressions are read in it."""
    from plugins.clock import now

    return now().replace(microsecond=0)


def _cron(text: str) -> tuple:
    fields = []
    for part, (low, high, names) in zip(text.lower().split(), _FIELDS):
        allowed = set()
        for item in part.split(","):
            span, _, step = item.partition("/")
            if span == "*":
                first, last = low, high
            else:
                start, dash, end = span.partition("-")
                first = _value(start, names, low, text)
                last = _value(end, names, low, text) if dash else (high if step else first)
            if step and not (step.isdigit() and int(step) > 0):
                raise ValueError(f"'{text}': the step in '{item}' is not a whole number above 0")
            if not low <= first <= last <= high:
                raise ValueError(f"'{text}': '{item}' is outside {low}-{high}")
            allowed.update(range(first, last + 1, int(step) if step else 1))
        fields.append(allowed)
    if 7 in fields[4]:  # both 0 and 7 are Sunday
        fields[4] = (fields[4] - {7}) | {0}
    # POSIX cron: when both days are restricted, a day matching either runs
    both = not text.split()[2].startswith("*") and not text.split()[4].startswith("*")  # as Vixie cron reads */2
    return (*map(frozenset, fields), both)


def _value(word: str, names: tuple, low: int, text: str) -> int:
    if word.isdigit():
        return int(word)
    if word[:3] in names:
        return names.index(word[:3]) + low
    raise ValueError(f"'{text}': '{word}' is not a number{' nor a name' if names else ''} it takes")


def _next_cron(cron: tuple, after: datetime) -> datetime:
    """The first minute after ``after`` the expression allows, in ``after``'s zone (the user's, or this machine's)."""
    from zoneinfo import ZoneInfo

    zone = after.tzinfo if isinstance(after.tzinfo, ZoneInfo) else None
    minutes, hours, days, months, weekdays, both = cron
    t = after.replace(tzinfo=None, second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(100_000):  # a handful of jumps a day: within it for any expression that can match
        if t.month not in months:
            t = (t.replace(day=1) + timedelta(days=32)).replace(day=1, hour=0, minute=0)
            continue
        by_date, by_weekday = t.day in days, (t.weekday() + 1) % 7 in weekdays  # Python's Monday is 0, cron's 1
        if not ((by_date or by_weekday) if both else (by_date and by_weekday)):
            t = (t + timedelta(days=1)).replace(hour=0, minute=0)
            continue
        if t.hour not in hours:
            t = (t + timedelta(hours=1)).replace(minute=0)
            continue
        if t.minute not in minutes:
            t += timedelta(minutes=1)
            continue
        return t.replace(tzinfo=zone) if zone is not None else t.astimezone()
    raise ValueError("the cron expression never matches (a day that no month has?)")
