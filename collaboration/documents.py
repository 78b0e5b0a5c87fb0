"""A note's live document: a Y document with two texts, "title" and "body", made of the note's
stored updates (DocumentUpdate). The database is the truth; each process holds the documents
its connected editors use (the registry) and catches up with the updates it has not applied.

Every operation on a held document runs under its lock: consumers touch it from the event
loop (updates broadcast by other processes) and from Django's sync thread (storing, saving).

What is stored is bounded, not only what the texts show: an update is read first
(collaboration.updates: plain text in "title" and "body" only, nothing it depends on missing),
then applied to a copy of the document, whose encoded size must stay within
LIVE_DOCUMENT_MAX_BYTES; the stored updates of a note, summed in SQL, stay within
STORED_FACTOR times that, and a document whose stored updates pass it is refused before any is
loaded. A document that cannot be loaded is reset from the working copy by an Editor
(collaboration.recovery).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from difflib import SequenceMatcher

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.db.models.functions import Length
from pycrdt import Doc, Text

from notes.models import Note, body_size_error
from notes.services import working_state
from scidraft.bounds import input_path

from . import updates
from .models import DocumentCheckpoint, DocumentUpdate
from .protocol import Malformed
from .updates import NotText, Refused

__all__ = ["NotText", "Refused"]

TITLE_MAX_CHARS = Note._meta.get_field("title").max_length
# The stored updates of a note may hold this many times LIVE_DOCUMENT_MAX_BYTES between two
# compactions (typing that deletes what it typed is stored whole, and merged away later).
STORED_FACTOR = 2
RESET_HINT = (
    " An Editor can reset it from the working copy (Revisions, then \u201cReset the live "
    "document\u201d); meanwhile the note is saved as you type."
)


class TooLarge(Refused):
    """What the client asked for would not fit the limits."""

    kind = "too-large"


class Corrupt(Refused):
    """A stored update cannot be read: the document cannot be loaded."""

    kind = "corrupt"


class Reset(Refused):
    """The document was reset (collaboration.recovery) since this process loaded it."""

    kind = "reset"


def stored_max() -> int:
    return STORED_FACTOR * settings.LIVE_DOCUMENT_MAX_BYTES


def stored_bytes(note_id: int) -> int:
    """The size of the note's stored updates, summed by the database (no row is read)."""
    rows = DocumentUpdate.objects.filter(note_id=note_id)
    return rows.aggregate(size=Sum(Length("data")))["size"] or 0


def generation(note_id: int) -> int | None:
    return (
        DocumentCheckpoint.objects.filter(note_id=note_id)
        .values_list("generation", flat=True)
        .first()
    )


class LiveDocument:
    def __init__(self, note_id: int):
        self.note_id = note_id
        self.doc = Doc()
        self.title = self.doc.get("title", type=Text)
        self.body = self.doc.get("body", type=Text)
        # Every stored update with an id up to read_up_to is applied, and those in `applied`.
        self.read_up_to = 0
        self.applied: set[int] = set()
        self.lock = threading.RLock()
        # The checkpoint's generation when loaded: a reset since makes this document stale.
        self.generation = 0

    def texts(self) -> tuple[str, str]:
        with self.lock:
            return str(self.title), str(self.body)

    def apply_stored(self, update_id: int, data: bytes) -> None:
        """Apply a stored update once (a second time would be harmless, only slower)."""
        with self.lock:
            if update_id <= self.read_up_to or update_id in self.applied:
                return
            self.doc.apply_update(bytes(data))  # stored, so read and admitted before
            self.applied.add(update_id)

    def catch_up(self) -> None:
        """Apply the stored updates this process has not seen (by id: the checkpoint's lock
        makes ids commit in order, so none appears later below one already read). The query
        runs outside the lock: the event loop applies broadcast updates under it. Reset when
        the document was reset since it was loaded; Corrupt for a stored update pycrdt cannot
        read."""
        if generation(self.note_id) != self.generation:
            raise Reset("The live document was reset from the working copy.")
        rows = DocumentUpdate.objects.filter(note_id=self.note_id, id__gt=self.read_up_to)
        stored = list(rows.order_by("id").values_list("id", "data"))
        with self.lock:
            for update_id, data in stored:
                if update_id > self.read_up_to and update_id not in self.applied:
                    try:
                        self.doc.apply_update(bytes(data))
                    except ValueError as error:
                        raise Corrupt(
                            f"A stored change of this note's live document (number "
                            f"{update_id}) cannot be read." + RESET_HINT
                        ) from error
                    self.applied.add(update_id)
            if stored:
                self.read_up_to = max(self.read_up_to, stored[-1][0])
            self.applied = {i for i in self.applied if i > self.read_up_to}

    def missing_for(self, state_vector: bytes) -> bytes:
        """The update a client with `state_vector` lacks (sync step 2)."""
        with self.lock:
            return self.doc.get_update(state_vector)

    def encoded_size(self) -> int:
        with self.lock:
            return len(self.doc.get_update())

    def copy(self) -> Doc:
        with self.lock:
            clone = Doc()
            clone.apply_update(self.doc.get_update())
            return clone


def size_error(title: str, body: str) -> str | None:
    """What is too large in the document's texts for a note, said for people; None if fine."""
    if len(title) > TITLE_MAX_CHARS:
        return f"The title is longer than {TITLE_MAX_CHARS} characters."
    return body_size_error(body)


def limits_check(live: LiveDocument) -> None:
    """Refused when the document could not be sent or saved: its stored state is over
    LIVE_DOCUMENT_MAX_BYTES, its text over the note's limits, or it holds more than the
    note's two texts (stored before updates were read)."""
    size = live.encoded_size()
    if size > settings.LIVE_DOCUMENT_MAX_BYTES:
        raise TooLarge(
            f"This note's live document is {size:,} bytes, more than the "
            f"{settings.LIVE_DOCUMENT_MAX_BYTES:,} that can be synchronised." + RESET_HINT
        )
    with live.lock:
        others = sorted(set(live.doc.keys()) - updates.TEXTS)
    if others:
        raise Corrupt(
            f"This note's live document holds {others[0][:40]!r} beside its title and body."
            + RESET_HINT
        )
    if message := size_error(*live.texts()):
        raise TooLarge(message)


# --- The registry: the documents of this process's connected editors ------------------------

_held: dict[int, LiveDocument] = {}
_held_lock = threading.Lock()


def held(note_id: int) -> LiveDocument | None:
    return _held.get(note_id)


def document(note_id: int) -> LiveDocument:
    """The note's document in this process, loaded (and seeded) on first use, caught up.
    Refused (and nothing held) when it cannot be loaded."""
    live = _held.get(note_id)
    if live is not None and _caught_up(live):
        return live
    loaded = loaded_document(note_id)
    with _held_lock:
        live = _held.setdefault(note_id, loaded)
    if live is not loaded and not _caught_up(live):
        return document(note_id)
    return live


def caught_up(note_id: int) -> LiveDocument:
    """The held document caught up, or one loaded for this call only (an HTTP write in a
    process where nobody edits the note live: gunicorn's)."""
    live = _held.get(note_id)
    if live is not None and _caught_up(live):
        return live
    return loaded_document(note_id)


def _caught_up(live: LiveDocument) -> bool:
    """Catch the held document up; False (and it is let go) when it is stale or a stored
    update cannot be read: the caller loads it again, and is refused if that fails too."""
    try:
        live.catch_up()
    except Refused:
        with _held_lock:
            if _held.get(live.note_id) is live:
                del _held[live.note_id]
        return False
    return True


def drop(note_id: int) -> None:
    """Forget the held document: the next use loads it from the database again (after an
    update was applied but could not be stored, or the last editor left)."""
    with _held_lock:
        _held.pop(note_id, None)


def forget_all() -> None:
    """As after a restart: every document is loaded from the database again."""
    with _held_lock:
        _held.clear()


def loaded_document(note_id: int) -> LiveDocument:
    """The document read from the database. TooLarge, before any update is read, when the
    stored updates together pass stored_max(); Corrupt when one cannot be read."""
    if not DocumentUpdate.objects.filter(note_id=note_id).exists():
        seed(note_id)
    size = stored_bytes(note_id)
    if size > stored_max():
        raise TooLarge(
            f"This note's live document has {size:,} bytes of stored changes, more than the "
            f"{stored_max():,} that can be loaded." + RESET_HINT
        )
    live = LiveDocument(note_id)
    live.generation = generation(note_id) or 0
    live.catch_up()
    return live


def seed(note_id: int) -> None:
    """Store the note's working title and body as its document's first update, so every
    process starts from the same origin. Under the note's row lock, re-checked: two processes
    seeding at once would otherwise each insert the text, and the document would hold it
    twice."""
    with transaction.atomic():
        note = Note.objects.select_for_update(no_key=True).get(pk=note_id)
        if DocumentUpdate.objects.filter(note=note).exists():
            return
        seed_locked(note)


def seed_locked(note: Note) -> None:
    """The seed, the caller holding the note's row lock and the note having no update."""
    state = working_state(note)
    doc = Doc()
    doc.get("title", type=Text).insert(0, state["title"])
    doc.get("body", type=Text).insert(0, state["body"])
    DocumentCheckpoint.objects.update_or_create(
        note=note,
        defaults={
            "saved_update_id": 0,
            "run_from_version": note.version,
            "run_version": note.version,
        },
    )
    DocumentUpdate.objects.create(note=note, data=doc.get_update())


# --- Storing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    update_id: int
    state_vector: bytes


def update_insert(
    note_id: int, data: bytes, author_id: int | None, generation: int | None = None
) -> DocumentUpdate:
    """Insert an update under the checkpoint's row lock (see DocumentCheckpoint; the seed
    made the row). The insert also takes PostgreSQL's key-share lock on the note, which the
    note's writers (FOR NO KEY UPDATE: editable_note, merged saves) do not block: a merged
    save holding the note and waiting for the checkpoint would otherwise deadlock with it.
    Reset when `generation` (the document the update was made on) is no longer the note's."""
    with transaction.atomic():
        checkpoint = DocumentCheckpoint.objects.select_for_update().get(note_id=note_id)
        if generation is not None and checkpoint.generation != generation:
            raise Reset("The live document was reset from the working copy.")
        return DocumentUpdate.objects.create(note_id=note_id, data=data, author_id=author_id)


def update_admitted(live: LiveDocument, data: bytes) -> None:
    """Refused unless the update may join the document: read first (plain text in the two
    texts, nothing missing it depends on), then applied to a copy, whose encoded size and
    texts must stay within the limits. The caller holds the document's lock."""
    shape = updates.read(data)
    if missing := updates.dependency_missing(shape, updates.state_vector(live.doc.get_state())):
        raise NotText(missing)
    copy = Doc()
    copy.apply_update(live.doc.get_update())
    try:
        copy.apply_update(data)
    except ValueError as error:  # pycrdt could not decode it: nothing was applied
        raise Malformed("The update is not a Yjs update.") from error
    after = updates.state_vector(copy.get_state())
    if any(after.get(client, 0) < end for client, (_, end) in shape.blocks.items()):
        raise NotText("The change cannot be applied whole.")  # pycrdt kept part of it pending
    size = len(copy.get_update())
    if size > settings.LIVE_DOCUMENT_MAX_BYTES:
        raise TooLarge(
            f"With this change the note's live document would be {size:,} bytes, more than "
            f"the {settings.LIVE_DOCUMENT_MAX_BYTES:,} that can be synchronised."
        )
    title, body = str(copy.get("title", type=Text)), str(copy.get("body", type=Text))
    if message := size_error(title, body):
        raise TooLarge(message)


@input_path("live-update")
def update_store(note_id: int, data: bytes, author_id: int | None) -> Stored:
    """Store a client's update and apply it to the held document, committed before this
    returns. An update the document does not admit (update_admitted), or that would take the
    stored updates past stored_max(), is refused and not stored; bytes that are no update:
    Malformed."""
    # The held document as it is: the group brings it the others' updates, and a query per
    # keystroke to catch up would only slow acknowledgements down.
    live = held(note_id) or document(note_id)
    stored = stored_bytes(note_id)
    if stored + len(data) > stored_max():
        raise TooLarge(
            f"This note's live document has {stored:,} bytes of changes not merged yet: this "
            f"one ({len(data):,} bytes) would pass the {stored_max():,} it may hold."
        )
    with live.lock:
        update_admitted(live, data)
        live.doc.apply_update(data)
        state_vector = live.doc.get_state()
    try:
        row = update_insert(note_id, data, author_id, live.generation)
    except BaseException:
        drop(note_id)
        raise
    with live.lock:
        live.applied.add(row.pk)
    return Stored(row.pk, state_vector)


# --- An HTTP write's text, as Y operations ---------------------------------------------------


def text_edits(old: str, new: str) -> list[tuple[int, int, str]]:
    """(start, length, inserted) in code points, from the end of the text to its start, that
    turn `old` into `new`: lines first, then the characters of each changed run of lines
    (SequenceMatcher on whole texts would be quadratic on a 2 MB note)."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    old_mid, new_mid = old[prefix : len(old) - suffix], new[prefix : len(new) - suffix]
    if not old_mid and not new_mid:
        return []
    old_lines = old_mid.splitlines(keepends=True)
    new_lines = new_mid.splitlines(keepends=True)
    old_starts = _starts(old_lines, prefix)
    new_starts = _starts(new_lines, 0)
    edits = []
    lines = SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in lines.get_opcodes():
        if tag == "equal":
            continue
        start, end = old_starts[i1], old_starts[i2]
        inserted = new_mid[new_starts[j1] : new_starts[j2]]
        removed = old[start:end]
        if tag == "replace" and len(removed) + len(inserted) <= 20_000:
            chars = SequenceMatcher(None, removed, inserted, autojunk=False)
            for ctag, c1, c2, d1, d2 in chars.get_opcodes():
                if ctag != "equal":
                    edits.append((start + c1, c2 - c1, inserted[d1:d2]))
        else:
            edits.append((start, end - start, inserted))
    return sorted(edits, reverse=True)


def _starts(lines: list[str], offset: int) -> list[int]:
    starts = [offset]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def text_replace(text: Text, new: str) -> bool:
    """Make the Y text read `new` with the fewest operations text_edits finds, so that what
    others type meanwhile keeps its place. pycrdt counts UTF-8 bytes; the edits count code
    points. Whether anything changed."""
    old = str(text)
    edits = text_edits(old, new)
    at = _utf8_offsets(old, {p for start, length, _ in edits for p in (start, start + length)})
    for start, length, inserted in edits:  # from the end: earlier offsets stay valid
        if length:
            del text[at[start] : at[start + length]]
        if inserted:
            text.insert(at[start], inserted)
    return bool(edits)


def _utf8_offsets(text: str, positions: set[int]) -> dict[int, int]:
    """The UTF-8 byte offset of each code point position, in one pass over the text."""
    if text.isascii():
        return {position: position for position in positions}
    offsets, cursor, size = {}, 0, 0
    for position in sorted(positions):
        size += len(text[cursor:position].encode("utf-8"))
        offsets[position], cursor = size, position
    return offsets


def written_update(live: LiveDocument, title: str, body: str) -> bytes | None:
    """The update that makes the document read `title` and `body`, made on a copy (the held
    document takes it once it is stored and committed). None when it reads them already."""
    copy = live.copy()
    before = copy.get_state()
    with copy.transaction():
        changed = text_replace(copy.get("title", type=Text), title)
        changed = text_replace(copy.get("body", type=Text), body) or changed
    return copy.get_update(before) if changed else None
