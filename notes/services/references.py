"""The entries a published note's live version cites, kept when it goes live, and what a
change to a cited bibliography file does to them (notes.live_references reads them).

Where the site requires review, a file change reaches a live reference list only through
"Publish changes": an author's request an Editor approves, or an Editor's own publish. Without
required review, the lists follow the files at once and nothing is kept past a file change.
"""

from __future__ import annotations

from django.db.models import Q

from scidraft.site.models import SiteSettings

from ..live_references import kept_for, reference_changes
from ..models import LiveBibliography, Note, Status, WorkingCopy
from .kept_entries import live_bibliography_keep
from .records import note_state
from .renders import note_render_store
from .working import working_copy_authors_set, working_copy_render


def live_references_publish(note: Note) -> None:
    """Render the live version from the files as they are now and keep its entries: what a
    publish or an approval makes public. The caller has made the row the new live version."""
    LiveBibliography.objects.filter(note=note).delete()
    note_render_store(note=note, force=True)
    live_bibliography_keep(note)


def references_waiting(note: Note) -> bool:
    """Whether the live version's reference lists would change if published again: a file it
    cites changed since, and the site requires review."""
    live = kept_for(note)
    return live is not None and live.changed


def reference_update_copy(note: Note, user) -> WorkingCopy:
    """A working copy equal to the live version, to carry a request to publish its new
    reference lists (its render reads the files as they are)."""
    state = note_state(note)
    copy = WorkingCopy(note=note, title=state["title"], body=state["body"])
    copy.fields = {k: v for k, v in state.items() if k not in {"title", "body"}}
    copy.updated_by = user if user is not None and user.is_authenticated else None
    working_copy_render(copy)
    copy.save()
    working_copy_authors_set(copy)  # who may edit the note follows the copy's authors
    note.working_copy = copy
    return copy


def notes_naming(name: str):
    """Notes whose stored render may depend on the file `name`: they name it, cite from it or
    attach it."""
    return Note.objects.filter(
        Q(body__contains=name)
        | Q(citations__bib_name=name)
        | Q(bibliography_links__bibfile__name=name)
    ).distinct()


def live_bibliographies_hold(*, name: str) -> None:
    """Before the file `name` changes: where the site requires review, keep the entries of
    every published note that depends on it and has none kept yet (published before review was
    required, or by an import), from the files as they still are."""
    if not SiteSettings.objects.current().require_review:
        return
    notes = notes_naming(name).filter(status=Status.PUBLISHED, live_bibliography__isnull=True)
    for note in notes:
        live_bibliography_keep(note)


def live_bibliographies_follow(*, notes) -> None:
    """After a file changed (and `notes`, those that depend on it, were rendered again): where
    the site requires review, mark which live versions would change if published again;
    otherwise the live versions follow the files, and nothing is kept for them."""
    published = [note for note in notes if note.status == Status.PUBLISHED]
    lives = LiveBibliography.objects.filter(note__in=[note.pk for note in published])
    if not SiteSettings.objects.current().require_review:
        lives.delete()
        return
    by_note = {live.note_id: live for live in lives}
    for note in published:
        live = by_note.get(note.pk)
        if live is None:
            continue
        changed = bool(reference_changes(note, live))
        if changed != live.changed:
            live.changed = changed
            live.save(update_fields=["changed"])


def live_bibliographies_release() -> None:
    """Review is no longer required: every live version reads the files as they are. Those
    that kept entries are marked stale, so they render again when next read."""
    notes = Note.objects.filter(live_bibliography__isnull=False)
    notes.update(source_hash="")
    LiveBibliography.objects.all().delete()
