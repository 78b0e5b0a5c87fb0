"""Stored renders: a note's rendered fields and the citation rows of what it cites."""

from __future__ import annotations

from bibliography.models import BibFile
from scidraft.markup import Rendered

from ..live_references import live_context
from ..models import Note, NoteCitation
from ..rendering import RENDERED_FIELDS, context_for, render_note, source_hash


def note_render_store(*, note: Note, force: bool = False, base=None) -> bool:
    """Render the note and store the result, unless the stored render is already current.

    Returns whether it rendered. The source hash covers the body, the engine version and the
    site's kinds and style, so a stale row is found without comparing HTML. `base` is a
    batch_context() shared by many notes. A published note renders as readers see it: from
    the entries kept with its live version where the site requires review.
    """
    context = live_context(note, context_for(note, base=base))
    rendered = note_render_fields(note=note, context=context, force=force)
    if rendered is None:
        return False
    citations_store(note=note, rendered=rendered)
    return True


def note_render_fields(*, note: Note, context, force: bool = False) -> Rendered | None:
    """Render and save the rendered fields, unless current; the citations are the caller's."""
    if not force and note.source_hash == source_hash(note.body, context):
        return None
    rendered = render_note(note, context)
    note.save(update_fields=RENDERED_FIELDS)
    return rendered


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
