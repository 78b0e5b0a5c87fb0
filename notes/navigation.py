"""A note page's neighbours (« Prev, Next »), from one list of the published notes' dates read
once per content generation, instead of two queries per note page. (Recommendations are one
bounded query per page: NoteQuerySet.recommended.)"""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass

from scidraft.site.generation import request_generation
from scidraft.site.snapshot import PerGeneration

from .models import Note


@dataclass(frozen=True)
class Neighbour:
    slug: str
    title: str


@dataclass(frozen=True)
class _Published:
    # Every published note, promotions included (the theme's prev/next), ordered by date and
    # slug by the database, so notes of the same date keep its collation's slug order.
    dates: tuple[dt.datetime, ...]
    neighbours: tuple[Neighbour, ...]


def _load() -> _Published:
    rows = list(
        Note.objects.published().order_by("date", "slug").values_list("date", "slug", "title")
    )
    return _Published(
        dates=tuple(date for date, _, _ in rows),
        neighbours=tuple(Neighbour(slug, title) for _, slug, title in rows),
    )


published = PerGeneration(_load)


def older_and_newer(request, note: Note) -> tuple[Neighbour | None, Neighbour | None]:
    """The newest note dated before `note`, and the oldest dated after it; among notes of the
    same date, the first by slug."""
    index = published.get(request_generation(request))
    dates = index.dates
    before = bisect.bisect_left(dates, note.date)
    after = bisect.bisect_right(dates, note.date)
    older = None
    if before > 0:
        older = index.neighbours[bisect.bisect_left(dates, dates[before - 1])]
    newer = index.neighbours[after] if after < len(dates) else None
    return older, newer
