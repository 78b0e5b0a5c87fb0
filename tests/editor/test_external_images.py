"""Every page that shows a note to its authors or reviewers replaces external images with a
note saying why they are not loaded: the editor page's stored preview,
the live preview, the review page and the admin's preview. Readers' pages are unchanged.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from notes import services

BODY = "Intro.\n\n![Pixel](https://tracker.example/p.gif)\n\n![Own](/media/notes/1/own.png)\n"
NOTE = "External image not loaded in the editor: tracker.example"
# role → status of the editor's pages for Ada's note (tests/editor/test_permissions.py).
ROLES = {
    "anonymous": 302,
    "author": 200,
    "other_author": 404,
    "editor_user": 200,
    "admin_user": 200,
}


def shows_the_note(text: str) -> bool:
    """The note is there, the tracker's address is nothing a browser loads, own images stay."""
    assert not re.search(r'(?<![-\w])src="https://tracker\.example', text)
    assert 'src="/media/notes/1/own.png"' in text
    return NOTE in text and 'data-external-src="https://tracker.example/p.gif"' in text


@pytest.fixture
def written(author, note):
    return services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": BODY}
    ).note


def client_as(request, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("role", list(ROLES))
def test_the_editor_page_and_its_live_preview(request, role, written):
    """The stored preview and the live preview show the note for every role that may open
    them; the others get nothing of the note."""
    client = client_as(request, role)
    page = client.get(f"/write/{written.pk}/")
    preview = client.post(f"/write/{written.pk}/preview/", {"content": BODY})
    assert page.status_code == preview.status_code == ROLES[role]
    if ROLES[role] == 200:
        assert shows_the_note(page.content.decode())
        assert shows_the_note(preview.content.decode())


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["editor_user", "admin_user"])
def test_the_review_page(request, role, written):
    """Reviewers read the note with the same replacement."""
    response = client_as(request, role).get(f"/write/review/{written.pk}/")
    assert response.status_code == 200
    assert shows_the_note(response.content.decode())


@pytest.mark.django_db
def test_the_admins_preview(admin_user):
    """The admin's preview of a note not saved yet (and of pages)."""
    client = Client()
    client.force_login(admin_user)
    response = client.post(reverse("admin:notes_note_preview"), {"content": BODY})
    assert response.status_code == 200
    assert shows_the_note(response.content.decode())


@pytest.mark.django_db
def test_readers_get_the_image_as_written(client, author, written):
    """The published page keeps the author's image address."""
    services.note_publish(note_id=written.pk, user=author, base_version=written.version)
    text = client.get(f"/notes/{written.slug}/").content.decode()
    assert 'src="https://tracker.example/p.gif"' in text and NOTE not in text
