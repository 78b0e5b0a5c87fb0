"""The editor's HTTP writes and the live document (notes.services.text_sync): before a write,
text typed together is saved (a merged save), so the write's optimistic lock sees it and a
stale client gets today's conflict revision instead of overwriting it; after a write that
changed the title or body, the change goes into the live document as Y operations, stored
and broadcast, so connected editors see it."""

from __future__ import annotations

from functools import partial

from django.db import transaction

from notes.models import Note
from notes.services import working_state
from notes.services.text_sync import MergedSaves

from . import documents, groups
from .models import DocumentCheckpoint
from .protocol import sync_update
from .saving import merged_save_locked


class LiveTextSync:
    def before_write(self, *, note: Note) -> MergedSaves | None:
        saved = merged_save_locked(note)
        if saved is not None:
            message = {"type": "live.server", "message": saved.message()}
            transaction.on_commit(
                partial(groups.send_from_sync, groups.note_group(note.pk), message)
            )
        checkpoint = DocumentCheckpoint.objects.filter(note=note).first()
        if checkpoint is None or checkpoint.run_version != note.version:
            return None
        state = working_state(note)
        return MergedSaves(
            first_version=checkpoint.run_from_version,
            version=checkpoint.run_version,
            title=state["title"],
            body=state["body"],
        )

    def after_write(self, *, note: Note, user) -> None:
        if not DocumentCheckpoint.objects.filter(note=note).exists():
            return  # no live document yet: it is seeded from the note when first opened
        try:
            live = documents.caught_up(note.pk)
        except documents.Refused:
            return  # nobody can open it live: the note's text is the HTTP editor's alone
        state = working_state(note)
        data = documents.written_update(live, state["title"], state["body"])
        if data is None:
            return
        row = documents.update_insert(note.pk, data, getattr(user, "pk", None), live.generation)
        transaction.on_commit(partial(_told, note.pk, row.pk, data))


def _told(note_id: int, update_id: int, data: bytes) -> None:
    """After the write's commit: this process's document and every connected editor."""
    live = documents.held(note_id)
    if live is not None:
        live.apply_stored(update_id, data)
    groups.send_from_sync(
        groups.note_group(note_id),
        {"type": "live.update", "id": update_id, "data": data, "frame": sync_update(data)},
    )
