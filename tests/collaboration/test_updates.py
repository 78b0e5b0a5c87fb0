"""What a client's update may hold: plain text in "title" and "body", nothing it depends on
missing, a document that stays within LIVE_DOCUMENT_MAX_BYTES once it is applied. Anything
else is refused through the consumer (4413, a message saying why), never stored and never
sent to the co-authors."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from pycrdt import Array, Doc, Map, Text, create_update_message, merge_updates

from collaboration import documents, updates
from collaboration.models import DocumentUpdate
from collaboration.protocol import SYNC
from notes import services

from .editors import Editor, stored_doc, typed

live = pytest.mark.django_db(transaction=True)


def client_doc(seed: bytes) -> Doc:
    doc = Doc()
    doc.apply_update(seed)
    return doc


def change(doc: Doc, edit) -> bytes:
    before = doc.get_state()
    edit(doc)
    return doc.get_update(before)


def seeded() -> Doc:
    doc = Doc()
    doc.get("title", type=Text).insert(0, "Title")
    doc.get("body", type=Text).insert(0, "Body é😀 text")
    return doc


# What an attacker writes where str(Text) of "title" and "body" never shows it.
ATTACKS = {
    "foreign-text": lambda doc: doc.get("junk", type=Text).insert(0, "x" * 500),
    "foreign-map": lambda doc: doc.get("junk", type=Map).__setitem__("k", "x" * 500),
    "foreign-array": lambda doc: doc.get("junk", type=Array).append("x" * 500),
    "embed-in-body": lambda doc: doc.get("body", type=Text).insert_embed(0, {"x": "y" * 500}),
    "formatted-body": lambda doc: doc.get("body", type=Text).insert(0, "a", {"bold": "y" * 500}),
    "formatted-title": lambda doc: doc.get("title", type=Text).format(0, 2, {"em": True}),
}


def test_plain_typing_and_deleting_are_read_with_their_clocks():
    """Insertions (clocks in UTF-16 units, as Yjs counts them) and deletions are admitted."""
    server = seeded()
    doc = client_doc(server.get_update())
    typing = change(doc, lambda d: d.get("body", type=Text).insert(0, "😀a"))
    shape = updates.read(typing)
    assert list(shape.blocks.values()) == [(0, 3)]
    erasing = change(doc, lambda d: d.get("body", type=Text).__delitem__(slice(0, 4)))
    assert updates.read(erasing).deletes
    assert updates.dependency_missing(shape, updates.state_vector(server.get_state())) is None


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_what_the_texts_do_not_show_is_not_text(attack):
    """Another root (Text, Map, Array), an embed, a formatting attribute: NotText."""
    doc = client_doc(seeded().get_update())
    with pytest.raises(updates.NotText):
        updates.read(change(doc, attack))


def test_an_update_that_depends_on_what_the_server_lacks_is_named():
    """A gap in a client's clocks, or a neighbour the server never received: pycrdt would
    keep such an update pending, unseen and growing."""
    server = seeded()
    client = client_doc(server.get_update())
    first = change(client, lambda d: d.get("body", type=Text).insert(0, "one "))
    second = change(client, lambda d: d.get("body", type=Text).insert(0, "two "))
    state = updates.state_vector(server.get_state())
    assert "never received" in updates.dependency_missing(updates.read(second), state)
    other = client_doc(server.get_update())
    other.apply_update(first)
    after = change(other, lambda d: d.get("body", type=Text).insert(2, "x"))
    assert "does not have" in updates.dependency_missing(updates.read(after), state)


@pytest.mark.parametrize(
    "data", [b"\x01\x01\x05\x00\x0b", b"\x00\x01\x05", b"\x00\x00\x00"], ids=str
)
def test_bytes_that_are_no_update_are_malformed(data):
    """An unknown content kind, a delete set cut short, bytes after the delete set."""
    from collaboration.protocol import Malformed

    with pytest.raises(Malformed):
        updates.read(data)


async def _attacked(note, attacker_user, watcher_user, make_update):
    attacker = await Editor.signed_in(note.pk, attacker_user)
    watcher = await Editor.signed_in(note.pk, watcher_user)
    assert await attacker.open() and await watcher.open()
    await watcher.drain(0.2)
    frames_before = len(watcher.frames)
    await attacker.send(create_update_message(make_update(attacker.doc)))
    await attacker.until(lambda: attacker.closed is not None)
    await watcher.drain(0.3)
    received = [f for f in watcher.frames[frames_before:] if f[0] == SYNC]
    await watcher.close()
    return attacker, watcher, received


@live
@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_an_update_beside_the_texts_is_refused_unstored_and_unsent(author, note, attack):
    """Through the consumer: 4413 with error "not-text" saying what was refused, the stored
    rows unchanged, the co-author sent nothing, and a newcomer's document without it."""
    documents.seed(note.pk)
    rows = DocumentUpdate.objects.filter(note=note).count()

    attacker, watcher, received = async_to_sync(_attacked)(
        note, author, author, lambda doc: change(doc, attack)
    )
    assert attacker.closed == 4413
    error = attacker.errors()[0]
    assert error["code"] == "not-text" and "was not kept" in error["message"]
    assert DocumentUpdate.objects.filter(note=note).count() == rows
    assert received == []
    assert set(stored_doc(note.pk).keys()) <= {"body", "title"}


@live
def test_an_update_past_the_document_size_is_refused(author, note, settings):
    """An update within the message and text limits whose document, encoded once it is
    applied, passes LIVE_DOCUMENT_MAX_BYTES: refused ("too-large", the limit named), not
    stored, not sent."""
    settings.LIVE_DOCUMENT_MAX_BYTES = 2_000
    documents.seed(note.pk)

    def bloat(doc):
        return change(doc, lambda d: d.get("body", type=Text).insert(0, "y" * 2_500))

    attacker, _, received = async_to_sync(_attacked)(note, author, author, bloat)
    assert attacker.closed == 4413
    error = attacker.errors()[0]
    assert error["code"] == "too-large" and "2,000" in error["message"]
    assert DocumentUpdate.objects.filter(note=note).count() == 1
    assert received == []


@live
def test_typing_that_deletes_what_it_typed_stops_at_the_stored_bound(author, note, settings):
    """Each update inserts and deletes 1,500 characters: the document stays small, but the
    stored rows grow; past STORED_FACTOR × LIVE_DOCUMENT_MAX_BYTES the next is refused and
    the stored bytes stay within the bound."""
    settings.LIVE_DOCUMENT_MAX_BYTES = 4_000
    documents.seed(note.pk)

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        text = editor.doc.get("body", type=Text)
        for _ in range(20):
            # Typed, then deleted, sent as one update (merged, as a client's step 2 can be):
            # the document collects the text, the stored row keeps it.
            typing = change(editor.doc, lambda d: text.insert(0, "z" * 1_500))
            erasing = change(editor.doc, lambda d: text.__delitem__(slice(0, 1_500)))
            await editor.send(create_update_message(merge_updates(typing, erasing)))
            await editor.drain(0.05)
            if editor.closed is not None:
                break
        await editor.until(lambda: editor.closed is not None)
        return editor

    editor = async_to_sync(scenario)()
    assert editor.closed == 4413 and "not merged yet" in editor.errors()[0]["message"]
    assert documents.stored_bytes(note.pk) <= documents.stored_max()


@live
def test_the_texts_and_the_co_authors_go_on_after_a_refusal(author, other_author, note):
    """The refused editor's co-author keeps typing on the same document; nothing was dropped
    or doubled."""
    services.note_save(
        note_id=note.pk,
        user=author,
        base_version=note.version,
        fields={"authors": ["ada", services.author_for_user(other_author).handle]},
    )

    async def scenario():
        attacker, watcher, _ = await _attacked(
            note, other_author, author, lambda doc: change(doc, ATTACKS["embed-in-body"])
        )
        again = await Editor.signed_in(note.pk, author)
        assert await again.open()
        await again.type("Still writing.")
        await again.until_stored()
        await again.close()
        return str(again.body)

    assert async_to_sync(scenario)() == "Still writing."
    doc = stored_doc(note.pk)
    assert str(doc.get("body", type=Text)) == "Still writing."


@live
def test_typed_updates_still_pass(author, note):
    """An ordinary client's updates (UTF-8 offsets, multi-byte characters) are admitted."""
    documents.seed(note.pk)
    doc = stored_doc(note.pk)
    for text in ("é😀 ", "∂u/∂t ", "end"):
        documents.update_store(note.pk, typed(doc, text), author.pk)
    assert str(stored_doc(note.pk).get("body", type=Text)) == "é😀 ∂u/∂t end"
