"""``plugins.plugin_utils``: thread-safe lazy singletons for plugin authors."""

from __future__ import annotations

import functools
import threading
from typing import Callable, Generic, Optional, TypeVar

T = TypeVar("T")
_UNSET = object()


def lazy_singleton(factory: Callable[[], T]) -> Callable[[], T]:
    """Decorate a zero-argument factory: the first call builds the value (once,
    even when threads race), later calls return it. ``.reset()`` forgets it."""
    lock = threading.Lock()
    box = {"value": _UNSET}

    @functools.wraps(factory)
    def accessor() -> T:
        value = box["value"]
        if value is _UNSET:
            with lock:
                if box["value"] is _UNSET:
                    box["value"] = factory()
                value = box["value"]
        return value

    def reset() -> None:
        with lock:
            box["value"] = _UNSET

    accessor.reset = reset
    return accessor


class SingletonSlot(Generic[T]):
    """A slot filled once by ``get(factory)``; ``peek()`` and ``reset()`` too."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value = _UNSET

    def get(self, factory: Callable[[], T]) -> T:
        value = self._value
        if value is _UNSET:
            with self._lock:
                if self._value is _UNSET:
                    self._value = factory()
                value = self._value
        return value

    def peek(self) -> Optional[T]:
        value = self._value
        return None if value is _UNSET else value

    def reset(self) -> None:
        with self._lock:
            self._value = _UNSET
