"""Pages for machines (docs/theme.md#search-and-the-search-index, #feeds-sitemap-and-meta):
index.json, RSS 2.0, sitemap.xml, robots.txt, and the archives page (PaperMod's `layout: archives`).

Each view runs a fixed number of queries whatever the number of notes. Dates print in the
offset each note was written in, formatted from tuples so the process locale never matters.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.encoding import iri_to_uri

from scidraft.site.meta import PageMeta, absolute
from scidraft.site.models import SiteSettings

from .excerpts import DESCRIPTION, excerpt_of
from .models import Note, Page, Tag, in_written_offset
from .presentation import MONTHS, date_long, month_name
from .search import EXCLUDED_LAYOUTS, searchable_pages

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_EMPTY = r"^\s*$"


def rfc822(value: dt.datetime) -> str:
    """`Tue, 22 Sep 2026 07:20:00 +0900` (Go's `Mon, 02 Jan 2006 15:04:05 -0700`)."""
    return (
        f"{DAYS[value.weekday()]}, {value.day:02d} {MONTHS[value.month - 1]} {value.year:04d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d} {value.strftime('%z')}"
    )


def w3c(value: dt.datetime) -> str:
    """`2026-09-22T07:20:00+09:00` (Go's `2006-01-02T15:04:05-07:00`)."""
    return value.replace(microsecond=0).isoformat()


def note_path(note: Note) -> str:
    return iri_to_uri(f"/notes/{note.slug}/")


def page_path(page: Page) -> str:
    return iri_to_uri(f"/{page.slug}/")


def tag_path(slug: str) -> str:
    return iri_to_uri(f"/tags/{slug}/")


def _site(request) -> SiteSettings:
    return SiteSettings.objects.current()


# --- index.json -------------------------------------------------------------------------------


def indexed_notes():
    return Note.objects.published().filter(search_hidden=False).order_by("-date", "slug")


_INDEX_FIELDS = ("slug", "title", "summary", "rendered_text")


def _indexed(queryset):
    return queryset.only(*_INDEX_FIELDS).with_excerpt_source()


def index_json(request):
    """The theme's search index: `{title, content, permalink, summary}` per page."""
    site = _site(request)
    entries = []
    for note in _indexed(indexed_notes()):
        entries.append(_index_entry(note, absolute(request, site, note_path(note))))
    for page in _indexed(searchable_pages().order_by("weight", "title")):
        entries.append(_index_entry(page, absolute(request, site, page_path(page))))
    return JsonResponse(entries, safe=False, json_dumps_params={"ensure_ascii": False})


def _index_entry(item, permalink: str) -> dict:
    return {
        "title": item.title,
        "content": item.rendered_text,
        "permalink": permalink,
        # Hugo's .Summary, as plain text: formulas as TeX between delimiters.
        "summary": excerpt_of(item).text(),
    }


# --- RSS ----------------------------------------------------------------------------------------


@dataclass
class FeedItem:
    title: str
    link: str
    date: dt.datetime
    description: str  # HTML, escaped once more in the XML as RSS 2.0 carries it
    content: str = ""

    @property
    def pub_date(self) -> str:
        return rfc822(self.date)


_RSS_FIELDS = (
    "slug",
    "title",
    "date",
    "date_offset_minutes",
    "summary",
    "description",
    "rendered_html",
)


def rss_notes():
    """Notes in RSS: published, not hidden from it; promotions included (theme behaviour)."""
    return Note.objects.published().filter(hidden_in_rss=False).order_by("-date", "slug")


def rss_pages():
    return (
        Page.objects.published()
        .filter(hidden_in_rss=False, date__isnull=False, date__lte=timezone.now())
        .exclude(layout__in=EXCLUDED_LAYOUTS)
        .exclude(body__regex=_EMPTY)
        .order_by("-date", "slug")
    )


def _feed_item(request, site, item, path: str, date: dt.datetime) -> FeedItem:
    return FeedItem(
        title=item.title or item.slug,
        link=absolute(request, site, path),
        date=date,
        description=excerpt_of(item, lead=DESCRIPTION).html(),
        content=item.rendered_html if site.show_full_text_in_rss else "",
    )


def _rss_response(request, site, *, title: str, path: str, items: list[FeedItem]):
    items.sort(key=lambda item: item.date, reverse=True)
    if site.rss_limit:
        items = items[: site.rss_limit]
    built = items[0].date if items else timezone.localtime()
    context = {
        "site": site,
        "title": title,
        "link": absolute(request, site, path),
        "self_link": absolute(request, site, request.path),
        "description": site.description or f"Recent content on {site.title}",
        "language": site.language_code,
        "last_build": rfc822(built),
        "items": items,
        "full_text": site.show_full_text_in_rss,
    }
    body = render_to_string("notes/rss.xml", context)
    return HttpResponse(body, content_type="application/rss+xml; charset=utf-8")


def site_rss(request):
    """`/index.xml`: every published note and dated standalone page (Hugo's home feed)."""
    site = _site(request)
    limit = site.rss_limit or None
    notes = list(rss_notes().only(*_RSS_FIELDS).with_excerpt_source()[:limit])
    pages = list(rss_pages().only(*_RSS_FIELDS).with_excerpt_source()[:limit])
    items = [_feed_item(request, site, note, note_path(note), note.local_date) for note in notes]
    items += [_feed_item(request, site, page, page_path(page), page.local_date) for page in pages]
    return _rss_response(request, site, title=site.title, path="/", items=items)


def tag_rss(request, slug: str):
    """`/tags/<slug>/index.xml`: the tag's notes."""
    site = _site(request)
    tag = get_object_or_404(Tag.objects.public(), slug=slug)
    limit = site.rss_limit or None
    notes = rss_notes().filter(tags=tag).only(*_RSS_FIELDS).with_excerpt_source()[:limit]
    items = [_feed_item(request, site, note, note_path(note), note.local_date) for note in notes]
    return _rss_response(
        request, site, title=f"{tag.name} on {site.title}", path=tag_path(tag.slug), items=items
    )


# --- sitemap.xml and robots.txt -----------------------------------------------------------------


@dataclass
class SitemapEntry:
    loc: str
    lastmod: str = ""


def _latest(value: dt.datetime, updated: dt.datetime | None) -> dt.datetime:
    return max(value, updated) if updated else value


def sitemap(request):
    """Home, /notes/, published notes and pages (minus robotsNoIndex), /tags/ and the tags."""
    site = _site(request)
    notes = list(
        Note.objects.published()
        .filter(robots_noindex=False)
        .order_by("-date", "slug")
        .only("pk", "slug", "date", "date_offset_minutes", "updated_at")
    )
    note_lastmod: dict[int, dt.datetime] = {}
    note_entries = []
    for note in notes:
        # The later of the date and the last edit, shown in the note's own offset.
        offset = note.local_date.tzinfo
        moment = _latest(note.date, note.updated_at).astimezone(offset)
        note_lastmod[note.pk] = moment
        note_entries.append(SitemapEntry(absolute(request, site, note_path(note)), w3c(moment)))
    newest = max(note_lastmod.values(), default=None)

    tag_lastmod: dict[str, dt.datetime] = {}
    published_ids = Note.objects.published().values("pk")
    for slug, note_id, date in Note.tags.through.objects.filter(
        note_id__in=published_ids
    ).values_list("tag__slug", "note_id", "note__date"):
        moment = note_lastmod.get(note_id) or timezone.localtime(date)
        if slug not in tag_lastmod or moment > tag_lastmod[slug]:
            tag_lastmod[slug] = moment

    entries = [
        SitemapEntry(absolute(request, site, "/"), w3c(newest) if newest else ""),
        SitemapEntry(absolute(request, site, "/notes/"), w3c(newest) if newest else ""),
        *note_entries,
    ]
    for page in (
        Page.objects.published()
        .filter(robots_noindex=False)
        .only("slug", "date", "date_offset_minutes", "updated_at")
    ):
        moment = page.updated_at if page.date is None else _latest(page.date, page.updated_at)
        moment = in_written_offset(moment, page.date_offset_minutes)
        entries.append(SitemapEntry(absolute(request, site, page_path(page)), w3c(moment)))
    if tag_lastmod:
        entries.append(
            SitemapEntry(absolute(request, site, "/tags/"), w3c(max(tag_lastmod.values())))
        )
        entries.extend(
            SitemapEntry(absolute(request, site, tag_path(slug)), w3c(moment))
            for slug, moment in sorted(tag_lastmod.items())
        )
    body = render_to_string("sitemap.xml", {"entries": entries})
    return HttpResponse(body, content_type="application/xml; charset=utf-8")


def robots_txt(request):
    site = _site(request)
    body = render_to_string("robots.txt", {"sitemap_url": absolute(request, site, "/sitemap.xml")})
    return HttpResponse(body, content_type="text/plain; charset=utf-8")


# --- Archives -------------------------------------------------------------------------------------


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
    entries: list[ArchiveEntry] = field(default_factory=list)


@dataclass
class ArchiveYear:
    year: int
    months: list[ArchiveMonth] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(month.entries) for month in self.months)


def _untitled(note, words: int = 10) -> str:
    """An untitled note's opening words stand for its title."""
    return excerpt_of(note, lead=(), words=words).text()


def archive_years(notes) -> list[ArchiveYear]:
    """Notes (newest first) grouped by year, then month, in each note's own offset."""
    years: list[ArchiveYear] = []
    for note in notes:
        date = note.local_date
        if not years or years[-1].year != date.year:
            years.append(ArchiveYear(date.year))
        months = years[-1].months
        name = month_name(date.month)
        if not months or months[-1].name != name:
            months.append(ArchiveMonth(name))
        title = note.title or _untitled(note) or note.slug
        months[-1].entries.append(ArchiveEntry(title, note_path(note), date))
    return years


def archives_page(request, page: Page):
    """The standalone page with layout "archives": PaperMod's archive by year and month."""
    site = SiteSettings.objects.current()
    notes = Note.objects.published().order_by("-date", "slug")
    # Sorting by the UTC instant then grouping by local date: a note written just after
    # midnight in its own offset lands in its own month, as Hugo groups it.
    notes = notes.only("slug", "title", "date", "date_offset_minutes").with_excerpt_source(
        untitled_only=True
    )
    meta = PageMeta(
        title=f"{page.title} | {site.title}",
        description=page.description or page.summary or site.description,
        canonical=page.canonical_url or absolute(request, site, request.path),
        noindex=page.robots_noindex,
    )
    context = {
        "page": page,
        "meta": meta,
        "years": archive_years(notes),
        "assets": {"math": False, "code": False, "algorithm": False, "mermaid": False},
    }
    return render(request, "notes/archives.html", context)
