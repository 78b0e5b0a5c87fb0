"""The sitemap (docs/theme.md#feeds-sitemap-and-meta): `/sitemap.xml` is a sitemap index
(sitemaps.org) naming bounded files, so no file grows with the site.

* `/sitemap-site.xml`: the home, `/notes/` and `/tags/`.
* `/sitemap-notes-<k>.xml`, `/sitemap-tags-<k>.xml`, `/sitemap-pages-<k>.xml`: the published
  notes (minus robotsNoIndex), public tags and standalone pages whose primary key is in
  [k × CHUNK, (k + 1) × CHUNK). Membership by key, not by position, keeps a file's URLs where
  they were as notes are published and deleted; a file holds at most CHUNK URLs (the protocol
  allows 50,000).

Every view runs a fixed number of queries: the index and the dates it carries are SQL
aggregates (the latest of each item's date and last edit, per chunk), a file reads its chunk's
rows only. A chunk without a public item is a 404, as is a number past any key.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import F, Max, OuterRef, Subquery
from django.db.models.functions import Coalesce, Greatest
from django.http import Http404, HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone

from scidraft.site.meta import absolute
from scidraft.site.snapshot import site_settings

from .feeds import note_path, page_path, tag_path, w3c
from .models import Note, Page, Tag, in_written_offset

CHUNK = 1000
KINDS = ("notes", "tags", "pages")
# Primary keys are 64-bit at most: a longer chunk number in a URL names nothing.
_MAX_CHUNK_DIGITS = 16


@dataclass
class SitemapEntry:
    loc: str
    lastmod: str = ""


def _xml(template: str, entries: list[SitemapEntry]) -> HttpResponse:
    body = render_to_string(template, {"entries": entries})
    return HttpResponse(body, content_type="application/xml; charset=utf-8")


def _lastmod(moment: dt.datetime | None) -> str:
    return w3c(timezone.localtime(moment)) if moment else ""


# --- What each file lists ----------------------------------------------------------------------


def sitemap_notes():
    return Note.objects.published().filter(robots_noindex=False)


def sitemap_pages():
    return Page.objects.published().filter(robots_noindex=False)


def _taggings():
    """Tag–note links of published notes: a tag's lastmod is its newest note's."""
    return Note.tags.through.objects.filter(note__in=Note.objects.published())


def _note_moment():
    return Greatest("date", "updated_at")


def _chunk(field: str = "pk"):
    # Integer division in both SQLite and PostgreSQL: both operands are integers.
    return F(field) / CHUNK


def _chunks(kind: str) -> list[tuple[int, dt.datetime | None]]:
    """(chunk number, the newest lastmod in it) of every non-empty chunk of `kind`."""
    if kind == "notes":
        rows = sitemap_notes().annotate(chunk=_chunk()).values("chunk")
        rows = rows.annotate(lastmod=Max(_note_moment()))
    elif kind == "tags":
        rows = _taggings().annotate(chunk=_chunk("tag_id")).values("chunk")
        rows = rows.annotate(lastmod=Max(Greatest("note__date", "note__updated_at")))
    else:
        rows = sitemap_pages().annotate(chunk=_chunk()).values("chunk")
        # An undated page is dated by its last edit, as in its file.
        rows = rows.annotate(lastmod=Max(Greatest(Coalesce("date", "updated_at"), "updated_at")))
    return [(row["chunk"], row["lastmod"]) for row in rows.order_by("chunk")]


# --- Views -------------------------------------------------------------------------------------


def sitemap_index(request):
    """`/sitemap.xml`: the site file, then each non-empty chunk of notes, tags and pages."""
    site = site_settings(request)
    chunks = {kind: _chunks(kind) for kind in KINDS}
    # The site file's date is its home page's: the newest note's.
    newest = max((moment for _, moment in chunks["notes"] if moment), default=None)
    entries = [SitemapEntry(absolute(request, site, "/sitemap-site.xml"), _lastmod(newest))]
    for kind in KINDS:
        for number, moment in chunks[kind]:
            path = f"/sitemap-{kind}-{number}.xml"
            entries.append(SitemapEntry(absolute(request, site, path), _lastmod(moment)))
    return _xml("sitemap_index.xml", entries)


def sitemap_site(request):
    """`/sitemap-site.xml`: the home and `/notes/` (dated by the newest note), `/tags/`."""
    site = site_settings(request)
    newest = sitemap_notes().aggregate(moment=Max(_note_moment()))["moment"]
    entries = [
        SitemapEntry(absolute(request, site, "/"), _lastmod(newest)),
        SitemapEntry(absolute(request, site, "/notes/"), _lastmod(newest)),
    ]
    newest_tagged = _taggings().aggregate(moment=Max(Greatest("note__date", "note__updated_at")))[
        "moment"
    ]
    if newest_tagged:
        entries.append(SitemapEntry(absolute(request, site, "/tags/"), _lastmod(newest_tagged)))
    return _xml("sitemap.xml", entries)


def _chunk_bounds(number: str) -> tuple[int, int]:
    if len(number) > _MAX_CHUNK_DIGITS:
        raise Http404("No such sitemap.")
    first = int(number) * CHUNK
    return first, first + CHUNK


def sitemap_chunk(request, kind: str, number: str):
    """`/sitemap-<kind>-<k>.xml`: the chunk's URLs, each dated by the later of its date and its
    last edit in the offset it was written in (a tag by its newest note's)."""
    if kind not in KINDS:
        raise Http404("No such sitemap.")
    first, last = _chunk_bounds(number)
    site = site_settings(request)
    entries = _chunk_entries(request, site, kind, first, last)
    if not entries:
        raise Http404("No such sitemap.")
    return _xml("sitemap.xml", entries)


def _chunk_entries(request, site, kind: str, first: int, last: int) -> list[SitemapEntry]:
    if kind == "notes":
        notes = (
            sitemap_notes()
            .filter(pk__gte=first, pk__lt=last)
            .order_by("-date", "slug")
            .only("slug", "date", "date_offset_minutes", "updated_at")
        )
        return [
            SitemapEntry(
                absolute(request, site, note_path(note)),
                w3c(in_written_offset(max(note.date, note.updated_at), note.date_offset_minutes)),
            )
            for note in notes
        ]
    if kind == "tags":
        newest = (
            _taggings()
            .filter(tag_id=OuterRef("pk"))
            .order_by()
            .values("tag_id")
            .annotate(moment=Max(Greatest("note__date", "note__updated_at")))
            .values("moment")
        )
        tags = (
            Tag.objects.public()
            .filter(pk__gte=first, pk__lt=last)
            .annotate(moment=Subquery(newest))
            .order_by("slug")
            .values_list("slug", "moment")
        )
        return [
            SitemapEntry(absolute(request, site, tag_path(slug)), _lastmod(moment))
            for slug, moment in tags
        ]
    pages = (
        sitemap_pages()
        .filter(pk__gte=first, pk__lt=last)
        .order_by("slug")
        .only("slug", "date", "date_offset_minutes", "updated_at")
    )
    entries = []
    for page in pages:
        moment = page.updated_at if page.date is None else max(page.date, page.updated_at)
        moment = in_written_offset(moment, page.date_offset_minutes)
        entries.append(SitemapEntry(absolute(request, site, page_path(page)), w3c(moment)))
    return entries
