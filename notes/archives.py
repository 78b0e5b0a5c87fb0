"""The archive: the standalone page with layout "archives" (PaperMod's archive by year and
month, docs/theme.md#feeds-sitemap-and-meta), paginated by year so no page grows with the site.

* `/archives/` lists every year with its count and shows the newest year's notes.
* `/archives/<year>/` shows one year, `/archives/<year>/page/<n>/` the rest of a year larger
  than SCIDRAFT_ARCHIVE_PAGE_NOTES notes. Every year header keeps its `id`, so an old link to
  `/archives/#<year>` lands on the year, which links to its page.

Years and months are those of each note's own offset (the site's zone for a note written
without one), as Hugo groups them; they are counted in SQL (`local_part`), and a page loads
only its own notes. Each view runs a fixed number of queries.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Case, Count, Func, IntegerField, When
from django.db.models.functions import Extract
from django.http import Http404, HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404, render

from scidraft.site.meta import PageMeta, absolute
from scidraft.site.snapshot import site_settings

from .excerpts import excerpt_of
from .feed import page_count, pagination_window
from .feeds import note_path
from .models import Note, Page
from .presentation import date_long, month_name

# Years a URL may name: one either side is read around a year's first and last instant.
FIRST_YEAR, LAST_YEAR = 2, 9998


class _OffsetPart(Func):
    """The year or month of `date` moved by `date_offset_minutes` (a fixed offset)."""

    output_field = IntegerField()
    arity = 2

    def __init__(self, part: str, *expressions):
        self.part = part
        super().__init__(*expressions)

    def as_sqlite(self, compiler, connection, **extra):
        # datetime(date, '540 minutes') is 'YYYY-MM-DD HH:MM:SS': the year, then the month.
        start, length = (1, 4) if self.part == "year" else (6, 2)
        return self.as_sql(
            compiler,
            connection,
            template=f"CAST(substr(datetime(%(expressions)s || ' minutes'), {start}, {length}) "
            "AS INTEGER)",
            arg_joiner=", ",
            **extra,
        )

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(
            compiler,
            connection,
            template=f"EXTRACT({self.part.upper()} FROM %(expressions)s))::integer",
            arg_joiner=" AT TIME ZONE 'UTC' + make_interval(mins => ",
            **extra,
        )


def local_part(part: str):
    """SQL for a note's year or month in the offset it was written in (Note.local_date)."""
    return Case(
        When(date_offset_minutes__isnull=True, then=Extract("date", part)),
        default=_OffsetPart(part, "date", "date_offset_minutes"),
        output_field=IntegerField(),
    )


def archived_notes():
    return Note.objects.published()


def year_counts() -> list[tuple[int, int]]:
    """(year, notes) of every year with a published note, newest first: one aggregate."""
    rows = (
        archived_notes()
        .annotate(year=local_part("year"))
        .values("year")
        .annotate(count=Count("pk"))
        .order_by("-year")
    )
    return [(row["year"], row["count"]) for row in rows]


def notes_of_year(year: int):
    """The year's notes: a range of the indexed date (a day either side covers every offset),
    then the exact local year."""
    start = dt.datetime(year, 1, 1, tzinfo=dt.UTC)
    end = dt.datetime(year + 1, 1, 1, tzinfo=dt.UTC)
    day = dt.timedelta(days=1)
    return (
        archived_notes()
        .filter(date__gte=start - day, date__lt=end + day)
        .annotate(year=local_part("year"))
        .filter(year=year)
    )


@dataclass
class ArchiveEntry:
    title: str
    url: str
    date: dt.datetime

    @property
    def date_text(self) -> str:
        return date_long(self.date)


@dataclass
class ArchiveMonth:
    name: str
    count: int
    entries: list[ArchiveEntry] = field(default_factory=list)


@dataclass
class ArchiveYear:
    year: int
    count: int
    url: str
    months: list[ArchiveMonth] = field(default_factory=list)


def _untitled(note, words: int = 10) -> str:
    """An untitled note's opening words stand for its title."""
    return excerpt_of(note, lead=(), words=words).text()


def _months(notes, counts: dict[int, int]) -> list[ArchiveMonth]:
    """Notes (newest first) by month, each month with its count over the whole year."""
    months: list[ArchiveMonth] = []
    current = None
    for note in notes:
        date = note.local_date
        if date.month != current:
            current = date.month
            months.append(ArchiveMonth(month_name(date.month), counts.get(date.month, 0)))
        title = note.title or _untitled(note) or note.slug
        months[-1].entries.append(ArchiveEntry(title, note_path(note), date))
    return months


def _year_url(slug: str, year: int, number: int = 1) -> str:
    base = f"/{slug}/{year}/"
    return base if number == 1 else f"{base}page/{number}/"


def _pagination(slug: str, year: int, number: int, pages: int) -> dict:
    return {
        "links": [
            {"number": link.number, "current": link.current,
             "url": _year_url(slug, year, link.number) if link.number else ""}
            for link in pagination_window(number, pages)
        ],
        "previous": _year_url(slug, year, number - 1) if number > 1 else "",
        "next": _year_url(slug, year, number + 1) if number < pages else "",
    }  # fmt: skip


def _render(request, page: Page, years: list[tuple[int, int]], shown: int | None, number: int):
    site = site_settings(request)
    per_page = settings.SCIDRAFT_ARCHIVE_PAGE_NOTES
    counts = dict(years)
    pages = page_count(counts.get(shown, 0), per_page)
    if number < 1 or number > pages:
        raise Http404("No such page.")
    blocks = [ArchiveYear(year, count, _year_url(page.slug, year)) for year, count in years]
    if shown is not None:
        notes = notes_of_year(shown)
        month_counts = {
            row["month"]: row["count"]
            for row in notes.annotate(month=local_part("month"))
            .values("month")
            .annotate(count=Count("pk"))
            .order_by()
        }
        # Sorting by the UTC instant then grouping by local date: a note written just after
        # midnight in its own offset lands in its own month, as Hugo groups it.
        rows = (
            notes.order_by("-date", "slug")
            .only("slug", "title", "date", "date_offset_minutes")
            .with_excerpt_source(untitled_only=True)
        )[(number - 1) * per_page : number * per_page]
        block = next(block for block in blocks if block.year == shown)
        block.months = _months(rows, month_counts)
    meta = PageMeta(
        title=f"{page.title} | {site.title}",
        description=page.description or page.summary or site.description,
        canonical=page.canonical_url or absolute(request, site, request.path),
        noindex=page.robots_noindex,
    )
    context = {
        "page": page,
        "meta": meta,
        "years": blocks,
        "shown": shown,
        "pagination": _pagination(page.slug, shown, number, pages) if shown else {},
        "assets": {"math": False, "code": False, "algorithm": False, "mermaid": False},
    }
    return render(request, "notes/archives.html", context)


def archives_page(request, page: Page):
    """`/archives/`: the years with their counts, and the newest year's first page."""
    years = year_counts()
    return _render(request, page, years, years[0][0] if years else None, 1)


def archive_year(request, slug: str, year: str, page: str = "1"):
    """`/archives/<year>/` and its pages: one year of the archive."""
    archive = get_object_or_404(Page.objects.published(), slug=slug, layout=Page.Layout.ARCHIVES)
    # A year is four digits at most: anything longer or out of range names no year.
    if len(year) > 4 or not FIRST_YEAR <= int(year) <= LAST_YEAR or len(page) > 9:
        raise Http404("No such year.")
    if page == "1" and request.path.endswith("/page/1/"):
        return HttpResponsePermanentRedirect(_year_url(slug, int(year)))
    years = year_counts()
    if int(year) not in dict(years):
        raise Http404("No notes that year.")
    return _render(request, archive, years, int(year), int(page))
