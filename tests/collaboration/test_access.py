"""Who may join a note's live document: the editor's rule, as a matrix of roles; checked
again when the note's authors or the person's account change, and periodically; the
handshake's origin check."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.models import Group

from collaboration import access, groups
from notes import services
from notes.models import Author, Note, NoteAuthor
from notes.services import author_for_user, note_delete

from .editors import Editor

pytestmark = pytest.mark.django_db(transaction=True)

ROLES = ("anonymous", "own", "other", "editor", "admin")
# role → (accepted, close code and error code when refused)
EXPECTED = {
    "anonymous": (False, 4401, "signed-out"),
    "own": (True, None, None),
    "other": (False, 4403, "forbidden"),
    "editor": (True, None, None),
    "admin": (True, None, None),
}


@pytest.fixture
def role_user(request, author, other_author, editor_user, admin_user):
    return {
        "anonymous": None,
        "own": author,
        "other": other_author,
        "editor": editor_user,
        "admin": admin_user,
    }[request.param]


@pytest.mark.parametrize("role_user", ROLES, indirect=True, ids=ROLES)
def test_who_may_join_is_who_may_edit(role_user, request, note):
    """Anonymous: 4401; an author of another note: 4403; the note's author, Editors and
    Admins join and sync. A refusal says why (type 100 error) before closing."""
    role = request.node.callspec.id
    accepted, code, error = EXPECTED[role]

    async def scenario():
        editor = await Editor.signed_in(note.pk, role_user)
        synced = await editor.open()
        await editor.close()
        return synced, editor

    synced, editor = async_to_sync(scenario)()
    assert synced is accepted
    if not accepted:
        assert editor.closed == code
        assert [e["code"] for e in editor.errors()] == [error]


def test_a_removed_coauthor_is_disconnected(author, other_author, note):
    """Taking a co-author off the note (NoteAuthor deleted) makes their consumer check again
    and close with 4403; the note's own author stays."""
    link = NoteAuthor.objects.create(note=note, author=author_for_user(other_author), position=1)

    async def scenario():
        bert = await Editor.signed_in(note.pk, other_author)
        ada = await Editor.signed_in(note.pk, author)
        assert await bert.open() and await ada.open()
        await sync_to_async(link.delete)()
        await bert.until(lambda: bert.closed is not None)
        await ada.drain(0.2)
        assert ada.closed is None
        await ada.close()
        return bert

    bert = async_to_sync(scenario)()
    assert bert.closed == 4403
    assert bert.errors()[0]["code"] == "forbidden"


def test_a_coauthor_taken_off_a_published_notes_working_copy_is_disconnected(
    author, other_author, note
):
    """Taking a co-author off a published note's authors (a save, written to its working copy,
    the live version still naming them) closes their socket at once with 4403: they may no
    longer edit, before the change is published; the author who saved stays."""
    note = services.note_publish(note_id=note.pk, user=author, base_version=note.version).note
    NoteAuthor.objects.create(note=note, author=author_for_user(other_author), position=1)
    note.refresh_from_db()

    def take_bert_off():
        services.note_save(
            note_id=note.pk, user=author, base_version=note.version, fields={"authors": ["ada"]}
        )

    async def scenario():
        bert = await Editor.signed_in(note.pk, other_author)
        ada = await Editor.signed_in(note.pk, author)
        assert await bert.open() and await ada.open()
        await sync_to_async(take_bert_off)()
        await bert.until(lambda: bert.closed is not None)
        await ada.drain(0.2)
        assert ada.closed is None
        await ada.close()
        return bert

    bert = async_to_sync(scenario)()
    assert bert.closed == 4403
    assert bert.errors()[0]["code"] == "forbidden"
    assert NoteAuthor.objects.filter(note=note, author__user=other_author).exists()  # still live
    assert not access.may_edit(other_author.pk, note.pk)


def test_only_a_working_copy_save_that_changes_the_authors_asks_for_a_check(author, note):
    """Autosaves write a published note's working copy often: its editors are asked to check
    again when the copy is made or its authors change, not at a save of its text."""
    note = services.note_publish(note_id=note.pk, user=author, base_version=note.version).note
    layer = get_channel_layer()

    async def listening() -> str:
        channel = await layer.new_channel()
        await layer.group_add(groups.note_group(note.pk), channel)
        return channel

    async def asked(channel: str) -> list[str]:
        messages = []
        while True:
            try:
                message = await asyncio.wait_for(layer.receive(channel), 0.2)
            except TimeoutError:
                return messages
            messages.append(message["type"])

    def save(**fields) -> None:
        version = Note.objects.get(pk=note.pk).version
        services.note_save(note_id=note.pk, user=author, base_version=version, fields=fields)

    async def scenario():
        channel = await listening()
        seen = []
        for fields in ({"body": "One."}, {"body": "Two."}, {"tags": ["heat"]}):
            await sync_to_async(save)(**fields)
            seen.append(await asked(channel))
        await sync_to_async(save)(authors=["ada", "bert"])
        return seen, await asked(channel)

    text_saves, authors_save = async_to_sync(scenario)()
    assert text_saves == [["live.recheck"], [], []]
    assert "live.recheck" in authors_save


def test_a_note_moved_to_the_trash_disconnects_its_editors(author, note):
    """Deleting a note (note_delete) closes its live editors' sockets with 4403, after the
    text they typed is saved into the trashed note."""

    async def scenario():
        ada = await Editor.signed_in(note.pk, author)
        assert await ada.open()
        await ada.type("Typed together.")
        await ada.until_stored()
        await sync_to_async(note_delete)(note_id=note.pk, user=author)
        await ada.until(lambda: ada.closed is not None)
        return ada.closed

    assert async_to_sync(scenario)() == 4403
    trashed = Note.objects.get(pk=note.pk)
    assert trashed.deleted_at is not None and "Typed together." in trashed.body


def test_a_deactivated_account_is_disconnected(editor_user, note):
    """Deactivating a connected Editor closes their socket with 4403."""

    async def scenario():
        eve = await Editor.signed_in(note.pk, editor_user)
        assert await eve.open()
        editor_user.is_active = False
        await sync_to_async(editor_user.save)()
        await eve.until(lambda: eve.closed is not None)
        return eve.closed

    assert async_to_sync(scenario)() == 4403


def test_a_lost_role_disconnects(editor_user, note):
    """An Editor taken out of the Editor group may no longer edit others' notes: 4403."""

    async def scenario():
        eve = await Editor.signed_in(note.pk, editor_user)
        assert await eve.open()
        group = await sync_to_async(Group.objects.get)(name="Editor")
        await sync_to_async(editor_user.groups.remove)(group)
        await eve.until(lambda: eve.closed is not None)
        return eve.closed

    assert async_to_sync(scenario)() == 4403


def test_access_is_checked_again_periodically(author, other_author, note, settings):
    """A change that sends no signal (a queryset update) is caught by the periodic check."""
    settings.LIVE_RECHECK_SECONDS = 1
    stranger = Author.objects.create(name="Someone", handle="someone")
    NoteAuthor.objects.create(note=note, author=author_for_user(other_author), position=1)

    async def scenario():
        bert = await Editor.signed_in(note.pk, other_author)
        assert await bert.open()
        await sync_to_async(NoteAuthor.objects.filter(note=note, author__user=other_author).update)(
            author=stranger
        )
        await bert.until(lambda: bert.closed is not None, timeout=4)
        return bert.closed

    assert async_to_sync(scenario)() == 4403


@pytest.mark.parametrize(
    ("origin", "accepted"),
    [
        ("http://testserver", True),
        ("http://testserver:8080", False),  # another port of the host
        ("https://testserver", False),  # another scheme
        ("http://localhost", False),  # another host ALLOWED_HOSTS accepts
        ("https://notes.example.org", True),  # CSRF_TRUSTED_ORIGINS
        ("http://notes.example.org", False),  # trusted with https only
        ("https://evil.example", False),
        ("null", False),
        ("", False),  # no Origin at all
    ],
)
def test_the_handshake_accepts_the_sites_own_origins_only(author, note, settings, origin, accepted):
    """The request's own origin (scheme, host and port) or one of CSRF_TRUSTED_ORIGINS opens a
    socket; others are refused at the handshake, before the session is read."""
    settings.ALLOWED_HOSTS = ["testserver", "localhost"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://notes.example.org"]

    async def scenario():
        editor = await Editor.signed_in(note.pk, author, origin=origin)
        synced = await editor.open()
        await editor.close()
        return synced

    assert async_to_sync(scenario)() is accepted


def test_a_deleted_note_disconnects_its_editors(admin_user, note):
    """The note is deleted while open: its editors are told (4403) instead of typing into a
    document nobody will save."""

    async def scenario():
        editor = await Editor.signed_in(note.pk, admin_user)
        assert await editor.open()
        await sync_to_async(note.delete)()
        await editor.until(lambda: editor.closed is not None)
        return editor.closed

    assert async_to_sync(scenario)() == 4403
