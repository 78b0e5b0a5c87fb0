"""What writing together keeps in the database: every update of a note's live document, and
one row of bookkeeping per note that has a live document."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from notes.models import Note


class DocumentUpdate(models.Model):
    """One Yjs update of a note's live document, as a client sent it (or the server made it:
    the seed from the note's text, an HTTP write, a compaction). The document is every update
    of its note applied in any order; ids order them for catching up."""

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="live_updates")
    data = models.BinaryField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="live_updates",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["note", "id"])]

    def __str__(self) -> str:
        return f"Update {self.pk} of {self.note_id}"


class DocumentCheckpoint(models.Model):
    """A live document's bookkeeping. Its row is locked by every insert of the note's updates,
    so their ids commit in order and "the updates after id N" misses none (PostgreSQL hands
    out ids before commit; without the lock a lower id could appear after a higher one was
    read).

    `saved_update_id` is the newest update the last merged save read. `run_from_version` to
    `run_version` are the note versions made by merged saves alone, one after another: a
    live editor's form posted on any of them repeats merged text (notes.services.text_sync).

    `generation` counts the resets of the document (collaboration.recovery): a process holding
    it from before a reset neither applies nor stores anything more on it.
    """

    note = models.OneToOneField(
        Note, on_delete=models.CASCADE, primary_key=True, related_name="live_checkpoint"
    )
    saved_update_id = models.BigIntegerField(default=0)
    run_from_version = models.PositiveIntegerField(default=0)
    run_version = models.PositiveIntegerField(default=0)
    generation = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"Live document of {self.note_id}"
