"""Rows every page reads, from the database once per content generation in each process rather
than on every request: the site settings (a 32-column row read by the view, the header, the
footer and the citation box), the main menu, and what PerGeneration is given elsewhere.

Every write a reader could see bumps the generation (receivers.py), so what is held under a
generation never goes stale; only the latest generation's value is kept. Values read inside a
transaction are not kept: it may still roll back, and its generation number could then be taken
by another write. Within a request the generation is read once, whatever the number of callers.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db import transaction

from .generation import request_generation
from .models import MenuItem, SiteSettings

T = TypeVar("T")


class PerGeneration(Generic[T]):
    """`load()`'s value for the latest generation seen, shared by the process's threads
    (treat it as read-only). One tuple, replaced whole: threads read it without a lock.

    After a write every thread of a worker misses at once; one of them loads and the others
    wait for its value instead of each running the same queries. A load that fails (the
    database is down) fails the threads that waited for it too, for `FAILED_SECONDS`, rather
    than have each of them wait out its own connection timeout in turn."""

    FAILED_SECONDS = 1.0
    instances: list[PerGeneration] = []

    def __init__(self, load: Callable[[], T]):
        self.load = load
        self.held: tuple[int, T] | None = None
        self._loading = threading.RLock()
        self._failed: tuple[int, Exception, float] | None = None
        PerGeneration.instances.append(self)

    def get(self, generation: int) -> T:
        held = self.held
        if held is not None and held[0] == generation:
            return held[1]
        if transaction.get_connection().in_atomic_block:
            return self.load()  # not kept: see the module's docstring
        with self._loading:
            held = self.held
            if held is not None and held[0] == generation:
                return held[1]
            failed = self._failed
            if failed and failed[0] == generation and time.monotonic() < failed[2]:
                raise failed[1]
            try:
                value = self.load()
            except Exception as error:
                self._failed = (generation, error, time.monotonic() + self.FAILED_SECONDS)
                raise
            # A reader of an older generation (read before a write) must not replace a newer one.
            if self.held is None or self.held[0] <= generation:
                self.held = (generation, value)
            return value

    def forget(self) -> None:
        self.held = None
        self._failed = None


def forget_all() -> None:
    """Drop every held value (tests: each test's database restarts the generation count)."""
    for instance in PerGeneration.instances:
        instance.forget()


@dataclass(frozen=True)
class _Rows:
    settings: SiteSettings
    menu: tuple[MenuItem, ...]


def _read_rows() -> _Rows:
    return _Rows(SiteSettings.objects.current(), tuple(MenuItem.objects.main()))


held = PerGeneration(_read_rows)


def _rows(request) -> _Rows:
    rows = getattr(request, "_site_rows", None)
    if rows is None:
        rows = held.get(request_generation(request))
        # A copy per request: the held row is shared by every thread of the process.
        rows = request._site_rows = _Rows(copy.copy(rows.settings), rows.menu)
    return rows


def site_settings(request) -> SiteSettings:
    """The site's settings for this request (to read: an editor saves the row it gets from
    SiteSettings.objects.current())."""
    return _rows(request).settings


def main_menu(request) -> tuple[MenuItem, ...]:
    """The main menu's items, in menu order (read-only, shared by the process)."""
    return _rows(request).menu
