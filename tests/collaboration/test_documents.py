"""The live document: an HTTP write's text as Y operations (UTF-8 offsets, few operations),
catching up with what other processes stored, the registry."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycrdt import Doc, Text

from collaboration import documents
from collaboration.models import DocumentUpdate

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
