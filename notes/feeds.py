"""Pages for machines (docs/theme.md#search-and-the-search-index, #feeds-sitemap-and-meta):
index.json, RSS 2.0 and robots.txt; the sitemap is notes.sitemaps, the archive notes.archives.

Each view runs a fixed number of queries and reads a bounded number of rows whatever the number
of notes: a feed its newest `rss_limit()` items, index.json nothing past
SCIDRAFT_INDEX_JSON_MAX_NOTES entries. Dates print in the offset each note was written in,
formatted from tuples so the process locale never matters.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count, Sum
from django.db.models.functions import Length
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.encoding import iri_to_uri

from scidraft.site import dependencies
from scidraft.site.dependencies import depends_on
from scidraft.site.meta import absolute
from scidraft.site.models import SiteSettings

from .excerpts import DESCRIPTION, excerpt_of
from .models import Note, Page, Tag
from .page_tags import notes_shown
from .presentation import MONTHS
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
    """The theme's search index: `{title, content, permalink, summary}` per page, complete as
    Hugo's for a site of up to SCIDRAFT_INDEX_JSON_MAX_NOTES notes and pages and
    SCIDRAFT_INDEX_JSON_MAX_BYTES. Past either, 404: a partial index would make a client's
    search miss notes without saying so, and SciDraft's own search page never reads this file
    (notes.search answers on the server at every size)."""
    notes = indexed_notes()
    pages = searchable_pages().order_by("weight", "title")
    if not _index_fits(notes, pages):
        raise Http404(TOO_LARGE)
    site = _site(request)
    entries = []
    for note in _indexed(notes):
        entries.append(_index_entry(note, absolute(request, site, note_path(note))))
    for page in _indexed(pages):
        entries.append(_index_entry(page, absolute(request, site, page_path(page))))
    response = JsonResponse(entries, safe=False, json_dumps_params={"ensure_ascii": False})
    if len(response.content) > settings.SCIDRAFT_INDEX_JSON_MAX_BYTES:
        raise Http404(TOO_LARGE)
    return response


TOO_LARGE = "This site is larger than its search index holds: use its search page."
# What an entry adds to its text: keys, permalink, title and summary (~300 characters).
_ENTRY_OVERHEAD = 600


def _index_fits(notes, pages) -> bool:
    """Counted and the text's length summed in SQL, over at most bound + 1 rows of each kind:
    nothing is loaded for an index that would be refused."""
    bound = settings.SCIDRAFT_INDEX_JSON_MAX_NOTES
    count = chars = 0
    for rows in (notes, pages):
        found = rows[: bound + 1].aggregate(count=Count("pk"), chars=Sum(Length("rendered_text")))
        count += found["count"]
        chars += found["chars"] or 0
    return (
        count <= bound and chars + count * _ENTRY_OVERHEAD <= settings.SCIDRAFT_INDEX_JSON_MAX_BYTES
    )


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
    "render_refs",
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


def rss_limit(site: SiteSettings) -> int:
    """Items per feed: the site's `services.rss.limit` when set, never more than
    SCIDRAFT_RSS_LIMIT (Hugo's -1, all items, would make a feed grow with the site)."""
    ceiling = settings.SCIDRAFT_RSS_LIMIT
    return min(site.rss_limit, ceiling) if site.rss_limit else ceiling


def _rss_response(request, site, *, title: str, path: str, items: list[FeedItem]):
    # Notes and pages come as two lists of at most rss_limit rows each: merged, then cut.
    items.sort(key=lambda item: item.date, reverse=True)
    items = items[: rss_limit(site)]
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
    """`/index.xml`: the newest published notes and dated standalone pages (Hugo's home feed)."""
    site = _site(request)
    limit = rss_limit(site)
    notes = list(rss_notes().only(*_RSS_FIELDS).with_excerpt_source()[:limit])
    pages = list(rss_pages().only(*_RSS_FIELDS).with_excerpt_source()[:limit])
    # Stale when a note joins, leaves or moves in the list, or one shown changes; the pages'
    # items name nothing (a standalone page's write makes every page stale).
    depends_on(request, dependencies.LISTING)
    notes_shown(request, notes)
    items = [_feed_item(request, site, note, note_path(note), note.local_date) for note in notes]
    items += [_feed_item(request, site, page, page_path(page), page.local_date) for page in pages]
    return _rss_response(request, site, title=site.title, path="/", items=items)


def tag_rss(request, slug: str):
    """`/tags/<slug>/index.xml`: the tag's newest notes."""
    site = _site(request)
    tag = get_object_or_404(Tag.objects.public(), slug=slug)
    limit = rss_limit(site)
    notes = list(rss_notes().filter(tags=tag).only(*_RSS_FIELDS).with_excerpt_source()[:limit])
    depends_on(request, dependencies.listing_tag(tag.slug))
    notes_shown(request, notes)
    items = [_feed_item(request, site, note, note_path(note), note.local_date) for note in notes]
    return _rss_response(
        request, site, title=f"{tag.name} on {site.title}", path=tag_path(tag.slug), items=items
    )


# --- robots.txt --------------------------------------------------------------------------------


def robots_txt(request):
    site = _site(request)
    body = render_to_string("robots.txt", {"sitemap_url": absolute(request, site, "/sitemap.xml")})
    return HttpResponse(body, content_type="text/plain; charset=utf-8")
