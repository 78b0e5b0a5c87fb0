"""A live document that cannot be opened: too many stored bytes (refused before any row is
read), an update that cannot be read (refused with a message, not a crash); the HTTP editor
saves meanwhile; an Editor (or Admin), and nobody else, resets it from the working copy, and
the editors connected to the old document are told."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from pycrdt import Text

from collaboration import documents, recovery
from collaboration.models import DocumentCheckpoint, DocumentUpdate
from notes import services
from notes.models import Note

from .editors import Editor, stored_doc, typed

live = pytest.mark.django_db(transaction=True)


def oversized(note, settings) -> None:
    """The note's stored updates pass STORED_FACTOR × LIVE_DOCUMENT_MAX_BYTES, each a valid
    update (as stored before updates were read)."""
    settings.LIVE_DOCUMENT_MAX_BYTES = 1_000
    doc = stored_doc(note.pk)
    junk = doc.get("junk", type=Text)
    for _ in range(5):
        before = doc.get_state()
        junk.insert(0, "j" * 500)
        DocumentUpdate.objects.create(note=note, data=doc.get_update(before))


def corrupt(note) -> None:
    documents.seed(note.pk)
    DocumentUpdate.objects.create(note=note, data=b"\x05\xff\xff garbage")


@pytest.mark.django_db
def test_a_document_over_the_stored_bound_is_refused_before_a_row_is_read(note, settings):
    """The stored bytes are summed by the database; no query reads an update's data."""
    oversized(note, settings)
    with CaptureQueriesContext(connection) as queries, pytest.raises(documents.TooLarge) as error:
        documents.document(note.pk)
    assert "2,000 that can be loaded" in str(error.value) and "Editor can reset" in str(error.value)
    reads = [q["sql"] for q in queries if '"data"' in q["sql"] and "LENGTH" not in q["sql"]]
    assert reads == []
    assert documents.held(note.pk) is None


@live
@pytest.mark.parametrize("make", ["oversized", "corrupt"])
def test_a_document_that_cannot_be_loaded_is_refused_at_connect(author, note, settings, make):
    """4413 with a message naming the way out (an Editor's reset), before any sync."""
    oversized(note, settings) if make == "oversized" else corrupt(note)

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert not await editor.open()
        return editor

    editor = async_to_sync(scenario)()
    assert editor.closed == 4413 and not editor.synced
    error = editor.errors()[0]
    assert error["code"] == ("too-large" if make == "oversized" else "corrupt")
    assert "Editor can reset" in error["message"]


@pytest.mark.django_db
def test_a_stored_document_with_another_root_is_refused_at_connect(note, settings):
    """Content beside the texts stored before updates were read: refused, with the reset."""
    oversized(note, settings)
    settings.LIVE_DOCUMENT_MAX_BYTES = 100_000  # loaded whole: what it holds is the refusal
    with pytest.raises(documents.Corrupt, match="'junk' beside its title and body"):
        documents.limits_check(documents.document(note.pk))


@pytest.mark.django_db
@pytest.mark.parametrize("make", ["oversized", "corrupt"])
def test_the_http_editor_saves_a_note_whose_live_document_cannot_be_loaded(
    author, note, settings, make
):
    """Saving over HTTP neither loads the document nor fails: the merged save is skipped and
    the write is not put into the document."""
    oversized(note, settings) if make == "oversized" else corrupt(note)
    rows = DocumentUpdate.objects.filter(note=note).count()
    note.refresh_from_db()
    result = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Saved."}
    )
    assert services.working_state(result.note)["body"] == "Saved."
    assert DocumentUpdate.objects.filter(note=note).count() == rows


def _roles(author, other_author, editor_user, admin_user):
    return {
        "anonymous": AnonymousUser(),
        "own": author,
        "other": other_author,
        "editor": editor_user,
        "admin": admin_user,
    }


@pytest.mark.django_db
def test_only_editors_and_admins_reset_a_live_document(
    author, other_author, editor_user, admin_user, note, settings
):
    """The service's matrix: anonymous, an Author not on the note and the note's own author
    are refused (nothing deleted); an Editor and an Admin reset it to the working copy."""
    corrupt(note)
    users = _roles(author, other_author, editor_user, admin_user)
    for role in ("anonymous", "own", "other"):
        with pytest.raises(PermissionDenied):
            recovery.live_document_reset(note_id=note.pk, user=users[role])
        assert DocumentUpdate.objects.filter(note=note).count() == 2
    for role in ("editor", "admin"):
        generation = DocumentCheckpoint.objects.get(note=note).generation
        recovery.live_document_reset(note_id=note.pk, user=users[role])
        assert DocumentUpdate.objects.filter(note=note).count() == 1
        assert DocumentCheckpoint.objects.get(note=note).generation == generation + 1
        live_doc = documents.document(note.pk)
        documents.limits_check(live_doc)
        assert live_doc.texts() == ("Heat equation", "")
        corrupt(note)


@pytest.mark.django_db
def test_the_revisions_page_offers_the_reset_to_editors_only(author, editor_user, note, settings):
    """An Editor sees why the document is refused and the reset form; posting it resets and
    says so. The note's author sees neither."""
    oversized(note, settings)
    url = reverse("editor:revisions", kwargs={"note_id": note.pk})
    own = Client()
    own.force_login(author)
    assert "Reset the live document</button>" not in own.get(url).content.decode()
    client = Client()
    client.force_login(editor_user)
    page = client.get(url).content.decode()
    assert "Writing together is refused for this note" in page
    assert "Reset the live document</button>" in page
    answer = client.post(reverse("editor:live_reset", kwargs={"note_id": note.pk}), follow=True)
    assert "The live document was started again" in answer.content.decode()
    assert documents.stored_bytes(note.pk) < 1_000
    assert "Reset the live document</button>" not in client.get(url).content.decode()


@live
def test_editors_of_the_old_document_are_closed_and_nothing_of_it_is_stored_after(
    author, editor_user, note
):
    """A reset while an editor is connected: the editor is closed with 4413 ("reset"), its
    held document let go; an update made on the old document is refused; a newcomer gets
    the working copy."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Saved."}
    )

    async def scenario():
        from asgiref.sync import sync_to_async

        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        await editor.type(" Typed live.")
        await editor.until_stored()
        old = documents.held(note.pk)
        await sync_to_async(recovery.live_document_reset)(note_id=note.pk, user=editor_user)
        await editor.until(lambda: editor.closed is not None)
        with pytest.raises(documents.Reset):
            await sync_to_async(documents.update_insert)(
                note.pk, typed(editor.doc, "late"), author.pk, old.generation
            )
        newcomer = await Editor.signed_in(note.pk, author)
        assert await newcomer.open()
        await newcomer.close()
        return editor, newcomer

    editor, newcomer = async_to_sync(scenario)()
    assert editor.closed == 4413 and editor.errors()[-1]["code"] == "reset"
    body = services.working_state(Note.objects.get(pk=note.pk))["body"]
    assert str(newcomer.body) == body
    assert body.count("Saved.") == 1
