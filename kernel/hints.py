"""One did-you-mean for every message that names something unknown."""

from __future__ import annotations

from typing import Iterable


def close_matches(name: str, names: Iterable[str], n: int = 3) -> list:
    """The known names closest to ``name``, best first."""
    import difflib  # here: only a name nobody knows needs it, and every start would pay its import

    return difflib.get_close_matches(name, sorted(names), n=n, cutoff=0.6 if n == 1 else 0.5)


def did_you_mean(name: str, names: Iterable[str], n: int = 3, quote: str = "'") -> str:
    """`` (did you mean 'x'?)`` or ``""`` when nothing is close."""
    near = close_matches(name, names, n)
    return f" (did you mean {', '.join(f'{quote}{m}{quote}' for m in near)}?)" if near else ""
