"""The editor's HTTP writes and the live document: typed text is saved before a write, so a
stale client conflicts instead of overwriting it; a live editor's own Save does not conflict
with the flush its typing caused; a write's text goes into the live document."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.test import Client
from pycrdt import Text

from collaboration import documents, saving
from notes import services
from notes.models import Note, NoteRevision
from tests.editor.forms import editor_form

from .editors import Editor, stored_doc, typed

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def working(note: Note) -> dict:
    return services.working_state(Note.objects.get(pk=note.pk))


def test_a_stale_http_autosave_gets_a_conflict_after_the_flush(author, note):
    """Text typed live and stored, not yet saved: a client without the socket autosaves on
    the version it loaded. The flush saves the typed text first, so the autosave is refused
    as a conflict revision and the typed text stands."""
    loaded = note.version
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Typed live."), author.pk)
    response = signed_in(author).post(
        f"/write/{note.pk}/autosave/",
        data=json.dumps({"body": "Stale text.", "base_version": loaded}),
        content_type="application/json",
    )
    assert response.status_code == 409
    assert working(note)["body"] == "Typed live."
    conflict = note.revisions.get(kind=NoteRevision.Kind.CONFLICT)
    assert conflict.body == "Stale text."


def test_a_live_editors_save_on_the_version_before_the_flush_is_accepted(author, note):
    """The live editor's form carries the base_version of the last `saved` message and the
    text it typed since, which only the flush at its Save has saved: the post equals the
    merged text, so it is saved, not refused."""
    base = note.version
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Typed live."), author.pk)
    response = signed_in(author).post(
        f"/write/{note.pk}/",
        data=editor_form(note, base_version=base, body="Typed live.", summary="A summary."),
    )
    assert response.status_code == 302
    assert not note.revisions.filter(kind=NoteRevision.Kind.CONFLICT).exists()
    assert working(note)["summary"] == "A summary."


def test_a_save_on_the_version_before_the_flush_with_other_text_conflicts(author, note):
    """Only the merged text is vouched for: a post from before the flush that differs from
    it is a conflict, as before writing together."""
    base = note.version
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Typed live."), author.pk)
    response = signed_in(author).post(
        f"/write/{note.pk}/", data=editor_form(note, base_version=base, body="Something else.")
    )
    assert response.status_code == 409
    assert working(note)["body"] == "Typed live."


def test_a_save_after_an_http_write_is_not_vouched_for(author, other_author, note):
    """A run of merged saves ends at any other write: a post based before that write
    conflicts even when its body equals the current text."""
    base = note.version
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Typed live."), author.pk)
    client = signed_in(author)
    flushed = client.post(
        f"/write/{note.pk}/", data=editor_form(note, base_version=base, body="Typed live.")
    )
    assert flushed.status_code == 302
    again = client.post(
        f"/write/{note.pk}/",
        data=editor_form(note, base_version=base, body="Typed live.", summary="x"),
    )
    assert again.status_code == 409


def test_an_http_save_goes_into_the_live_document(author, note):
    """A save over HTTP that changes the body is turned into Y operations and stored: the
    document loaded from the database reads the saved text, and what another editor typed
    meanwhile (on a document from before the save) keeps its place."""
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Alpha beta gamma."), author.pk)
    saving.live_save(note.pk)
    services.note_save(
        note_id=note.pk,
        user=author,
        base_version=Note.objects.get(pk=note.pk).version,
        fields={"body": "Alpha BETA gamma.", "title": "Heat flow"},
    )
    documents.update_store(note.pk, typed(doc, " Delta."), author.pk)
    fresh = stored_doc(note.pk)
    assert str(fresh.get("body", type=Text)) == "Alpha BETA gamma. Delta."
    assert str(fresh.get("title", type=Text)) == "Heat flow"


def test_a_discard_goes_into_the_live_document(author, note):
    """Discarding a published note's changes over HTTP: the typed text is saved first (kept
    as a revision), then the live document reads the published text again."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Published."}
    )
    services.note_publish(
        note_id=note.pk, user=author, base_version=Note.objects.get(pk=note.pk).version
    )
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, " Unpublished."), author.pk)
    saving.live_save(note.pk)
    services.working_copy_discard(
        note_id=note.pk, user=author, base_version=Note.objects.get(pk=note.pk).version
    )
    assert str(stored_doc(note.pk).get("body", type=Text)) == "Published."
    assert note.revisions.filter(body="Published. Unpublished.").exists()


@pytest.mark.django_db(transaction=True)
def test_a_live_editors_form_save_after_typing_does_not_conflict(author, note, settings):
    """Over the socket: the editor takes base_version from the last `saved` message, types on,
    and presses Save before the next merged save; the flush at the Save saves its typing and
    the form, carrying the same text, is accepted. Its new text is what is saved."""

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        await editor.type("First part.")
        await editor.until(lambda: bool(editor.saved()))
        base = editor.saved()[-1]["version"]
        settings.LIVE_SAVE_IDLE_MS = settings.LIVE_SAVE_MAX_MS = 60_000
        await editor.type(" Second part.")
        await editor.until_stored()

        def press_save():
            current = Note.objects.get(pk=note.pk)
            data = editor_form(current, base_version=base, body=str(editor.body), summary="Done.")
            return signed_in(author).post(f"/write/{note.pk}/", data=data)

        response = await sync_to_async(press_save)()
        await editor.close()
        return response.status_code

    assert async_to_sync(scenario)() == 302
    assert working(note)["body"] == "First part. Second part."
    assert working(note)["summary"] == "Done."
    assert not note.revisions.filter(kind=NoteRevision.Kind.CONFLICT).exists()


def test_publishing_on_the_version_before_the_flush_publishes_the_typed_text(author, note):
    """A live editor types and presses Publish before the merged save: the form's version is
    the one before the flush its typing causes. Only typing changed the note since, so it is
    no conflict, and what goes live includes the typing."""
    base = note.version
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Typed, then published."), author.pk)
    result = services.note_publish(note_id=note.pk, user=author, base_version=base)
    assert not result.conflict
    published = Note.objects.get(pk=note.pk)
    assert published.status == "published"
    assert published.body == "Typed, then published."


def test_unpublishing_and_discarding_on_the_version_before_the_flush_are_accepted(author, note):
    """Unpublish and Discard post no text either: a version inside the run of merged saves is
    current for them too, and the typed text is kept (a revision, and the draft's body)."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Published."}
    )
    services.note_publish(
        note_id=note.pk, user=author, base_version=Note.objects.get(pk=note.pk).version
    )
    base = Note.objects.get(pk=note.pk).version
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, " Changed."), author.pk)
    discarded = services.working_copy_discard(note_id=note.pk, user=author, base_version=base)
    assert not discarded.conflict
    assert note.revisions.filter(body="Published. Changed.").exists()
    assert working(note)["body"] == "Published."

    base = Note.objects.get(pk=note.pk).version
    documents.update_store(note.pk, typed(stored_doc(note.pk), " Again."), author.pk)
    unpublished = services.note_unpublish(note_id=note.pk, user=author, base_version=base)
    assert not unpublished.conflict
    draft = Note.objects.get(pk=note.pk)
    assert (draft.status, draft.body) == ("draft", "Published. Again.")


def test_publishing_on_a_version_before_another_write_still_conflicts(author, note):
    """The run of merged saves ends at any other write (here a form's new summary): a Publish
    posted on a version before it is refused, as before writing together."""
    base = note.version
    services.note_save(
        note_id=note.pk, user=author, base_version=base, fields={"summary": "Changed."}
    )
    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Typed."), author.pk)
    result = services.note_publish(note_id=note.pk, user=author, base_version=base)
    assert result.conflict
    assert Note.objects.get(pk=note.pk).status == "draft"


def test_an_http_write_stands_when_the_channel_layer_cannot_be_reached(
    author, note, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    """Redis down while a co-author saves over HTTP: telling connected editors fails after the
    commit, which must not turn the saved write into an error. The write and its update are
    stored, and the failure is logged."""
    from collaboration import groups

    async def unreachable(group, message):
        raise ConnectionError("Redis is down")

    doc = stored_doc(note.pk)
    documents.update_store(note.pk, typed(doc, "Typed live."), author.pk)
    saving.live_save(note.pk)
    monkeypatch.setattr(groups, "send", unreachable)
    base = Note.objects.get(pk=note.pk).version
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = signed_in(author).post(
            f"/write/{note.pk}/autosave/",
            data=json.dumps({"body": "Saved over HTTP.", "base_version": base}),
            content_type="application/json",
        )
    assert callbacks  # the editors were to be told after the commit
    assert response.status_code == 200
    assert str(stored_doc(note.pk).get("body", type=Text)) == "Saved over HTTP."
    assert "not told" in caplog.text
