"""Stored renders: a note's or a page's rendered fields, completed in the background when
time cut them short (notes.completion), and the citation rows of what a note cites."""

from __future__ import annotations

import dataclasses

from django.conf import settings
from django.db import transaction

from bibliography.models import BibFile
from scidraft.markup import Rendered, RenderWarning, render

from .. import completion
from ..live_references import live_context
from ..models import Note, NoteCitation, Page
from ..rendering import (
    PENDING,
    RENDERED_FIELDS,
    apply_rendered,
    context_for,
    render_note,
    render_owed,
    render_page,
    source_hash,
)


@dataclasses.dataclass(frozen=True)
class FreshRender:
    """A complete render of a text whose source hash is `digest`, made earlier in the same
    transaction: a working copy's, rendered by the save of the click that now publishes it
    (note_save_and_publish). A note whose own context hashes the same stores it rather than
    render the same text again. Only a render of the same transaction qualifies, because the
    hash leaves out what may change meanwhile: the cited files' entries, other notes' labels."""

    rendered: Rendered
    digest: str


def note_render_store(
    *, note: Note, force: bool = False, base=None, fresh: FreshRender | None = None
) -> bool:
    """Render the note and store the result, unless the stored render is already current.

    Returns whether it rendered (or stored `fresh`, when its hash is the note's). The source
    hash covers the body, the engine version and the site's kinds and style, so a stale row is
    found without comparing HTML. `base` is a batch_context() shared by many notes. A
    published note renders as readers see it: from the entries kept with its live version
    where the site requires review. A render cut short by time keeps the previous complete
    render and its citation rows (render_note) until notes.completion stores one.
    """
    context = live_context(note, context_for(note, base=base))
    if fresh is not None and fresh.digest == source_hash(note.body, context):
        apply_rendered(note, fresh.rendered, fresh.digest)
        note.save(update_fields=RENDERED_FIELDS)
        citations_store(note=note, rendered=fresh.rendered)
        return True
    rendered = note_render_fields(note=note, context=context, force=force)
    if rendered is None:
        return False
    if not note.render_flags.get(PENDING):  # this render was stored
        citations_store(note=note, rendered=rendered)
    return True


def note_render_fields(*, note: Note, context, force: bool = False) -> Rendered | None:
    """Render and save the rendered fields, unless current; the citations are the caller's.
    A render cut short by time is completed in the background once this write commits."""
    if not force and note.source_hash == source_hash(note.body, context):
        return None
    rendered = render_note(note, context)
    note.save(update_fields=RENDERED_FIELDS)
    if not rendered.complete:
        completion.schedule(completion.NOTE, note.pk)
    return rendered


def page_render_store(*, page: Page, context=None) -> Rendered:
    """Render the page and save its rendered fields; as for notes, a render cut short by time
    keeps a complete one (render_page) and is completed in the background."""
    rendered = render_page(page, context)
    page.save(update_fields=RENDERED_FIELDS)
    if not rendered.complete:
        completion.schedule(completion.PAGE, page.pk)
    return rendered


# What a render stored after its last try in the background says when time still ran out.
CUT_SHORT = (
    "this note did not render in full even with {scale} times the usual time: what did not "
    "fit is shown as text (shorten it, or split it into several notes)"
)


def _with_more_time(body: str, context, *, final: bool) -> Rendered | None:
    """`body` rendered with RENDER_COMPLETION_TIME_SCALE times the time: None when time ran
    out again before the last try; on the last try what it reached, final, with a warning."""
    scale = settings.RENDER_COMPLETION_TIME_SCALE
    rendered = render(body, dataclasses.replace(context, time_scale=context.time_scale * scale))
    if rendered.complete:
        return rendered
    if not final:
        return None
    rendered.warnings = [
        RenderWarning(1, "render-cut-short", CUT_SHORT.format(scale=scale))
        if warning.code == "render-incomplete"
        else warning
        for warning in rendered.warnings
    ]
    rendered.complete = True  # stored as final, with the warning
    return rendered


def note_render_complete(*, note_id: int, final: bool = False) -> bool:
    """Render a note whose stored render is owed (cut short by time, or kept while a newer
    one was) again with more time (_with_more_time), outside any request, and store it when it
    is complete, or when `final`. Returns whether nothing is owed any more. A note changed
    meanwhile is left to the render of that change."""
    note = Note.objects.filter(pk=note_id).first()
    if note is None or not render_owed(note):
        return True
    context = context_for(note)
    digest = source_hash(note.body, context)
    rendered = _with_more_time(note.body, context, final=final)
    if rendered is None:
        return False
    with transaction.atomic():
        current = Note.objects.select_for_update(no_key=True).filter(pk=note_id).first()
        if current is None or source_hash(current.body, context_for(current)) != digest:
            return True
        apply_rendered(current, rendered, digest)
        current.save(update_fields=RENDERED_FIELDS)
        citations_store(note=current, rendered=rendered)
    return True


def page_render_complete(*, page_id: int, final: bool = False) -> bool:
    """note_render_complete for a page."""
    page = Page.objects.filter(pk=page_id).first()
    if page is None or not render_owed(page):
        return True
    context = context_for(None)
    digest = source_hash(page.body, context)
    rendered = _with_more_time(page.body, context, final=final)
    if rendered is None:
        return False
    with transaction.atomic():
        current = Page.objects.select_for_update().filter(pk=page_id).first()
        if current is None or source_hash(current.body, context_for(None)) != digest:
            return True
        apply_rendered(current, rendered, digest)
        current.save(update_fields=RENDERED_FIELDS)
    return True


def bibfile_pks(names: set[str]) -> dict[str, int]:
    return dict(BibFile.objects.filter(name__in=names).values_list("name", "pk"))


def citation_rows(note: Note, rendered: Rendered, bibfile_pks=bibfile_pks) -> list[NoteCitation]:
    """The NoteCitation rows of what this render cited; `bibfile_pks` maps file names to ids."""
    rows = [
        (index, number, key, reference_list.sources.get(key, ""))
        for index, reference_list in enumerate(rendered.citations)
        for number, key in enumerate(reference_list.keys, start=1)
    ]
    files = bibfile_pks({name for *_, name in rows if name})
    return [
        NoteCitation(
            note=note,
            bibfile_id=files.get(name),
            bib_name=name,
            key=key,
            list_index=index,
            number=number,
        )
        for index, number, key, name in rows
    ]


def citations_store(*, note: Note, rendered: Rendered) -> None:
    """Replace the note's NoteCitation rows with what this render cited."""
    rows = citation_rows(note, rendered)
    NoteCitation.objects.filter(note=note).delete()
    NoteCitation.objects.bulk_create(rows)
