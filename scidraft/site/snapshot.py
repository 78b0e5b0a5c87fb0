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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db import transaction

from .caching import request_generation
from .models import MenuItem, SiteSettings

T = TypeVar("T")


class PerGeneration(Generic[T]):
    """`load()`'s value for the latest generation seen, shared by the process's threads
    (treat it as read-only). One tuple, replaced whole: threads read it without a lock."""

    instances: list[PerGeneration] = []

    def __init__(self, load: Callable[[], T]):
        self.load = load
        self.held: tuple[int, T] | None = None
        PerGeneration.instances.append(self)

    def get(self, generation: int) -> T:
        held = self.held
        if held is not None and held[0] == generation:
            return held[1]
        value = self.load()
        if not transaction.get_connection().in_atomic_block:
            self.held = (generation, value)
        return value

    def forget(self) -> None:
        self.held = None


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
