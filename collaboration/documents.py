"""A note's live document: a Y document with two texts, "title" and "body", made of the note's
stored updates (DocumentUpdate). The database is the truth; each process holds the documents
its connected editors use (the registry) and catches up with the updates it has not applied.

Every operation on a held document runs under its lock: consumers touch it from the event
loop (updates broadcast by other processes) and from Django's sync thread (storing, saving).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from difflib import SequenceMatcher

from django.conf import settings
from django.db import transaction
from pycrdt import Doc, Text

from notes.models import Note, body_size_error
from notes.services import working_state
from scidraft.bounds import input_path

from .models import DocumentCheckpoint, DocumentUpdate
from .protocol import Malformed

TITLE_MAX_CHARS = Note._meta.get_field("title").max_length


class TooLarge(Exception):
    """What the client asked for would not fit the limits; the message is for people."""


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

    def texts(self) -> tuple[str, str]:
        with self.lock:
            return str(self.title), str(self.body)

    def apply_stored(self, update_id: int, data: bytes) -> None:
        """Apply a stored update once (a second time would be harmless, only slower)."""
        with self.lock:
            if update_id <= self.read_up_to or update_id in self.applied:
                return
            self.doc.apply_update(bytes(data))
            self.applied.add(update_id)

    def catch_up(self) -> None:
        """Apply the stored updates this process has not seen (by id: the checkpoint's lock
        makes ids commit in order, so none appears later below one already read). The query
        runs outside the lock: the event loop applies broadcast updates under it."""
        rows = DocumentUpdate.objects.filter(note_id=self.note_id, id__gt=self.read_up_to)
        stored = list(rows.order_by("id").values_list("id", "data"))
        with self.lock:
            for update_id, data in stored:
                if update_id > self.read_up_to and update_id not in self.applied:
                    self.doc.apply_update(bytes(data))
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
    """TooLarge when the document could not be sent or saved: its stored state is over
    LIVE_DOCUMENT_MAX_BYTES, or its text over the note's limits."""
    size = live.encoded_size()
    if size > settings.LIVE_DOCUMENT_MAX_BYTES:
        raise TooLarge(
            f"This note's live document is {size:,} bytes, more than the "
            f"{settings.LIVE_DOCUMENT_MAX_BYTES:,} that can be synchronised: edit it without "
            "writing together (it is saved as you type)."
        )
    if message := size_error(*live.texts()):
        raise TooLarge(message)


# --- The registry: the documents of this process's connected editors ------------------------

_held: dict[int, LiveDocument] = {}
_held_lock = threading.Lock()


def held(note_id: int) -> LiveDocument | None:
    return _held.get(note_id)


def document(note_id: int) -> LiveDocument:
    """The note's document in this process, loaded (and seeded) on first use, caught up."""
    live = _held.get(note_id)
    if live is None:
        loaded = loaded_document(note_id)
        with _held_lock:
            live = _held.setdefault(note_id, loaded)
    live.catch_up()
    return live


def caught_up(note_id: int) -> LiveDocument:
    """The held document caught up, or one loaded for this call only (an HTTP write in a
    process where nobody edits the note live: gunicorn's)."""
    live = _held.get(note_id)
    if live is None:
        return loaded_document(note_id)
    live.catch_up()
    return live


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
    if not DocumentUpdate.objects.filter(note_id=note_id).exists():
        seed(note_id)
    live = LiveDocument(note_id)
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


def update_insert(note_id: int, data: bytes, author_id: int | None) -> DocumentUpdate:
    """Insert an update under the checkpoint's row lock (see DocumentCheckpoint; the seed
    made the row). The insert also takes PostgreSQL's key-share lock on the note, which the
    note's writers (FOR NO KEY UPDATE: editable_note, merged saves) do not block: a merged
    save holding the note and waiting for the checkpoint would otherwise deadlock with it."""
    with transaction.atomic():
        DocumentCheckpoint.objects.select_for_update().get(note_id=note_id)
        return DocumentUpdate.objects.create(note_id=note_id, data=data, author_id=author_id)


@input_path("live-update")
def update_store(note_id: int, data: bytes, author_id: int | None) -> Stored:
    """Apply a client's update to the held document and store it, committed before this
    returns. An update that takes the texts over the note's limits is refused (TooLarge) and
    not stored; the held document, which has applied it, is dropped and loads again, as after
    a failed insert. Bytes that are no update: Malformed."""
    # The held document as it is: the group brings it the others' updates, and a query per
    # keystroke to catch up would only slow acknowledgements down.
    live = held(note_id) or document(note_id)
    with live.lock:
        try:
            live.doc.apply_update(data)
        except ValueError as error:  # pycrdt could not decode it: nothing was applied
            raise Malformed("The update is not a Yjs update.") from error
        message = size_error(*live.texts())
        state_vector = live.doc.get_state()
    if message:
        drop(note_id)
        raise TooLarge(message)
    try:
        row = update_insert(note_id, data, author_id)
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
