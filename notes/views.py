"""Reader-facing pages: the feed, notes, tags, authors, standalone pages, citation exports."""

from __future__ import annotations

import json

from django.http import Http404, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.safestring import mark_safe

from bibliography import exports
from bibliography.formatting import csl_items, entry_data, ris_records
from scidraft.markup import ENGINE_VERSION
from scidraft.site import dependencies
from scidraft.site.caching import not_final
from scidraft.site.dependencies import depends_on
from scidraft.site.generation import request_generation, silent
from scidraft.site.meta import PageMeta, absolute
from scidraft.site.models import SiteSettings
from scidraft.site.snapshot import PerGeneration, site_settings

from . import completion
from . import feed as feed_math
from .citing import (
    citable_work,
    cited_entries,
    references_bibtex,
    work_csl_json,
    work_reference_html,
)
from .excerpts import DESCRIPTION, META_CHARS, META_WORDS, excerpt_of
from .identity import identity_for
from .models import Author, Note, Page, Tag, card_prefetches, prefetch_cards
from .navigation import older_and_newer
from .page_tags import notes_shown
from .presentation import (
    anchored_headings,
    assets_for,
    card,
    date_long,
    date_note_page,
    reading_minutes,
    share_links,
)
from .rendering import (
    render_incomplete,
    render_owed,
    render_page,
    stale_references,
)
from .services import note_render_store
from .services.renders import page_render_store


def _paginate(total: int, per_page: int, page: int | str) -> tuple[int, int]:
    page = int(page)
    pages = feed_math.page_count(total, per_page)
    if page < 1 or page > pages:
        raise Http404("No such page.")
    return pages, (page - 1) * per_page


def _page_url(base: str, number: int) -> str:
    return base if number == 1 else f"{base}page/{number}/"


def _pagination(base: str, page: int, pages: int) -> dict:
    return {
        "links": [
            {"number": link.number, "current": link.current,
             "url": _page_url(base, link.number) if link.number else ""}
            for link in feed_math.pagination_window(page, pages)
        ],
        "previous": _page_url(base, page - 1) if page > 1 else "",
        "next": _page_url(base, page + 1) if page < pages else "",
    }  # fmt: skip


def _refresh_stale(request, notes) -> None:
    """Rows rendered by an older engine, marked stale (environment kinds changed) or whose
    references to other notes now resolve differently (one published, unpublished or come
    due since) are rendered again when first read and saved, so this happens once a change.
    A render still owed (cut short by time, its completion lost with its process) is queued
    for completion; a page showing one cut short is not cached."""
    stale = {note.pk for note in stale_references(notes)}
    for note in notes:
        if note.render_version != ENGINE_VERSION or not note.source_hash or note.pk in stale:
            with silent():  # what this very page shows: nobody else's page goes stale for it
                note_render_store(note=note, force=True)
        elif render_owed(note):
            completion.schedule(completion.NOTE, note.pk)
        if render_incomplete(note):
            not_final(request)


def _feed_counts() -> tuple[int, int]:
    return Note.objects.published().regular().count_in_feed()


def _promotion_pool() -> tuple[Note, ...]:
    promotions = list(Note.objects.published().promotions().order_by("slug").card_columns())
    prefetch_cards(promotions)
    return tuple(promotions)


# The same for every feed page until something is written (scidraft.site.snapshot); the pool's
# rows are shared by the process's threads, and cards only read them.
feed_counts = PerGeneration(_feed_counts)
promotion_pool = PerGeneration(_promotion_pool)


def feed(request, page: int = 1, base: str = "/"):
    """The notes feed at / and /notes/ (docs/theme.md#the-feed)."""
    if page == 1 and request.path.endswith("/page/1/"):
        return HttpResponsePermanentRedirect(base)
    site = site_settings(request)
    generation = request_generation(request)
    total, pinned = feed_counts.get(generation)
    pages, offset = _paginate(total, site.notes_per_page, page)
    page_notes = (
        Note.objects.published()
        .regular()
        .card_columns()
        .page_in_feed_order(offset, site.notes_per_page, pinned)
    )
    prefetch_cards(page_notes)
    _refresh_stale(request, page_notes)
    promotions = promotion_pool.get(generation) if site.promotions_per_page else ()
    slots = feed_math.place_promotions(
        promotions=[promotion.slug for promotion in promotions],
        page=page,
        notes_on_page=len(page_notes),
        per_page=site.promotions_per_page,
        positions=site.promotion_positions,
        seed=generation,
    )
    by_slug = {promotion.slug: promotion for promotion in promotions}
    depends_on(request, dependencies.LISTING)
    notes_shown(request, [*page_notes, *(by_slug[slug] for slug in slots.values())])
    cards = [
        card(item, site, promotion=kind == "promotion")
        for kind, item in feed_math.interleave(
            page_notes, {slot: by_slug[slug] for slot, slug in slots.items()}
        )
    ]
    title = site.title if page == 1 else f"Page {page} | {site.title}"
    meta = PageMeta(
        title=title,
        description=site.description,
        canonical=absolute(request, site, _page_url(base, page)),
    )
    return render(
        request,
        "notes/feed.html",
        {
            "cards": cards,
            "pagination": _pagination(base, page, pages),
            "meta": meta,
            "assets": assets_for((card.note for card in cards), cards=True),
            "body_class": "list",
        },
    )


def note_detail(request, slug: str):
    """A note as a large card with its navigation (docs/theme.md#the-note-page)."""
    site = site_settings(request)
    note = get_object_or_404(
        Note.objects.published().prefetch_related(*card_prefetches()), slug=slug
    )
    _refresh_stale(request, [note])
    # « Prev is the older note, Next » the newer one; promotions included (theme behaviour).
    older, newer = older_and_newer(note)
    recommended = Note.objects.published().recommended(
        note,
        feed_math.recommendation_start(request_generation(request), note.slug),
        feed_math.recommendation_count(site.recommendation_count),
    )
    # Its « Prev / Next » change only when a note enters, leaves or moves in the list next to
    # it (nav: named for the dates either side); the titles shown change with their notes
    # (note:). A note published since is not drawn into the recommendations of a page cached
    # meanwhile: the draw is the generation's, and any earlier draw is as good.
    depends_on(request, dependencies.nav(note.date))
    shown = [note, *(n for n in (older, newer) if n is not None)]
    depends_on(request, *(dependencies.note(slug) for slug, _ in recommended))
    notes_shown(request, shown)
    url = absolute(request, site, f"/notes/{note.slug}/")
    identity = identity_for(note, site)
    work = citable_work(request, note)
    tags = note.ordered_tags()
    description = excerpt_of(
        note, lead=DESCRIPTION, words=META_WORDS, written_chars=META_CHARS
    ).text()
    meta = PageMeta(
        title=f"{note.title or note.slug} | {site.title}",
        description=description,
        keywords=note.keywords or [tag.name for tag in tags],
        canonical=note.canonical_url or url,
        noindex=note.robots_noindex,
        og_type="article",
        og_title=note.title or note.slug,
        authors=[author.name for author in identity.authors],
        published=note.local_date,
        modified=note.updated_at,
        tags=[tag.name for tag in tags],
        scholar=_scholar_tags(note, identity, site, url),
        json_ld=_json_ld(note, identity, site, url, tags, description),
    )
    return render(
        request,
        "notes/note_detail.html",
        {
            "note": note,
            "identity": identity,
            "date": date_note_page(note.local_date),
            # Trusted: rendered and sanitised by scidraft.markup at save time.
            "body": mark_safe(note.rendered_html),  # noqa: S308
            "tags": tags,
            "share": share_links(note, site, url),
            "older": older,
            "newer": newer,
            "recommendations": recommended,
            "cite_bibtex": exports.to_bibtex(work),
            # Trusted: formatted by citation-js and sanitised (notes.citing).
            "cite_html": mark_safe(work_reference_html(work, site)),  # noqa: S308
            "meta": meta,
            "assets": assets_for([note]),
            "copy_code": site.show_code_copy_buttons,
            "edit_url": _edit_url(request, note),
        },
    )


def _edit_url(request, note: Note) -> str | None:
    """The editor's URL for a signed-in person who may edit the note. Only such a person's
    page carries it, and their pages are never cached (scidraft.site.caching._personal): an
    anonymous page, cached or not, has no Edit link."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    if not Note.objects.editable_by(user).filter(pk=note.pk).exists():
        return None
    return reverse("editor:edit", args=[note.pk])


def _scholar_tags(note: Note, identity, site: SiteSettings, url: str) -> list[tuple[str, str]]:
    """Google Scholar's Highwire tags, one citation_reference per cited entry."""
    moment = note.local_date
    tags = [("citation_title", note.title or note.slug)]
    tags += [("citation_author", author.name) for author in identity.authors]
    tags += [
        ("citation_publication_date", f"{moment:%Y/%m/%d}"),
        ("citation_online_date", f"{moment:%Y/%m/%d}"),
        ("citation_journal_title", site.title),
        ("citation_fulltext_html_url", url),
    ]
    # Decoded and bounded when the file was read: the page does no LaTeX work.
    tags += [("citation_reference", entry.scholar) for entry in cited_entries(note, "scholar")]
    return tags


def _json_ld(note: Note, identity, site: SiteSettings, url: str, tags, description: str) -> dict:
    return {
        "@context": "https://schema.org",
        "@type": "ScholarlyArticle",
        "headline": note.title or note.slug,
        "name": note.title or note.slug,
        "description": description,
        "author": [{"@type": "Person", "name": author.name} for author in identity.authors],
        "datePublished": note.local_date.isoformat(),
        "dateModified": note.updated_at.isoformat(),
        "publisher": {"@type": "Organization", "name": identity.institute},
        "isPartOf": {"@type": "WebSite", "name": site.title},
        "keywords": ", ".join(tag.name for tag in tags),
        "wordCount": note.word_count,
        "mainEntityOfPage": url,
        "url": url,
    }


def _entries(notes) -> list[dict]:
    """Tag and author list entries: the plain summary of docs/theme.md#tag-and-list-pages, its
    formulas typeset, and `...` when the card's opening words were cut."""
    entries = []
    for note in notes:
        summary = excerpt_of(note)
        entries.append(
            # Trusted: escaped text and KaTeX output, cleaned by the excerpt allowlist.
            {"note": note, "summary": mark_safe(summary.html(ellipsis="")),  # noqa: S308
             "cut": summary.cut_after, "has_math": summary.has_math,
             "date": date_long(note.local_date), "url": f"/notes/{note.slug}/"}
        )  # fmt: skip
    return entries


def tag_list(request):
    site = site_settings(request)
    meta = PageMeta(title=f"Tags | {site.title}", canonical=absolute(request, site, "/tags/"))
    return render(
        request,
        "notes/tag_list.html",
        {"tags": Tag.objects.with_published_counts(), "meta": meta, "body_class": "list"},
    )


def _entry_list(request, template: str, notes, base: str, page, meta: PageMeta, **context):
    """A paginated list of note entries (tag and author pages), `pager_size` per page."""
    site = site_settings(request)
    page = int(page)
    # The count by an aggregate and one page of ids in feed order, then those rows: the
    # notes' other pages are never sorted with their columns (note_list_cover_idx).
    total, pinned = notes.count_in_feed()
    pages, offset = _paginate(total, site.pager_size, page)
    meta.title = meta.title + f" | {site.title}"
    meta.canonical = absolute(request, site, _page_url(base, page))
    shown = list(notes.for_entries().page_in_feed_order(offset, site.pager_size, pinned))
    notes_shown(request, shown)
    entries = _entries(shown)
    return render(
        request,
        template,
        {
            **context,
            "entries": entries,
            "assets": {"math": any(entry["has_math"] for entry in entries)},
            "pagination": _pagination(base, page, pages),
            "meta": meta,
            "body_class": "list",
        },
    )


def tag_detail(request, slug: str, page: int = 1):
    tag = get_object_or_404(Tag.objects.public(), slug=slug)
    depends_on(request, dependencies.listing_tag(tag.slug))
    notes = Note.objects.published().with_tag(tag)
    return _entry_list(
        request, "notes/tag_detail.html", notes, f"/tags/{tag.slug}/", page,
        PageMeta(title=tag.name), tag=tag,
    )  # fmt: skip


def author_detail(request, handle: str, page: int = 1):
    author = get_object_or_404(Author, handle=handle, is_active=True)
    depends_on(request, dependencies.listing_author(author.handle))
    notes = Note.objects.published().filter(authors=author)
    return _entry_list(
        request, "notes/author_detail.html", notes, f"/authors/{author.handle}/", page,
        PageMeta(title=author.name, description=author.bio, og_type="profile"), author=author,
    )  # fmt: skip


# What the search page reads from its query string (notes.search.search_page); the other
# standalone pages read nothing from it.
SEARCH_QUERY = ("q", "page")


def _search_page_slugs() -> frozenset[str]:
    pages = Page.objects.published().filter(layout=Page.Layout.SEARCH)
    return frozenset(pages.values_list("slug", flat=True))


search_page_slugs = PerGeneration(_search_page_slugs)


def page_query(request, slug: str) -> tuple[str, ...]:
    """The query parameters page_detail reads for `slug` (cached_page's `query`)."""
    return SEARCH_QUERY if slug in search_page_slugs.get(request_generation(request)) else ()


def page_detail(request, slug: str):
    """A standalone page at the site root (docs/theme.md#standalone-pages); search and archives have
    layouts."""
    page = get_object_or_404(Page.objects.published(), slug=slug)
    if page.layout == Page.Layout.SEARCH:
        from .search import search_page

        return search_page(request, page)
    if page.layout == Page.Layout.ARCHIVES:
        from .archives import archives_page

        return archives_page(request, page)
    site = site_settings(request)
    if stale_references([page]):
        # A note it references was published, unpublished or came due since: stored anew (as
        # this page shows it: nobody else's page goes stale for it).
        with silent():
            page_render_store(page=page)
    elif (page.render_flags or {}).get("has_entry_index") or page.render_version != ENGINE_VERSION:
        # An entry index lists other notes: it is rendered now, so a note published or coming
        # due since the page was saved is in it. A row from an older engine is refreshed too.
        render_page(page)
    elif render_owed(page):
        completion.schedule(completion.PAGE, page.pk)  # its process ended before completing it
    if render_incomplete(page):
        not_final(request)

    def toggle(name: str) -> bool:
        value = getattr(page, name)
        return getattr(site, name) if value is None else value

    meta = PageMeta(
        title=f"{page.title} | {site.title}",
        description=excerpt_of(
            page, lead=DESCRIPTION, words=META_WORDS, written_chars=META_CHARS
        ).text(),
        keywords=page.keywords,
        canonical=page.canonical_url or absolute(request, site, f"/{page.slug}/"),
        noindex=page.robots_noindex,
        og_type="article",
        og_title=page.title,
    )
    identity = identity_for(None, site)
    flags = page.render_flags or {}
    return render(
        request,
        "notes/page_detail.html",
        {
            "page": page,
            # Trusted: rendered and sanitised by scidraft.markup at save time; the anchors added
            # reuse the heading ids already in it.
            "body": mark_safe(  # noqa: S308
                page.rendered_html
                if page.disable_anchored_headings
                else anchored_headings(page.rendered_html)
            ),
            "toc": mark_safe(page.rendered_toc) if toggle("show_toc") else "",  # noqa: S308
            "show_breadcrumbs": toggle("show_breadcrumbs"),
            "post_meta": _post_meta(page, toggle, identity.names),
            "meta": meta,
            "assets": {
                "math": flags.get("has_math", False),
                "code": flags.get("has_code", False),
                "algorithm": flags.get("has_algorithm", False),
                "mermaid": flags.get("has_mermaid", False),
            },
            "copy_code": toggle("show_code_copy_buttons"),
        },
    )


def _post_meta(page: Page, toggle, author: str) -> list[str]:
    """PaperMod's post meta: date, reading time, word count, author — those that apply."""
    parts = []
    if page.local_date is not None:
        parts.append(date_long(page.local_date))
    if toggle("show_reading_time"):
        parts.append(f"{reading_minutes(page.word_count)} min")
    if page.show_word_count:
        parts.append(f"{page.word_count} words")
    if not page.hide_author and author:
        parts.append(author)
    return parts


_EXPORTS = {
    "bib": (exports.to_bibtex, "application/x-bibtex; charset=utf-8"),
    "ris": (exports.to_ris, "application/x-research-info-systems; charset=utf-8"),
    "json": (work_csl_json, "application/vnd.citationstyles.csl+json; charset=utf-8"),
}


def note_cite(request, slug: str, format: str):
    """The note itself as a reference: cite.bib, cite.ris, cite.json (CSL-JSON)."""
    note = get_object_or_404(Note.objects.published().with_authorships(), slug=slug)
    depends_on(request, dependencies.note(note.slug))
    formatter, content_type = _EXPORTS[format]
    response = HttpResponse(formatter(citable_work(request, note)), content_type=content_type)
    response["Content-Disposition"] = f'inline; filename="{slug}.{format}"'
    return response


def note_references_bib(request, slug: str):
    """Exactly the entries the note cites, in citation order, as written in their files."""
    note = get_object_or_404(Note.objects.published(), slug=slug)
    depends_on(request, dependencies.note(note.slug))
    response = HttpResponse(
        references_bibtex(note), content_type="application/x-bibtex; charset=utf-8"
    )
    response["Content-Disposition"] = f'inline; filename="{slug}-references.bib"'
    return response


def note_references_export(request, slug: str, format: str):
    """The entries the note cites, in citation order, as RIS or CSL-JSON: citation-js's
    mapping, the one the reference lists are formatted from."""
    note = get_object_or_404(Note.objects.published(), slug=slug)
    depends_on(request, dependencies.note(note.slug))
    entries = [
        entry_data(entry) for entry in cited_entries(note, "entry_type", "fields", "persons")
    ]
    if format == "ris":
        body, content_type = ris_records(entries), "application/x-research-info-systems"
    else:
        body = json.dumps(csl_items(entries), ensure_ascii=False, indent=2) + "\n"
        content_type = "application/vnd.citationstyles.csl+json"
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{slug}-references.{format}"'
    return response
