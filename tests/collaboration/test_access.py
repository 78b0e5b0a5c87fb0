"""Who may join a note's live document: the editor's rule, as a matrix of roles; checked
again when the note's authors or the person's account change, and periodically; the
handshake's origin check."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth.models import Group

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
        ("http://localhost:8000", True),
        ("https://notes.example.org", True),  # CSRF_TRUSTED_ORIGINS
        ("http://notes.example.org", False),  # trusted with https only
        ("https://evil.example", False),
        ("", False),  # no Origin at all
    ],
)
def test_the_handshake_accepts_the_sites_own_origins_only(author, note, settings, origin, accepted):
    """Origins of ALLOWED_HOSTS or CSRF_TRUSTED_ORIGINS open a socket; others are refused
    at the handshake, before the session is read."""
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
