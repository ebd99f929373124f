"""The iteration budget: how many model calls a turn (or a child agent) may make."""

from __future__ import annotations

import threading
from typing import Optional

CAUTION = 0.7  # nudge the model to start wrapping up
WARNING = 0.9  # urgent: answer now


class IterationBudget:
    """A thread-safe counter of model calls: ``consume()`` takes one, if there is one left."""

    def __init__(self, max_total: int):
        if max_total < 1:
            raise ValueError("an iteration budget needs at least 1 iteration")
        self.max_total = int(max_total)
        self._used = 0
        self._lock = threading.Lock()

    def consume(self) -> bool:
        with self._lock:
            if self._used >= self.max_total:
                return False
            self._used += 1
            return True

    def reset(self) -> None:
        with self._lock:
            self._used = 0

    @property
    def used(self) -> int:
        return self._used

    @property
    def remaining(self) -> int:
        return max(self.max_total - self._used, 0)

    def pressure(self) -> Optional[str]:
        """``None``, ``"caution"`` (70% used), ``"warning"`` (90%) or
        ``"exhausted"`` (nothing left: the next call is the grace call)."""
        if self.remaining == 0:
            return "exhausted"
        fraction = self._used / self.max_total
        return "warning" if fraction >= WARNING else "caution" if fraction >= CAUTION else None

    def note(self) -> Optional[str]:
        """The sentence the loop puts into the next tool result, if any."""
        level = self.pressure()
        if level is None:
            return None
        if level == "exhausted":
            return (f"Iteration budget exhausted ({self.max_total} of {self.max_total} used). "
                    "Do not call tools: write your final answer now, summarising what you did and what is left.")
        urgency = "Answer very soon" if level == "warning" else "Start wrapping up"
        return f"{level.upper()}: {self._used} of {self.max_total} iterations used, {self.remaining} left. {urgency}."
