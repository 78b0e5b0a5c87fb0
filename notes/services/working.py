"""Where a note's editable state lives, and how it goes live.

A draft (or a note in its first review) has no live version: the editor writes the Note row.
A published note has a live version, the Note row readers see, and at most one WorkingCopy
with its authors' unpublished changes (ARCHITECTURE, "Data model"). Both are described by one
shape, a *state*: note_state's dict (title, body, note_metadata's fields, bibliographies by
name), so saving, restoring and publishing read the same way whichever holds it.
"""

from __future__ import annotations

import datetime as dt
import functools

from django.core.exceptions import ValidationError
from django.db.models import F
from django.utils import timezone

from bibliography.models import BibFile
from scidraft.markup import render
from scidraft.site import dependencies
from scidraft.site.generation import bump_generation, deferred_bumps

from ..live_references import kept_for
from ..models import Author, LiveBibliography, Note, NoteAuthor, WorkingCopy, tag_names
from ..rendering import (
    RENDERED_FIELDS,
    apply_rendered,
    context_for,
    context_with_bibliographies,
    source_hash,
    with_macros,
)
from .kept_entries import live_bibliography_keep
from .records import assign_fields, note_state, tag_get_or_create
from .renders import FreshRender, note_render_store

# The parts of a state that the editor changes and publishing copies onto the live note.
# note_metadata's other keys (status, date offset, math, share buttons) belong to the row.
STATE_FIELDS = (
    "title", "body", "slug", "date", "authors", "institute", "tags", "summary", "description",
    "show_title", "promotion", "weight", "keywords", "canonical_url", "disable_share",
    "search_hidden", "hidden_in_rss", "robots_noindex", "params", "bibliographies", "math_macros",
)  # fmt: skip


def working_state(note: Note) -> dict:
    """What the note's authors are editing: its working copy, or the row itself."""
    copy = note.working
    if copy is None:
        return note_state(note)
    return {**note_state_defaults(note), **copy.fields, "title": copy.title, "body": copy.body}


def note_state_defaults(note: Note) -> dict:
    """The row's own values for the keys a working copy written before a field existed lacks."""
    return {
        "date_offset_minutes": note.date_offset_minutes,
        "status": note.status,
        "math": note.math,
        "share_buttons": note.share_buttons,
        "math_macros": note.math_macros,
    }


def states_equal(a: dict, b: dict) -> bool:
    return all(a.get(name) == b.get(name) for name in STATE_FIELDS)


def working_copy_write(
    note: Note, state: dict, user, *, live: dict | None = None
) -> FreshRender | None:
    """Keep `state` as the published note's working copy, rendered for the editor's preview and
    the publish check; its render when complete (a publish in the same transaction may store
    it). None, and no row, when it equals the live version (`live`, the note_state of the row
    as it is, when the caller has read it). Readers see no change: the row is not one the page
    cache listens to (scidraft.site.receivers)."""
    copy = note.working
    live = note_state(note) if live is None else live
    if states_equal(state, live) and not _carries_references(note, copy):
        if copy is not None:
            copy.delete()
        note._state.fields_cache.pop("working_copy", None)
        return None
    copy = copy or WorkingCopy(note=note)
    copy.title, copy.body = state["title"], state["body"]
    copy.fields = {k: v for k, v in state.items() if k not in {"title", "body"}}
    copy.updated_by = user if user is not None and user.is_authenticated else None
    fresh = working_copy_render(copy)
    copy.save()
    working_copy_authors_set(copy)
    note.working_copy = copy
    return fresh


def _carries_references(note: Note, copy: WorkingCopy | None) -> bool:
    """Whether `copy`, equal to the live version, is a review request for the reference lists
    its cited files now give (notes.live_references): a save must not withdraw it."""
    if copy is None or not copy.in_review:
        return False
    live = kept_for(note)
    return live is not None and live.changed


def working_copy_authors_set(copy: WorkingCopy) -> None:
    """The copy's author rows from the handles its fields name: who may edit the note
    (NoteQuerySet.editable_by) follows the authors being edited, at once."""
    handles = copy.fields.get("authors") or []
    copy.authors.set(Author.objects.filter(handle__in=handles))


def working_context(note: Note, *, reader=None):
    """The render context of what the note's authors edit: its working copy's bibliographies;
    with `reader` (a preview's), cross-note references also to the notes they may see."""
    copy = note.working
    context = context_for(note, reader=reader)
    return context if copy is None else _with_copy_fields(context, copy)


def _with_copy_fields(context, copy: WorkingCopy):
    """`context` (its note's) with what the working copy sets apart from the live note: its
    default bibliographies and its math macros."""
    names = tuple(copy.fields.get("bibliographies") or ())
    context = context_with_bibliographies(context, names)
    return with_macros(context, copy.fields.get("math_macros", copy.note.math_macros))


def working_copy_render(copy: WorkingCopy) -> FreshRender | None:
    """Render the working copy in its note's context with its own default bibliographies and
    math macros; the render, when complete."""
    context = _with_copy_fields(context_for(copy.note), copy)
    rendered = render(copy.body, context)
    digest = source_hash(copy.body, context)
    apply_rendered(copy, rendered, digest)
    return FreshRender(rendered, digest) if rendered.complete else None


def working_copy_refresh(*, note: Note) -> None:
    """Render a working copy stored by an older engine again (the editor shows its render)."""
    copy = note.working
    if copy is not None:
        working_copy_render(copy)
        copy.save(update_fields=RENDERED_FIELDS)


def version_bump(note: Note) -> None:
    """A new optimistic-lock version without saving the row: the live fields are untouched,
    so no signal fires and no cached page turns over."""
    now = timezone.now()
    Note.objects.filter(pk=note.pk).update(version=F("version") + 1, updated_at=now)
    note.version += 1
    note.updated_at = now


def fields_from_state(state: dict) -> dict:
    """The editor's values (note_save's `fields`) for a state's STATE_FIELDS."""
    fields = {name: state[name] for name in STATE_FIELDS if name in state}
    if fields.get("date"):
        fields["date"] = dt.datetime.fromisoformat(fields["date"])
    return fields


def fields_apply(note: Note, fields: dict, *, fresh: FreshRender | None = None) -> None:
    """Write the editor's values onto the note row, a new version, and re-render it (or store
    `fresh`, a render of the same text in the same context: note_render_store)."""
    fields_write(note, fields)
    note_render_store(note=note, force=True, fresh=fresh)


def fields_write(note: Note, fields: dict) -> None:
    """Write the editor's values onto the note row, a new version; its render, and with it
    the search vector, is the caller's (fields_apply, note_save)."""
    tags = fields.get("tags")
    authors = fields.get("authors")
    bibliographies = fields.get("bibliographies")
    assign_fields(
        note,
        {k: v for k, v in fields.items() if k not in {"tags", "authors", "bibliographies"}},
    )
    if tags is not None:
        tags = note.tag_order = tag_names(tags)
    note.version += 1
    note.full_clean()
    # The caller's render saves the rendered fields next, which stores the search vector of
    # the new text (one to_tsvector of the whole note instead of two); this UPDATE leaves both
    # out, rather than send the old rendered HTML only to replace it.
    note.save(index=False, update_fields=_row_fields())
    if tags is not None:
        note.tags.set([tag_get_or_create(name) for name in tags])
    if authors is not None:
        authors_set(note, authors)
    if bibliographies is not None:
        bibliographies_set(note, bibliographies)


@functools.cache
def _row_fields() -> tuple[str, ...]:
    """The note's columns but its render's and its search vector's."""
    return tuple(
        field.name
        for field in Note._meta.concrete_fields
        if not field.primary_key and field.name not in {*RENDERED_FIELDS, "search_vector"}
    )


def authors_set(note: Note, handles: list[str]) -> None:
    """The note's authors, in order, from their handles; an unknown handle is an error."""
    handles = list(dict.fromkeys(handles))
    found = dict(Author.objects.filter(handle__in=handles).values_list("handle", "pk"))
    missing = [handle for handle in handles if handle not in found]
    if missing:
        raise ValueError(f"No author has the handle {', '.join(missing)}.")
    wanted = [found[handle] for handle in handles]
    if list(note.authorships.values_list("author_id", flat=True)) == wanted:
        return
    before = list(note.authorships.values_list("author__handle", flat=True))
    note.authorships.all().delete()
    NoteAuthor.objects.bulk_create(
        NoteAuthor(note=note, author_id=pk, position=position) for position, pk in enumerate(wanted)
    )
    # bulk_create sends no signal: the note's pages, and the lists of the authors it left and
    # joined (scidraft.site.receivers).
    changed = map(dependencies.listing_author, {*before, *handles})
    bump_generation(dependencies.note(note.slug), *changed)


def bibliographies_set(note: Note, items) -> None:
    """The note's default bibliographies, in order, from BibFiles, ids or names (the caller
    has checked that they may be attached)."""
    names = [item for item in items if isinstance(item, str)]
    by_name = dict(BibFile.objects.filter(name__in=names).values_list("name", "pk"))
    wanted = []
    for item in items:
        pk = by_name.get(item) if isinstance(item, str) else int(getattr(item, "pk", item))
        if pk is not None and pk not in wanted:
            wanted.append(pk)
    current = list(
        note.bibliography_links.order_by("position").values_list("bibfile_id", flat=True)
    )
    if current == wanted:
        return
    with deferred_bumps():
        note.bibliography_links.all().delete()
        for position, pk in enumerate(wanted):
            note.bibliography_links.create(bibfile_id=pk, position=position)


def working_copy_publish(note: Note, *, fresh: FreshRender | None = None) -> bool:
    """Make the working copy the live version (a new version of the row) and drop it.
    False when there was nothing to publish. `fresh` is the copy's render made by a save in
    this transaction (working_copy_write), stored as the note's when its hash, which covers the
    text, is the note's (note_render_store)."""
    copy = note.working
    if copy is None:
        return False
    state = working_state(note)
    slug = state.get("slug") or note.slug
    if Note.objects.filter(slug=slug).exclude(pk=note.pk).exists():
        raise ValidationError(
            {"slug": f"Another note took the slug “{slug}” since: choose another and publish."}
        )
    LiveBibliography.objects.filter(note=note).delete()  # the new version reads the files
    fields_apply(note, fields_from_state(state), fresh=fresh)
    copy.delete()
    note._state.fields_cache.pop("working_copy", None)
    live_bibliography_keep(note)
    return True
