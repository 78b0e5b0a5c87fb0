"""The live document: an HTTP write's text as Y operations (UTF-8 offsets, few operations),
catching up with what other processes stored, the registry."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from hypothesis import given, settings
from hypothesis import strategies as st
from pycrdt import Doc, Text

from collaboration import documents
from collaboration.models import DocumentUpdate
from notes import services

from .editors import stored_doc, typed


def replaced(old: str, new: str) -> str:
    doc = Doc()
    text = doc.get("body", type=Text)
    text.insert(0, old)
    with doc.transaction():
        documents.text_replace(text, new)
    return str(text)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("", "Hello"),
        ("Hello", ""),
        ("Heat equation", "Heat flow equation"),
        ("café ∂u/∂t = Δu 😀 end", "café ∂u/∂t = αΔu 😀😀 end"),
        ("line 1\nline 2\nline 3\n", "line 1\nline two\nline 3\nline 4\n"),
        ("$$\\int_0^1 x\\,dx$$\n" * 50, "$$\\int_0^2 x\\,dx$$\n" * 50),
    ],
)
def test_a_text_is_turned_into_another_by_y_operations(old, new):
    """Any text becomes any other, multi-byte characters included (pycrdt counts bytes)."""
    assert replaced(old, new) == new


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\néλ😀 ", max_size=40), st.text(alphabet="ab\néλ😀 ", max_size=40))
def test_any_text_is_turned_into_any_other(old, new):
    """Property: text_replace(old → new) reads `new`, whatever the characters and lines."""
    assert replaced(old, new) == new


def test_the_edits_touch_only_what_changed():
    """One changed word in a long text is one small edit, not a rewrite: what others type
    elsewhere meanwhile keeps its place."""
    old = "Intro.\n" + "Same line.\n" * 1000 + "The end.\n"
    new = old.replace("The end.", "The real end.")
    assert documents.text_edits(old, new) == [(len(old) - 5, 0, "real ")]


def test_concurrent_typing_survives_an_http_write():
    """A client types at the start while the server turns the end into other text: both
    changes are in the merged document."""
    server = Doc()
    server.get("body", type=Text).insert(0, "alpha beta")
    client = Doc()
    client.apply_update(server.get_update())
    client_update = typed(client, ">> ", at=0)
    before = server.get_state()
    documents.text_replace(server.get("body", type=Text), "alpha gamma")
    server_update = server.get_update(before)
    server.apply_update(client_update)
    client.apply_update(server_update)
    assert str(server.get("body", type=Text)) == str(client.get("body", type=Text))
    assert str(server.get("body", type=Text)) == ">> alpha gamma"


@pytest.mark.django_db
def test_a_held_document_catches_up_with_updates_stored_elsewhere(author, note):
    """Another process stored an update: the held document reads it by id, once."""
    held = documents.document(note.pk)
    elsewhere = stored_doc(note.pk)
    row = documents.update_insert(note.pk, typed(elsewhere, "From elsewhere."), author.pk)
    assert documents.document(note.pk) is held
    assert held.texts()[1] == "From elsewhere."
    assert held.read_up_to == row.pk
    held.apply_stored(row.pk, bytes(row.data))  # again, from the group: nothing doubles
    assert held.texts()[1] == "From elsewhere."


@pytest.mark.django_db
def test_a_refused_update_leaves_nothing_behind(author, note, settings):
    """An update over the body limit is not stored, and the held document that applied it is
    dropped: the next load reads only what is stored."""
    settings.NOTE_BODY_MAX_BYTES = 10
    doc = stored_doc(note.pk)
    with pytest.raises(documents.TooLarge):
        documents.update_store(note.pk, typed(doc, "x" * 50), author.pk)
    assert DocumentUpdate.objects.filter(note=note).count() == 1
    assert documents.document(note.pk).texts()[1] == ""


def _in_threads(count: int, work) -> list:
    """Run `work` in `count` threads at once, each on its own database connection."""
    barrier = threading.Barrier(count)
    results, errors = [], []

    def run():
        try:
            barrier.wait()
            results.append(work())
        except Exception as error:  # reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


@pytest.mark.django_db(transaction=True)
def test_processes_seeding_at_once_store_the_text_once(author, note):
    """Four loads of a never-opened note at once (four app servers): the note's row lock and
    the re-check make exactly one seed; every loaded document reads the text once."""
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has one writer: nothing runs at once")
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Once."}
    )
    texts = _in_threads(4, lambda: documents.loaded_document(note.pk).texts())
    assert texts == [("Heat equation", "Once.")] * 4
    assert DocumentUpdate.objects.filter(note=note).count() == 1


@pytest.mark.django_db
def test_an_http_write_to_a_note_never_opened_live_makes_no_document(author, note):
    """Only opening a note live seeds its document; the editor's writes do not."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Plain."}
    )
    assert not DocumentUpdate.objects.filter(note=note).exists()
