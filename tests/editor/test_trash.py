"""The delete confirmation, the trash page and the endpoints of a note in the trash."""

from __future__ import annotations

import pytest
from django.test import Client

from notes import services
from notes.models import Note, Status
from tests.factories import publish, write

ROLES = ("anonymous", "own", "other", "editor", "admin")


@pytest.fixture
def users(author, other_author, editor_user, admin_user):
    return {"own": author, "other": other_author, "editor": editor_user, "admin": admin_user}


def _client(users, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(users[role])
    return client


def test_the_author_confirms_then_deletes_a_draft(client, author, note):
    """GET asks (saying an Editor can restore it); POST trashes it and returns to the dashboard."""
    client.force_login(author)
    page = client.get(f"/write/{note.pk}/delete/").content.decode()
    assert "Delete “Heat equation”?" in page and "30 days" in page
    assert f'action="/write/{note.pk}/delete/"' in page
    response = client.post(f"/write/{note.pk}/delete/", follow=True)
    assert response.redirect_chain[0][0] == "/write/"
    assert "is in the trash" in response.content.decode()
    assert Note.objects.trashed().filter(pk=note.pk).exists()
    assert "Heat equation" not in client.get("/write/").content.decode().split("</header>", 2)[2]


def test_an_author_is_told_to_unpublish_first(client, author, editor_user, note):
    """A published note's author sees why it cannot be deleted; a POST changes nothing."""
    note = publish(write(note, note.created_by, body="A published lemma."), editor_user)
    client.force_login(author)
    page = client.get(f"/write/{note.pk}/delete/").content.decode()
    assert "unpublish it first" in page and 'action="/write/' not in page.split("<main")[1]
    response = client.post(f"/write/{note.pk}/delete/", follow=True)
    assert "unpublish it first" in response.content.decode()
    note.refresh_from_db()
    assert note.deleted_at is None and note.status == Status.PUBLISHED


def test_an_editor_deletes_a_published_note_which_unpublishes_it(client, editor_user, note):
    """The Editor's confirmation says it unpublishes; after it readers get 404."""
    note = publish(write(note, note.created_by, body="A published lemma."), editor_user)
    assert Client().get(f"/notes/{note.slug}/").status_code == 200
    client.force_login(editor_user)
    page = client.get(f"/write/{note.pk}/delete/").content.decode()
    assert "Unpublish and delete" in page
    client.post(f"/write/{note.pk}/delete/")
    assert Client().get(f"/notes/{note.slug}/").status_code == 404


@pytest.mark.parametrize("state", ["draft", "published"])
def test_a_trashed_notes_endpoints_answer_404_to_everyone(users, note, state):
    """Editor page, preview, revisions, delete and the public page: 404 (or the login) for all."""
    if state == "published":
        note = publish(write(note, note.created_by, body="A published lemma."), users["editor"])
    services.note_delete(note_id=note.pk, user=users["editor"])
    for role in ROLES:
        client = _client(users, role)
        for method, url in (
            ("get", f"/write/{note.pk}/"),
            ("post", f"/write/{note.pk}/preview/"),
            ("get", f"/write/{note.pk}/revisions/"),
            ("get", f"/write/{note.pk}/delete/"),
            ("get", f"/notes/{note.slug}/"),
        ):
            response = getattr(client, method)(url)
            if role == "anonymous" and url.startswith("/write/"):
                assert response.status_code == 302, (role, url)
            else:
                assert response.status_code == 404, (role, url)


@pytest.mark.parametrize("role", ROLES)
def test_the_trash_page_and_restore_by_role(users, note, role):
    """Editors and Admins list the trash and restore from it; others are refused."""
    services.note_delete(note_id=note.pk, user=users["own"])
    client = _client(users, role)
    listing = client.get("/write/trash/")
    restored = client.post(f"/write/trash/{note.pk}/restore/")
    note.refresh_from_db()
    if role in ("editor", "admin"):
        assert listing.status_code == 200 and "Heat equation" in listing.content.decode()
        assert restored.status_code == 302 and restored["Location"] == "/write/trash/"
        assert note.deleted_at is None
        assert client.get(f"/write/{note.pk}/").status_code == 200
    else:
        expected = 302 if role == "anonymous" else 403
        assert (listing.status_code, restored.status_code) == (expected, expected)
        assert note.deleted_at is not None
