"""A note page's neighbours (« Prev, Next ») and recommendation candidates, from one list of the
published notes read once per content generation, instead of three queries per note page (one
of which read every published note's slug and title on each render)."""

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
    # Slug → title of the regular notes: what recommendations are drawn from.
    regular: dict[str, str]


def _load() -> _Published:
    rows = list(
        Note.objects.published()
        .order_by("date", "slug")
        .values_list("date", "slug", "title", "promotion")
    )
    return _Published(
        dates=tuple(date for date, *_ in rows),
        neighbours=tuple(Neighbour(slug, title) for _, slug, title, _ in rows),
        regular={slug: title for _, slug, title, promotion in rows if not promotion},
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


def recommendation_candidates(request, note: Note) -> dict[str, str]:
    """Slug → title of every published regular note but `note`."""
    regular = published.get(request_generation(request)).regular
    return {slug: title for slug, title in regular.items() if slug != note.slug}
