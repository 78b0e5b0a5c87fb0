"""Standalone pages a load writes."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from notes.models import (
    Page,
    Status,
)
from notes.rendering import (
    RENDERED_FIELDS,
    context_for,
    render_page,
    source_hash,
)
from notes.services.records import (
    author_for_identity,
    identity_handle,
)

from ..content import PageSource
from .report import LoadPolicy, RowChange, changed_fields

_PAGE_FLAG_DEFAULTS = {
    "show_toc": None,
    "show_reading_time": None,
    "show_word_count": None,
    "show_breadcrumbs": None,
    "show_post_nav_links": None,
    "show_code_copy_buttons": None,
    "show_related_posts": None,
    "hide_meta": False,
    "hide_author": False,
    "hide_description": False,
    "hide_summary": False,
    "hide_footer": False,
    "comments": False,
    "disable_anchored_headings": False,
    "search_hidden": False,
    "hidden_in_rss": False,
    "robots_noindex": False,
    "disable_share": False,
}


@transaction.atomic
def page_import(*, source: PageSource, policy: LoadPolicy | None = None) -> tuple[Page, str]:
    """Create or update the standalone page `source.slug`; returns it and "created",
    "updated", "unchanged" or (when `policy` keeps the page as it is) "kept"."""
    page, outcome, _ = _page_import(source, policy or LoadPolicy())
    return page, outcome


def _page_values(source: PageSource) -> dict[str, Any]:
    layout = source.layout.lower() if source.layout.lower() in {"search", "archives"} else ""
    params = dict(source.params)
    if source.layout and not layout:
        params["layout"] = source.layout  # a layout SciDraft has no template for: kept
    values = {
        "title": source.title or source.slug.replace("-", " ").title(),
        "body": source.body,
        "description": source.description,
        "summary": source.summary,
        "status": Status.DRAFT if source.draft else Status.PUBLISHED,
        "layout": layout,
        "placeholder": source.placeholder,
        "weight": source.weight,
        "keywords": source.keywords,
        "canonical_url": source.canonical_url,
        "date": source.date,
        "date_offset_minutes": source.date_offset_minutes,
        "params": params,
        **{name: source.flags.get(name, default) for name, default in _PAGE_FLAG_DEFAULTS.items()},
    }
    return values


@transaction.atomic
def _page_import(
    source: PageSource, policy: LoadPolicy
) -> tuple[Page | None, str, RowChange | None]:
    """page_import, and the page's change (None when created or unchanged)."""
    page = Page.objects.select_for_update().filter(slug=source.slug).first()
    asked = RowChange("pages", source.slug, "create" if page is None else "update", row=page)
    asked.kept = policy.row_kept(asked)
    if asked.kept:
        if page is not None:
            asked.fields = changed_fields(page, _page_values(source))
            current = set(page.authors.values_list("handle", flat=True))
            wanted = {identity_handle(identity) for identity in source.authors}
            if current != wanted:
                asked.fields["authors"] = (sorted(current), sorted(wanted))
            if not asked.fields:
                return page, "unchanged", None
        return page, "kept", asked
    created = page is None
    if created:
        page = Page(slug=source.slug)
    fields = changed_fields(page, _page_values(source))
    if fields or created:
        for name, (_, value) in fields.items():
            setattr(page, name, value)
        if not created:
            page.version += 1
        page.full_clean()
        page.save()
    authors = [author_for_identity(identity) for identity in source.authors]
    current = set(page.authors.values_list("pk", flat=True))
    if current != {author.pk for author in authors}:
        page.authors.set(authors)
        fields["authors"] = (current, {author.pk for author in authors})
    context = context_for(None)
    if page.source_hash != source_hash(page.body, context):
        render_page(page, context)
        page.save(update_fields=RENDERED_FIELDS)
    if created:
        return page, "created", None
    if fields:
        return page, "updated", RowChange("pages", page.slug, "update", fields)
    return page, "unchanged", None
