"""A note page's neighbours (« Prev, Next »): two indexed queries of one row each, so a note
page costs the same at 10 notes and at 10,000. (Recommendations are one bounded query per page:
NoteQuerySet.recommended.)"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Subquery

from .models import Note


@dataclass(frozen=True)
class Neighbour:
    slug: str
    title: str


def _first(notes) -> Neighbour | None:
    row = notes.values_list("slug", "title").first()
    return None if row is None else Neighbour(*row)


def older_and_newer(note: Note) -> tuple[Neighbour | None, Neighbour | None]:
    """The newest note dated before `note`, and the oldest dated after it; among notes of the
    same date, the first by slug. Every published note counts, promotions included (the
    theme's prev/next)."""
    notes = Note.objects.published()
    newest_before = notes.filter(date__lt=note.date).order_by("-date").values("date")[:1]
    older = _first(notes.filter(date=Subquery(newest_before)).order_by("slug"))
    newer = _first(notes.filter(date__gt=note.date).order_by("date", "slug"))
    return older, newer
