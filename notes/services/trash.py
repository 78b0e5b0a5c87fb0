"""The trash: a deleted note is hidden, not removed, so an Editor can restore it for
TRASH_DAYS; `manage.py purge_trash` removes what has been there longer."""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from ..models import Note, NoteRevision, Status
from .editing import editable_note, flushed_base_version
from .publishing import note_unpublish
from .records import is_editor, revision_record

TRASH_DAYS = 30


class TrashError(Exception):
    """A delete or restore refused for a reason the person can act on (the message says it)."""


@transaction.atomic
def note_delete(*, note_id: int, user) -> Note:
    """Move a note to the trash. Its authors delete it unless it is published (they
    unpublish it first); Editors delete any note, and a published one is unpublished in the
    same transaction (its unpublished changes become the draft, as note_unpublish keeps
    them). Revisions stay; the slug stays taken; live editors of the note are disconnected
    (collaboration.access), as no one may edit it."""
    note = editable_note(note_id=note_id, user=user)
    editor = is_editor(user)
    # Text typed together is saved first: the trashed note (and its revision) keeps it.
    flushed_base_version(note, note.version)
    if note.status == Status.PUBLISHED:
        if not editor:
            raise TrashError(
                "This note is published: unpublish it first, then delete it (or ask an Editor)."
            )
        note_unpublish(note_id=note.pk, user=user, base_version=note.version)
        note = Note.objects.select_for_update(no_key=True).get(pk=note.pk)
    elif note.status == Status.REVIEW:
        note.status = Status.DRAFT  # nothing waits for review in the trash
    note.deleted_at, note.deleted_by = timezone.now(), user
    note.version += 1
    note.save()
    revision_record(
        note=note, kind=NoteRevision.Kind.TRASH, user=user, base_version=note.version - 1
    )
    return note


@transaction.atomic
def note_restore(*, note_id: int, user) -> Note:
    """Take a note out of the trash, as a draft: Editors and Admins only."""
    if not is_editor(user):
        raise PermissionDenied("Only an Editor may restore a deleted note.")
    note = Note.objects.trashed().select_for_update(no_key=True).filter(pk=note_id).first()
    if note is None:
        raise TrashError("This note is not in the trash.")
    note.deleted_at, note.deleted_by = None, None
    note.version += 1
    note.save()
    revision_record(
        note=note, kind=NoteRevision.Kind.UNTRASH, user=user, base_version=note.version - 1
    )
    return note


def trash_purge(*, now: dt.datetime | None = None, days: int = TRASH_DAYS) -> int:
    """Remove notes trashed more than `days` ago, with their revisions; how many."""
    cutoff = (now or timezone.now()) - dt.timedelta(days=days)
    deleted, by_model = Note.objects.filter(deleted_at__lt=cutoff).delete()
    return by_model.get(Note._meta.label, 0)
