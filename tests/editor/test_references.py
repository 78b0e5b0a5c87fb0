"""Reference lists waiting: after a change to a cited file under "require review", the note's
authors and Editors see which published lists it would change and how (the listing, the
note's editor and review pages, the file's page), and publish it through review; nobody else
sees the notes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from notes.models import Note, NoteAuthor
from notes.services import author_for_user
from tests.cited_files import (
    bibfile,
    public_text,
    published,
    replace_title,
    require_review,
)
from tests.editor.forms import editor_form

__all__ = ["bibfile", "published"]  # fixtures

NEW = "Literate Programming Revisited"


@pytest.fixture
def changed(author, published, bibfile):
    """The published note after its author replaced the cited entry's title, review required."""
    require_review()
    replace_title(author, bibfile, NEW)
    return Note.objects.get(pk=published.pk)


def _listing(client, user) -> str:
    client.force_login(user)
    response = client.get(reverse("editor:reference_changes"))
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    return response.content.decode()


@pytest.mark.parametrize("who", ["author", "coauthor", "editor_user", "admin_user"])
def test_listing_shows_the_change_to_who_may_edit_the_note(client, request, changed, who):
    """The note's author, a co-author, an Editor and an Admin see the note and the entry's
    new title beside the published one."""
    if who == "coauthor":
        user = request.getfixturevalue("other_author")
        NoteAuthor.objects.create(note=changed, author=author_for_user(user), position=1)
    else:
        user = request.getfixturevalue(who)
    text = _listing(client, user)
    assert reverse("editor:edit", args=[changed.pk]) in text
    assert "<del>Literate Programming</del> → <ins>Literate Programming Revisited</ins>" in text


def test_listing_leaves_out_notes_of_others(client, other_author, changed):
    """An Author not on the note sees neither it nor the change."""
    text = _listing(client, other_author)
    assert reverse("editor:edit", args=[changed.pk]) not in text
    assert NEW not in text


def test_listing_needs_a_sign_in(client, changed):
    """Anonymous visitors are sent to sign in."""
    response = client.get(reverse("editor:reference_changes"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_nothing_waits_without_review(client, author, published, bibfile):
    """Without require review the lists changed at once: nothing is listed."""
    replace_title(author, bibfile, NEW)
    assert NEW not in _listing(client, author)
    dashboard = client.get(reverse("editor:dashboard")).content.decode()
    assert "waiting" not in dashboard


def test_dashboard_and_file_page_point_to_the_waiting_list(client, author, changed, bibfile):
    """The dashboard counts the waiting lists; the file's page shows the notes it changes."""
    client.force_login(author)
    dashboard = client.get(reverse("editor:dashboard")).content.decode()
    assert "1 reference list waiting" in dashboard
    page = client.get(reverse("editor:bibliography", args=[bibfile.pk])).content.decode()
    assert "Published reference lists this file changes" in page
    assert "<ins>Literate Programming Revisited</ins>" in page


def test_author_publishes_the_new_list_through_review(client, author, editor_user, changed):
    """The editor page shows the change and "Publish changes"; the author's publish submits
    it, the review page shows it to the Editor, whose approval makes it public."""
    client.force_login(author)
    page = client.get(reverse("editor:edit", args=[changed.pk])).content.decode()
    assert "The bibliography files this note cites changed" in page
    assert "<ins>Literate Programming Revisited</ins>" in page
    assert 'name="action" value="publish">Publish changes' in page
    preview = page.split('class="editor-preview note-body')[1]
    assert 'csl-right-inline">' in preview and "Literate Programming Revisited" in preview
    response = client.post(
        reverse("editor:edit", args=[changed.pk]),
        editor_form(changed, action="publish"),
    )
    assert response.status_code == 302
    assert NEW not in public_text(client, f"/notes/{changed.slug}/")

    client.force_login(editor_user)
    review = client.get(reverse("editor:review_note", args=[changed.pk])).content.decode()
    assert "<ins>Literate Programming Revisited</ins>" in review
    note = Note.objects.get(pk=changed.pk)
    response = client.post(
        reverse("editor:review_approve", args=[note.pk]), {"base_version": note.version}
    )
    assert response.status_code == 302
    assert NEW in public_text(client, f"/notes/{changed.slug}/")
    client.force_login(author)
    assert NEW not in _listing(client, author)


def test_a_working_copys_preview_follows_the_file(client, author, changed, bibfile):
    """A working copy's stored render, the editor's preview, is rendered again from the files
    when a cited file changes."""
    from notes import services

    note = Note.objects.get(pk=changed.pk)
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": note.body + "\nMore text.\n"},
    )  # fmt: skip
    replace_title(author, bibfile, "Literate Programming, Third Look")
    copy = Note.objects.get(pk=changed.pk).working
    assert "Third Look" in copy.rendered_html
