"""A least-recently-used cache bounded by its number of entries and by their size, for results
the engines compute (KaTeX's formulas): functools.lru_cache counts entries only, and 20,000
formulas of a few KB each, or a few hundred large ones, would hold a worker's memory for good.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import NamedTuple


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int
    currsize: int
    size: int  # what the entries weigh, by the cache's measure
    maxbytes: int


class BoundedCache:
    """At most `max_items` entries weighing `max_bytes` together (`weigh(key, value)`); the
    least recently used go first. Safe to share between threads."""

    def __init__(self, max_items: int, max_bytes: int, weigh: Callable[[Hashable, object], int]):
        self.max_items, self.max_bytes, self.weigh = max_items, max_bytes, weigh
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._size = self._hits = self._misses = 0

    def get(self, key: Hashable, default=None):
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self._misses += 1
                return default
            self._entries.move_to_end(key)
            self._hits += 1
            return found[0]

    def put(self, key: Hashable, value) -> None:
        weight = self.weigh(key, value)
        if weight > self.max_bytes:
            return  # larger than the whole cache: computed again when asked again
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._size -= old[1]
            self._entries[key] = (value, weight)
            self._size += weight
            while len(self._entries) > self.max_items or self._size > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._size -= dropped

    def resize(self, *, max_items: int | None = None, max_bytes: int | None = None) -> None:
        with self._lock:
            self.max_items = max_items if max_items is not None else self.max_items
            self.max_bytes = max_bytes if max_bytes is not None else self.max_bytes
            while self._entries and (
                len(self._entries) > self.max_items or self._size > self.max_bytes
            ):
                _, (_, dropped) = self._entries.popitem(last=False)
                self._size -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._size = self._hits = self._misses = 0

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(
                self._hits,
                self._misses,
                self.max_items,
                len(self._entries),
                self._size,
                self.max_bytes,
            )
