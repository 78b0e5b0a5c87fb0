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
from pathlib import Path
from typing import Any

from django.conf import settings

from bibliography.formatting import StoredBibliography
from bibliography.models import BibFile
from hugosite.models import DataFile, HugoAsset
from scidraft.markup import (
    DEFAULT_ENVIRONMENTS,
    ENGINE_VERSION,
    EnvironmentKind,
    ReferenceTarget,
    RenderContext,
    Rendered,
    UnavailableBibliography,
    render,
)
from scidraft.markup.mathmacros import Preamble
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


def _bib_name(name: str) -> str:
    return name.strip().lstrip("/")


def _resolve_bibliography(name: str):
    bibfile = BibFile.objects.for_citing().filter(name=_bib_name(name)).first()
    return StoredBibliography(bibfile) if bibfile is not None else None


PRIVATE_BIBLIOGRAPHY = UnavailableBibliography(
    "is private: a note may name its default bibliographies, shared and public files, and "
    "files uploaded by whoever created the note. Attach it to this note under Bibliographies "
    "(its owner or an Editor can), or ask an Editor to make it public."
)


@dataclasses.dataclass(frozen=True)
class NoteBibliographies:
    """The resolve_bibliography of one note: `resolve` limited to the files the note may name,
    whoever renders it (save, preview, review, import, re-render): its default bibliographies
    (`attached`, names) and the files BibFile.may_be_named_by its creator. Another file is
    UnavailableBibliography: the reference list shows no entry of it and warns."""

    resolve: Callable[[str], Any]
    note: Note
    attached: frozenset[str]

    def __call__(self, name: str):
        found = self.resolve(name)
        if not isinstance(found, StoredBibliography) or _bib_name(name) in self.attached:
            return found
        if found.bibfile.may_be_named_by(self.note.created_by_id):
            return found
        return PRIVATE_BIBLIOGRAPHY


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
                    text=target["text"],
                    url=f"/notes/{slug}/#{target['anchor']}",
                    kind=target.get("kind", ""),
                    number=target.get("number", ""),
                )
        return found

    return resolve


def public_references(pairs: Collection[tuple[str, str]]) -> dict[tuple[str, str], ReferenceTarget]:
    """Targets among the notes every reader sees: the stored render is public (a
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


# The headless bundle whose images promotion-visual rows name
# (docs/theme.md#promotions-and-galleries).
PROMOTION_BUNDLE = "resume-templates/modern-professional-resume"


def _resolve_data(name: str) -> Any:
    """The renderer's data lookup (imported Hugo data files, data/promotion-visual.yaml): a data
    file's content, image names resolved to URLs."""
    row = DataFile.objects.filter(name=name).values_list("content", flat=True).first()
    if row is None or not isinstance(row, dict) or not isinstance(row.get("rows"), list):
        return row
    bundled = {
        Path(path).name: path
        for path in HugoAsset.objects.filter(
            kind=HugoAsset.Kind.BUNDLE, path__startswith=PROMOTION_BUNDLE + "/"
        ).values_list("path", flat=True)
    }
    if not bundled:
        return row
    rows = []
    for data_row in row["rows"]:
        if isinstance(data_row, dict) and isinstance(data_row.get("images"), list):
            images = []
            for image in data_row["images"]:
                if isinstance(image, dict) and str(image.get("file", "")) in bundled:
                    path = bundled[str(image["file"])]
                    image = {**image, "file": f"{settings.MEDIA_URL}hugo/bundles/{path}"}
                images.append(image)
            data_row = {**data_row, "images": images}
        rows.append(data_row)
    return {**row, "rows": rows}


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
        context = context_with_bibliographies(base, defaults, note=note)
    else:
        context = _site_context(note, defaults)
    if reader is not None:
        context = dataclasses.replace(
            context, resolve_references=references_in(Note.objects.visible_to(reader))
        )
    return with_note_macros(context, note)


SITE_MACROS = "the site's math macros"
NOTE_MACROS = "the note's math macros"


def with_note_macros(context: RenderContext, note: Note | None) -> RenderContext:
    """`context` with `note`'s macros after the site's (a base made for another note, or for
    none, loses that note's)."""
    return with_macros(context, note.math_macros if note is not None else "")


def with_macros(context: RenderContext, own: str) -> RenderContext:
    """`context` with `own` as the note's macros, after the site's (what the editor has: a
    working copy's, or the side panel's while it is edited)."""
    site = tuple(p for p in context.math_macros if p.where == SITE_MACROS)
    preambles = (*site, Preamble(NOTE_MACROS, own)) if own.strip() else site
    if preambles == context.math_macros:
        return context
    return dataclasses.replace(context, math_macros=preambles)


def _site_context(note: Note | None, defaults: tuple[str, ...]) -> RenderContext:
    site = SiteSettings.objects.current()
    resolve = _resolve_bibliography
    if note is not None:
        resolve = NoteBibliographies(resolve, note, frozenset(defaults))
    return RenderContext(
        environments=environment_kinds(),
        resolve_bibliography=resolve,
        default_bibliographies=defaults,
        citation_style=site.citation_style,
        citation_locale=site.language_code,
        auto_references=site.auto_references,
        resolve_references=public_references,
        render_entry_index=render_entry_index,
        resolve_data=_resolve_data,
        promotion_link=site.promotion_link,
        max_source_bytes=settings.NOTE_BODY_MAX_BYTES,
        math_macros=(Preamble(SITE_MACROS, site.math_macros),) if site.math_macros.strip() else (),
        time_scale=settings.RENDER_TIME_PERCENT / 100,
        max_citation_styles=settings.CITATION_STYLES_PER_NOTE,
    )


def context_with_bibliographies(
    base: RenderContext, names: tuple[str, ...], *, note: Note | None = None
) -> RenderContext:
    """`base` for a note whose default bibliographies (BibFile names, in order) are known:
    `note`'s, or the note `base` was made for (a working copy's own choice of files), which
    may then name these files (NoteBibliographies)."""
    names = tuple(names)
    resolve = base.resolve_bibliography
    if isinstance(resolve, NoteBibliographies):
        note = note or resolve.note
        resolve = resolve.resolve
    if note is not None:
        resolve = NoteBibliographies(resolve, note, frozenset(names))
        base = with_note_macros(base, note)
    return dataclasses.replace(base, default_bibliographies=names, resolve_bibliography=resolve)


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
    """Changes whenever the stored render could: the body, the engine, the kinds, the style,
    the math macros (the site's and the note's)."""
    fields = {
        "engine": ENGINE_VERSION,
        "body": body,
        "kinds": [kind.__dict__ for kind in context.environments],
        "style": context.citation_style,
        "locale": context.citation_locale,
        "bibs": list(context.default_bibliographies),
    }
    if not context.auto_references:  # the default leaves the hash as it was
        fields["auto_references"] = False
    if context.math_macros:  # absent, the hash of a note without macros is as it was
        fields["macros"] = [preamble.tex for preamble in context.math_macros]
    payload = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


# render_flags of a stored render that time cut short (Rendered.complete false): shown until a
# complete one replaces it, never kept in the page cache.
INCOMPLETE = "incomplete"
# render_flags of a stored complete render kept while a newer render, cut short, is completed
# in the background (notes.completion): readers see it meanwhile.
PENDING = "pending"


def render_owed(instance: RenderedContent) -> bool:
    """Whether the stored render waits for a complete one (INCOMPLETE or PENDING)."""
    flags = instance.render_flags or {}
    return bool(flags.get(INCOMPLETE) or flags.get(PENDING))


def render_incomplete(instance: RenderedContent) -> bool:
    """Whether the stored render itself was cut short by time."""
    return bool((instance.render_flags or {}).get(INCOMPLETE))


def keeps_previous(instance: RenderedContent, rendered: Rendered) -> bool:
    """Whether `rendered` is not stored over `instance`'s render: it was cut short by time and
    the row holds a complete render, which readers see until the complete one is stored."""
    has_render = bool(instance.render_version and instance.rendered_html)
    return not rendered.complete and has_render and not render_incomplete(instance)


def apply_rendered(instance: RenderedContent, rendered: Rendered, digest: str) -> None:
    instance.rendered_html = rendered.html
    instance.rendered_card_html = rendered.card_html
    instance.rendered_toc = rendered.toc
    instance.rendered_text = rendered.text
    instance.word_count = rendered.word_count
    instance.render_flags = rendered.flags
    if not rendered.complete:
        instance.render_flags[INCOMPLETE] = True
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
    """Render `note` and store the result on the instance (the caller saves it); a render
    cut short by time leaves a complete one in place, marked PENDING (keeps_previous)."""
    context = context or context_for(note)
    rendered = render(note.body, context)
    if keeps_previous(note, rendered):
        note.render_flags = {**(note.render_flags or {}), PENDING: True}
    else:
        apply_rendered(note, rendered, source_hash(note.body, context))
    return rendered


def render_page(page: Page, context: RenderContext | None = None) -> Rendered:
    """render_note for a page."""
    context = context or context_for(None)
    rendered = render(page.body, context)
    if keeps_previous(page, rendered):
        page.render_flags = {**(page.render_flags or {}), PENDING: True}
    else:
        apply_rendered(page, rendered, source_hash(page.body, context))
    return rendered
