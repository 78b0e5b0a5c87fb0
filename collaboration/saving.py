"""Merged saves: the live document's text written to the note on today's autosave rules
(notes.services.note_live_save), debounced per note in each process, serialised across
processes by the note's row lock, and the stored updates compacted on the way."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection, transaction

from notes.models import Note
from notes.services import note_live_save

from . import documents, groups
from .models import DocumentCheckpoint, DocumentUpdate

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Saved:
    """What the `saved` message tells the note's editors. Merged saves change only the title
    and body: every version from `fields_version` to `version` has the same other fields, so
    a form whose fields were loaded before `fields_version` shows some that changed since
    (someone's Save), and should not post them unseen."""

    version: int
    revision: int
    by: list[str] = field(default_factory=list)
    fields_version: int = 0

    def message(self) -> dict:
        return {
            "type": "saved",
            "version": self.version,
            "revision": self.revision,
            "by": self.by,
            "fields_version": self.fields_version,
        }


def merged_save_locked(note: Note) -> Saved | None:
    """Save the live document's text if it differs from what the authors edit; the caller
    holds the note's row lock. The database is the truth: updates this process has not
    applied are read first. None when the note has no live document or nothing changed."""
    checkpoint = DocumentCheckpoint.objects.filter(note=note).first()
    if checkpoint is None:
        return None
    try:
        live = documents.caught_up(note.pk)
    except documents.Refused as error:
        # Too large or unreadable: nothing live can be saved; the HTTP editor saves the note,
        # and an Editor's reset (collaboration.recovery) starts the document again.
        logger.warning("Live document of note %s is not loaded: %s", note.pk, error)
        return None
    title, body = live.texts()
    newest = (
        DocumentUpdate.objects.filter(note=note, author__isnull=False)
        .order_by("-id")
        .values_list("author_id", flat=True)
        .first()
    )
    person = get_user_model().objects.filter(pk=newest).first() if newest else None
    version_before = note.version
    try:
        with transaction.atomic():  # a refusal leaves the caller's transaction as it was
            result = note_live_save(note=note, user=person, title=title, body=body)
    except ValidationError:
        # Updates past the limits are refused, so only a NOTE_BODY_MAX_BYTES lowered since
        # lands here; the HTTP editor says why on its next save.
        logger.warning("Live document of note %s is over the limits: not saved", note.pk)
        return None
    compact(note, live)
    if result is None:
        return None
    by = _names(note, checkpoint.saved_update_id, live.read_up_to)
    if checkpoint.run_version != version_before:
        checkpoint.run_from_version = version_before
    checkpoint.run_version = note.version
    checkpoint.saved_update_id = live.read_up_to
    checkpoint.save()
    return Saved(
        version=note.version,
        revision=result.revision.number,
        by=by,
        fields_version=checkpoint.run_from_version,
    )


def _names(note: Note, after_id: int, up_to_id: int) -> list[str]:
    people = (
        get_user_model()
        .objects.filter(
            live_updates__note=note, live_updates__id__gt=after_id, live_updates__id__lte=up_to_id
        )
        .distinct()
        .order_by("pk")
    )
    return [person.get_full_name() or person.get_username() for person in people]


def compact(note: Note, live: documents.LiveDocument) -> None:
    """Past LIVE_COMPACT_ROWS stored updates, or LIVE_DOCUMENT_MAX_BYTES of them, replace
    those the caught-up document has read by its encoded state, in the newest of them: it
    keeps its id, so what a process has read stays read. The state is what the rows add up
    to with deleted text collected, so no row is read and what typing deleted goes away."""
    rows = DocumentUpdate.objects.filter(note=note, id__lte=live.read_up_to)
    if (
        rows.count() <= settings.LIVE_COMPACT_ROWS
        and documents.stored_bytes(note.pk) <= settings.LIVE_DOCUMENT_MAX_BYTES
    ):
        return
    last_id = rows.order_by("-id").values_list("id", flat=True).first()
    if last_id is None:
        return
    with live.lock:
        merged = live.doc.get_update()
    DocumentUpdate.objects.filter(pk=last_id).update(data=merged)
    rows.filter(id__lt=last_id).delete()


def live_save(note_id: int) -> Saved | None:
    """A merged save in its own transaction (the debounce's, the last editor's leaving)."""
    with transaction.atomic():
        note = Note.objects.select_for_update(no_key=True).filter(pk=note_id).first()
        if note is None:
            return None
        return merged_save_locked(note)


class SaveScheduler:
    """The debounce of one process: a note is saved LIVE_SAVE_IDLE_MS after its last update,
    and at most LIVE_SAVE_MAX_MS after the first unsaved one while typing goes on."""

    def __init__(self):
        self.tasks: dict[int, asyncio.Task] = {}
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}

    def touch(self, note_id: int) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self.first.setdefault(note_id, now)
        self.last[note_id] = now
        task = self.tasks.get(note_id)
        if task is None or task.done() or task.get_loop() is not loop:
            self.tasks[note_id] = loop.create_task(self._wait_and_save(note_id))

    async def _wait_and_save(self, note_id: int) -> None:
        loop = asyncio.get_running_loop()
        idle = settings.LIVE_SAVE_IDLE_MS / 1000
        longest = settings.LIVE_SAVE_MAX_MS / 1000
        while True:
            due = min(self.last[note_id] + idle, self.first[note_id] + longest)
            if loop.time() >= due:
                break
            await asyncio.sleep(due - loop.time())
        self.first.pop(note_id, None)
        self.last.pop(note_id, None)
        self.tasks.pop(note_id, None)
        await save_and_tell(note_id)

    async def flush(self, note_id: int) -> None:
        """Save now (the note's last editor in this process left)."""
        task = self.tasks.pop(note_id, None)
        if task is not None:
            task.cancel()
        self.first.pop(note_id, None)
        self.last.pop(note_id, None)
        await save_and_tell(note_id)


async def save_and_tell(note_id: int) -> None:
    # A merged save renders the note (up to a second): off the thread that stores every
    # update, so typing is acknowledged meanwhile. Not on SQLite, whose one writer would only
    # make the updates wait for the lock instead.
    own_thread = connection.vendor != "sqlite"
    try:
        saved = await database_sync_to_async(live_save, thread_sensitive=not own_thread)(note_id)
    except Exception:
        # The updates are stored: the next save, or an HTTP write's flush, writes them.
        logger.exception("Merged save of note %s failed", note_id)
        return
    if saved is not None:
        await groups.send_saved(note_id, saved.message())


scheduler = SaveScheduler()
