"""Merged saves: the live document's text written on today's autosave rules, skipped when
nothing changed, reading what other processes stored, compacting the stored updates."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from pycrdt import Doc, Text

from collaboration import documents, saving
from collaboration.models import DocumentCheckpoint, DocumentUpdate
from notes import services
from notes.models import Note, NoteRevision

from .editors import stored_doc, typed


def working_body(note: Note) -> str:
    return services.working_state(Note.objects.get(pk=note.pk))["body"]


@pytest.mark.django_db
def test_a_merged_save_writes_the_typed_text_as_an_autosave_by_the_newest_author(
    author, editor_user, note
):
    """The text goes to the note as an autosave revision; the person is the author of the
    newest update, and `saved` carries the new version and revision."""
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "By Ada. "), author.pk)
    documents.update_store(note.pk, typed(doc, "By Eve."), editor_user.pk)
    saved = saving.live_save(note.pk)
    note.refresh_from_db()
    revision = note.revisions.order_by("-number").first()
    assert note.body == "By Ada. By Eve."
    assert revision.kind == NoteRevision.Kind.AUTOSAVE and revision.created_by == editor_user
    assert (saved.version, saved.revision) == (note.version, revision.number)
    assert saved.by == ["Ada Lovelace", "eve"]


@pytest.mark.django_db
def test_a_merged_save_is_skipped_when_the_text_is_the_saved_text(author, note):
    """Nothing typed since the last save: no new version, no revision."""
    stored_doc(note.pk)
    documents.document(note.pk)
    version, revisions = note.version, note.revisions.count()
    assert saving.live_save(note.pk) is None
    note.refresh_from_db()
    assert (note.version, note.revisions.count()) == (version, revisions)


@pytest.mark.django_db
def test_merged_saves_by_one_person_coalesce_into_one_revision(author, note):
    """As for HTTP autosaves: one person's merged saves within the coalescing window update
    one revision."""
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "One. "), author.pk)
    saving.live_save(note.pk)
    documents.update_store(note.pk, typed(doc, "Two."), author.pk)
    saving.live_save(note.pk)
    autosaves = note.revisions.filter(kind=NoteRevision.Kind.AUTOSAVE)
    assert list(autosaves.values_list("body", flat=True)) == ["One. Two."]


@pytest.mark.django_db
def test_a_published_note_gets_its_working_copy_written_and_readers_see_no_change(author, note):
    """Merged saves of a published note write its working copy; the live version stays."""
    services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Unpublished change."), author.pk)
    saving.live_save(note.pk)
    note.refresh_from_db()
    assert note.body == ""
    assert note.working.body == "Unpublished change."


@pytest.mark.django_db
def test_a_merged_save_reads_the_updates_another_process_stored(author, note):
    """This process's document lags (another app server stored an update it never applied):
    the merged save reads the database first, so the update is saved."""
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Here. "), author.pk)
    elsewhere = stored_doc(note.pk)
    documents.update_insert(note.pk, typed(elsewhere, "There."), author.pk)
    saving.live_save(note.pk)
    assert working_body(note) == "Here. There."


@pytest.mark.django_db
def test_the_stored_updates_are_compacted_into_their_newest_row(author, note, settings):
    """Past LIVE_COMPACT_ROWS rows, a merged save merges them into one that keeps the newest
    id: the document loaded from the database afresh reads the same."""
    settings.LIVE_COMPACT_ROWS = 5
    doc = stored_doc(note.pk)
    for word in ["alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta ", "eta"]:
        documents.update_store(note.pk, typed(doc, word), author.pk)
    newest = DocumentUpdate.objects.filter(note=note).order_by("-id").first().pk
    saving.live_save(note.pk)
    assert list(DocumentUpdate.objects.filter(note=note).values_list("pk", flat=True)) == [newest]
    fresh = Doc()
    fresh.apply_update(bytes(DocumentUpdate.objects.get(pk=newest).data))
    assert str(fresh.get("body", type=Text)) == "alpha beta gamma delta epsilon zeta eta"
    assert working_body(note) == "alpha beta gamma delta epsilon zeta eta"


@pytest.mark.django_db
def test_stored_bytes_past_the_document_size_are_compacted_without_what_was_deleted(
    author, note, settings
):
    """Fewer rows than LIVE_COMPACT_ROWS but more stored bytes than LIVE_DOCUMENT_MAX_BYTES
    (text typed and deleted): a merged save replaces them by the document's encoded state,
    which has collected the deleted text, so the stored bytes fall back to the document's."""
    from pycrdt import merge_updates

    settings.LIVE_DOCUMENT_MAX_BYTES = 5_000
    doc = stored_doc(note.pk)
    body = doc.get("body", type=Text)
    for _ in range(5):
        typing = typed(doc, "z" * 1_500, at=0)
        before = doc.get_state()
        del body[0:1_500]
        documents.update_store(note.pk, merge_updates(typing, doc.get_update(before)), author.pk)
    documents.update_store(note.pk, typed(doc, "Kept."), author.pk)
    assert documents.stored_bytes(note.pk) > 5_000
    saving.live_save(note.pk)
    assert DocumentUpdate.objects.filter(note=note).count() == 1
    assert documents.stored_bytes(note.pk) < 500
    assert str(stored_doc(note.pk).get("body", type=Text)) == "Kept."
    assert working_body(note) == "Kept."


@pytest.mark.django_db
def test_merged_saves_in_a_row_are_remembered_as_one_run(author, note):
    """The checkpoint keeps the first and last version made by merged saves alone: the range
    a live editor's Save may have been based on."""
    start = note.version
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "a"), author.pk)
    saving.live_save(note.pk)
    documents.update_store(note.pk, typed(doc, "b"), author.pk)
    saving.live_save(note.pk)
    assert saving.live_save(note.pk) is None  # nothing new: no save, no message
    checkpoint = DocumentCheckpoint.objects.get(note=note)
    note.refresh_from_db()
    assert (checkpoint.run_from_version, checkpoint.run_version) == (start, note.version)
    assert note.version == start + 2


@pytest.mark.django_db
def test_the_saved_message_says_since_when_the_other_fields_are_unchanged(author, note):
    """`fields_version`: the version of the last write that was not a merged save. A form
    loaded before it holds other fields someone has changed since."""
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "a"), author.pk)
    first = saving.live_save(note.pk)
    services.note_save(
        note_id=note.pk,
        user=author,
        base_version=first.version,
        fields={"summary": "Changed by a form."},
    )
    documents.update_store(note.pk, typed(doc, "b"), author.pk)
    second = saving.live_save(note.pk)
    assert first.fields_version == first.version - 1
    assert second.fields_version == first.version + 1 == second.version - 1
    assert second.message()["fields_version"] == second.fields_version


@pytest.mark.django_db(transaction=True)
def test_merged_saves_from_two_processes_at_once_save_once(author, note):
    """Two app servers save the same typing at once: the note's row lock serialises them and
    the second finds the text saved, so there is one new version."""
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has one writer: nothing runs at once")
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Saved once."), author.pk)
    version = Note.objects.get(pk=note.pk).version
    barrier = threading.Barrier(2)
    results = []

    def save():
        barrier.wait()
        try:
            results.append(saving.live_save(note.pk))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=save) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(result is None for result in results) == [False, True]
    assert Note.objects.get(pk=note.pk).version == version + 1
    assert working_body(note) == "Saved once."


@pytest.mark.django_db(transaction=True)
def test_updates_stored_while_merged_saves_run_do_not_deadlock(author, note):
    """Storing takes the checkpoint's lock, then (PostgreSQL, for the foreign key) a key-share
    lock on the note; a merged save holds the note, then updates the checkpoint. With the
    note locked FOR UPDATE the two deadlocked; FOR NO KEY UPDATE lets both finish."""
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has one writer: nothing runs at once")
    doc = stored_doc(note.pk)
    updates = [typed(doc, f"w{i} ") for i in range(60)]
    stored = threading.Event()
    errors = []

    def store():
        try:
            for update in updates:
                documents.update_store(note.pk, update, author.pk)
        except Exception as error:  # reported below
            errors.append(error)
        finally:
            stored.set()
            connections.close_all()

    def save():
        try:
            while not stored.is_set():
                saving.live_save(note.pk)
        except Exception as error:  # reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=store), threading.Thread(target=save)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    saving.live_save(note.pk)
    assert working_body(note) == "".join(f"w{i} " for i in range(60))
