"""The rendering engine, fed from the database: contexts for notes and pages, stored renders.

scidraft.markup knows no models; this module gives it the site's environment kinds, its
bibliography files and the other notes' labels, and stores the result on the row with the
engine version and a hash of everything the output depends on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Collection

from django.conf import settings

from bibliography.formatting import StoredBibliography
from bibliography.models import BibFile
from scidraft.markup import (
    DEFAULT_ENVIRONMENTS,
    ENGINE_VERSION,
    EnvironmentKind,
    ReferenceTarget,
    RenderContext,
    Rendered,
    render,
)
from scidraft.site.models import SiteSettings

from .entry_index import render_entry_index
from .models import Environment, Note, Page, RenderedContent


def environment_kinds() -> tuple[EnvironmentKind, ...]:
    """The site's kinds; the built-in ones when the table is empty (a flushed or new database),
    since a site without any kind would silently unnumber every environment."""
    kinds = tuple(
        EnvironmentKind(env.key, env.label, env.plural, env.counter, env.numbered, env.style)
        for env in Environment.objects.all()
    )
    return kinds or DEFAULT_ENVIRONMENTS


def _resolve_bibliography(name: str):
    bibfile = BibFile.objects.filter(name=name.strip().lstrip("/")).first()
    return StoredBibliography(bibfile) if bibfile is not None else None


# Slugs asked for in one query: well under every database's limit on parameters.
REFERENCE_SLUGS_PER_QUERY = 1_000


def references_in(notes) -> Callable[[Collection[tuple[str, str]]], dict]:
    """A RenderContext.resolve_references that finds labels in `notes` only (a queryset: what
    the render's reader may see), every pair of a render in one query (one per
    REFERENCE_SLUGS_PER_QUERY distinct notes)."""

    def resolve(pairs: Collection[tuple[str, str]]) -> dict[tuple[str, str], ReferenceTarget]:
        slugs = sorted({slug for slug, _ in pairs})
        labels: dict[str, dict] = {}
        for start in range(0, len(slugs), REFERENCE_SLUGS_PER_QUERY):
            chunk = slugs[start : start + REFERENCE_SLUGS_PER_QUERY]
            labels.update(notes.filter(slug__in=chunk).values_list("slug", "render_labels"))
        found = {}
        for slug, label in pairs:
            target = (labels.get(slug) or {}).get(label)
            if target is not None:
                found[(slug, label)] = ReferenceTarget(
                    text=target["text"], url=f"/notes/{slug}/#{target['anchor']}"
                )
        return found

    return resolve


def public_references(pairs: Collection[tuple[str, str]]) -> dict[tuple[str, str], ReferenceTarget]:
    """Targets among the notes every reader sees: the stored render is public (issue 16: a
    \\ref to a draft showed its label, and linked to it, on the published page)."""
    return references_in(Note.objects.published())(pairs)


def stale_references(rows) -> list:
    """The rows (notes or pages, as read) whose stored cross-note references no longer
    resolve as they did when rendered: a target published, come due, unpublished, renamed or
    renumbered since. One query for all of them, none when no row has such a reference."""
    wanted = {tuple(key.split(":", 1)) for row in rows for key in (row.render_refs or {})}
    if not wanted:
        return []
    now = {
        f"{slug}:{label}": {"text": target.text, "url": target.url}
        for (slug, label), target in public_references(wanted).items()
    }
    return [
        row
        for row in rows
        if any(now.get(key) != stored for key, stored in (row.render_refs or {}).items())
    ]


def _resolve_data(name: str):
    from .hugo_io import resolve_data  # imported Hugo data files (data/promotion-visual.yaml)

    return resolve_data(name)


def context_for(
    note: Note | None = None, *, base: RenderContext | None = None, reader=None
) -> RenderContext:
    """The context a note renders in. `base` (from batch_context) reuses the site-wide parts
    across many notes: an import renders thousands without asking for them again.

    Cross-note references resolve against published notes, as every stored render is shown
    to the public; a preview for `reader` (the editor's, the reviewer's) also against the
    notes `reader` may see."""
    defaults: tuple[str, ...] = ()
    if note is not None and note.pk is not None:
        defaults = tuple(
            note.bibliography_links.order_by("position").values_list("bibfile__name", flat=True)
        )
    if base is not None:
        context = context_with_bibliographies(base, defaults)
    else:
        context = _site_context(defaults)
    if reader is not None:
        context.resolve_references = references_in(Note.objects.visible_to(reader))
    return context


def _site_context(defaults: tuple[str, ...]) -> RenderContext:
    site = SiteSettings.objects.current()
    return RenderContext(
        environments=environment_kinds(),
        resolve_bibliography=_resolve_bibliography,
        default_bibliographies=defaults,
        citation_style=site.citation_style,
        resolve_references=public_references,
        render_entry_index=render_entry_index,
        resolve_data=_resolve_data,
        promotion_link=site.promotion_link,
        max_source_bytes=settings.NOTE_BODY_MAX_BYTES,
    )


def context_with_bibliographies(base: RenderContext, names: tuple[str, ...]) -> RenderContext:
    """`base` for a note whose default bibliographies (BibFile names, in order) are known."""
    return dataclasses.replace(base, default_bibliographies=tuple(names))


def batch_context() -> RenderContext:
    """A context for rendering many notes in one go (imports): bibliography files and their
    entries are looked up once for the whole batch."""
    base = context_for(None)
    files: dict[str, StoredBibliography | None] = {}

    def resolve(name: str):
        if name not in files:
            files[name] = _resolve_bibliography(name)
        return files[name]

    return dataclasses.replace(base, resolve_bibliography=resolve)


def source_hash(body: str, context: RenderContext) -> str:
    """Changes whenever the stored render could: the body, the engine, the kinds, the style."""
    payload = json.dumps(
        {
            "engine": ENGINE_VERSION,
            "body": body,
            "kinds": [kind.__dict__ for kind in context.environments],
            "style": context.citation_style,
            "bibs": list(context.default_bibliographies),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def apply_rendered(instance: RenderedContent, rendered: Rendered, digest: str) -> None:
    instance.rendered_html = rendered.html
    instance.rendered_card_html = rendered.card_html
    instance.rendered_toc = rendered.toc
    instance.rendered_text = rendered.text
    instance.word_count = rendered.word_count
    instance.render_flags = rendered.flags
    instance.render_labels = rendered.labels
    instance.render_refs = rendered.references
    instance.render_citations = [
        {"bib": lst.bib, "title": lst.title, "keys": lst.keys, "missing": lst.missing}
        for lst in rendered.citations
    ]
    instance.render_warnings = [
        {"line": w.line, "code": w.code, "message": w.message} for w in rendered.warnings
    ]
    instance.render_version = ENGINE_VERSION
    instance.source_hash = digest


RENDERED_FIELDS = [
    "rendered_html", "rendered_card_html", "rendered_toc", "rendered_text", "word_count",
    "render_flags", "render_labels", "render_citations", "render_warnings", "render_version",
    "source_hash", "render_refs",
]  # fmt: skip


def render_note(note: Note, context: RenderContext | None = None) -> Rendered:
    """Render `note` and store the result on the instance (the caller saves it)."""
    context = context or context_for(note)
    rendered = render(note.body, context)
    apply_rendered(note, rendered, source_hash(note.body, context))
    return rendered


def render_page(page: Page, context: RenderContext | None = None) -> Rendered:
    context = context or context_for(None)
    rendered = render(page.body, context)
    apply_rendered(page, rendered, source_hash(page.body, context))
    return rendered
