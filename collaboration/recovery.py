"""An Editor's way out for a note whose live document cannot be opened (too large, an update
that cannot be read, content that is not the note's texts): the stored updates are deleted
and the document is seeded again from the working copy, which the HTTP editor kept saving
meanwhile. Editors connected to the old document are closed with a message; their browsers
forget their copy of it (4413), so it never merges into the new one. What the old document
still lets read is saved first, as before any HTTP write."""

from __future__ import annotations

import logging
from functools import partial

from django.core.exceptions import PermissionDenied
from django.db import transaction

from notes.models import Note
from notes.services import is_editor

from . import documents, groups
from .models import DocumentCheckpoint, DocumentUpdate
from .saving import merged_save_locked

logger = logging.getLogger(__name__)

RESET_MESSAGE = (
    "An Editor reset this note's live document from the saved text. Reload the page to write "
    "together again; anything not saved is in the browser's recovery copy."
)


def live_document_reset(*, note_id: int, user) -> int:
    """Delete the note's stored updates and seed its live document from the working copy;
    Editors and Admins only. The number of updates deleted. Under the note's row lock, then
    the checkpoint's (as every insert): no update of the old document is stored after it, and
    processes holding the old one see the checkpoint's generation change."""
    if not is_editor(user):
        raise PermissionDenied("Only an Editor resets a note's live document.")
    with transaction.atomic():
        note = Note.objects.select_for_update(no_key=True).get(pk=note_id)
        merged_save_locked(note)  # what can still be read is saved first
        checkpoint = DocumentCheckpoint.objects.select_for_update().filter(note=note).first()
        deleted, _ = DocumentUpdate.objects.filter(note=note).delete()
        documents.seed_locked(note)
        # Counted from 0 when there was no checkpoint: a browser's offline store is named by
        # the generation (editor/codemirror/live.js), so every reset must give a new one.
        DocumentCheckpoint.objects.filter(note=note).update(
            generation=(checkpoint.generation if checkpoint is not None else 0) + 1
        )
        transaction.on_commit(partial(_told, note.pk))
    logger.info("Live document of note %s reset by user %s (%s updates)", note_id, user.pk, deleted)
    return deleted


def _told(note_id: int) -> None:
    documents.drop(note_id)
    groups.send_from_sync(
        groups.note_group(note_id), {"type": "live.reset", "message": RESET_MESSAGE}
    )


def live_document_refusal(note_id: int) -> str | None:
    """Why the note's live document cannot be opened, for the Editor's reset form; None when
    it opens (or has never been opened). It reads what a connecting editor would."""
    if not DocumentCheckpoint.objects.filter(note_id=note_id).exists():
        return None
    try:
        documents.limits_check(documents.caught_up(note_id))
    except documents.Refused as error:
        return str(error)
    return None
