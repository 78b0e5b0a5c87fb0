"""The rendering engine, fed from the database: contexts for notes and pages, stored renders.

scidraft.markup knows no models; this module gives it the site's environment kinds, its
bibliography files and the other notes' labels, and stores the result on the row with the
engine version and a hash of everything the output depends on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

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


def _resolve_reference(slug: str, label: str) -> ReferenceTarget | None:
    row = Note.objects.filter(slug=slug).values("render_labels").first()
    if row is None:
        return None
    target = (row["render_labels"] or {}).get(label)
    if target is None:
        return None
    return ReferenceTarget(text=target["text"], url=f"/notes/{slug}/#{target['anchor']}")


def _resolve_data(name: str):
    from .hugo_io import resolve_data  # imported Hugo data files (data/promotion-visual.yaml)

    return resolve_data(name)


def context_for(note: Note | None = None, *, base: RenderContext | None = None) -> RenderContext:
    """The context a note renders in. `base` (from batch_context) reuses the site-wide parts
    across many notes: an import renders thousands without asking for them again."""
    defaults: tuple[str, ...] = ()
    if note is not None and note.pk is not None:
        defaults = tuple(
            note.bibliography_links.order_by("position").values_list("bibfile__name", flat=True)
        )
    if base is not None:
        return context_with_bibliographies(base, defaults)
    site = SiteSettings.objects.current()
    return RenderContext(
        environments=environment_kinds(),
        resolve_bibliography=_resolve_bibliography,
        default_bibliographies=defaults,
        citation_style=site.citation_style,
        citation_locale=site.language_code,
        resolve_reference=_resolve_reference,
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
            "locale": context.citation_locale,
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
    "source_hash",
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
