"""Dashboards by role and the public Edit link. Before, an Admin's /write/
listed only their own notes (1 of 100) and public pages had no way into the editor."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from notes import services
from notes.models import NoteAuthor
from tests.factories import draft_notes, published_note


def _listed(client, url: str = "/write/") -> str:
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("role", ["own", "editor", "admin"])
def test_who_sees_which_notes(client, role, author, other_author, editor_user, admin_user):
    """An Author sees their own and co-authored notes; Editors and Admins every note, and
    only theirs with ?scope=mine."""
    draft_notes(other_author, 3, "Bert's")
    draft_notes(author, 2, "Ada's")
    user = {"own": author, "editor": editor_user, "admin": admin_user}[role]
    client.force_login(user)
    text = _listed(client)
    if role == "own":
        assert "Ada&#x27;s 1" in text and "Bert&#x27;s" not in text
    else:
        assert "Ada&#x27;s 1" in text and "Bert&#x27;s 2" in text
        assert "Bert&#x27;s" not in _listed(client, "/write/?scope=mine")


def test_an_author_cannot_widen_the_scope(client, author, other_author):
    """?scope=all means nothing for an Author: the list stays theirs."""
    draft_notes(other_author, 1, "Bert's")
    client.force_login(author)
    assert "Bert&#x27;s" not in _listed(client, "/write/?scope=all")


def test_filters_by_status_author_tag_and_problems(client, author, other_author, editor_user):
    """Each filter narrows the list: unpublished changes, an author, a tag, problems."""
    plain = published_note(author, "Plain 0")
    changed = published_note(author, "Changed 0")
    services.note_save(
        note_id=changed.pk, user=author, base_version=changed.version, fields={"body": "New."}
    )
    broken = services.note_create(user=other_author, title="Broken")
    services.note_save(
        note_id=broken.pk, user=other_author, base_version=broken.version,
        fields={"body": "See \\cite{nowhere} and $\\frac{1$.", "tags": ["Optics"]},
    )  # fmt: skip
    client.force_login(editor_user)
    text = _listed(client, "/write/?status=changes")
    assert "Changed 0" in text and "Plain 0" not in text and plain.title not in text
    text = _listed(client, f"/write/?author={services.author_for_user(other_author).handle}")
    assert "Broken" in text and "Changed 0" not in text
    text = _listed(client, "/write/?tag=optics")
    assert "Broken" in text and "Plain 0" not in text
    text = _listed(client, "/write/?problems=1")
    assert "Broken" in text and "Plain 0" not in text and "Changed 0" not in text


def test_the_list_pages_and_reads_a_constant_number_of_queries(client, editor_user, author):
    """50 a page; an Editor's dashboard asks the same number of queries at 10 and 120 notes."""

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            _listed(client)
        return len(captured)

    client.force_login(editor_user)
    draft_notes(author, 10, "Note")
    queries()  # the first request also reads what a process reads once (site settings)
    few = queries()
    more = draft_notes(author, 110, "More")
    services.note_save(
        note_id=more[0].pk, user=author, base_version=more[0].version, fields={"body": "x"}
    )
    queries()  # a write may have moved the generation: what is read once per generation
    assert queries() == few
    text = _listed(client)
    assert "page 1 of 3 (120 notes)" in text
    assert "page 3 of 3" in _listed(client, "/write/?page=3")


def test_the_edit_link_shows_to_people_who_may_edit_only(client, author, other_author, editor_user):
    """A note's public page links to the editor for its author and Editors; another Author
    and an anonymous reader see no link, and the anonymous (cached) page never carries it."""
    note = published_note(author, "Linked")
    url = f"/notes/{note.slug}/"
    edit = f'href="/write/{note.pk}/"'
    anonymous = Client()
    assert edit not in anonymous.get(url).content.decode()  # cached now
    for user, shown in ((author, True), (editor_user, True), (other_author, False)):
        signed_in = Client()
        signed_in.force_login(user)
        response = signed_in.get(url)
        assert (edit in response.content.decode()) is shown
        assert "no-store" in response["Cache-Control"]
    again = anonymous.get(url)
    assert edit not in again.content.decode()


def test_the_tag_filter_offers_an_author_only_tags_they_may_see(client, author, other_author):
    """The dashboard's tag filter lists public tags and those of the Author's own notes, never
    a tag typed on someone else's draft; Editors see every tag."""
    (bert_draft,) = draft_notes(other_author, 1, "Bert's")
    bert_draft.tags.add(services.tag_get_or_create("Secret merger"))
    (ada_draft,) = draft_notes(author, 1, "Ada's")
    ada_draft.tags.add(services.tag_get_or_create("My own idea"))
    published_note(author, "Ada's public 0").tags.add(services.tag_get_or_create("Heat"))
    client.force_login(author)
    text = _listed(client)
    assert '<option value="heat">Heat</option>' in text
    assert '<option value="my-own-idea">My own idea</option>' in text
    assert "Secret merger" not in text


def test_an_editor_is_offered_every_tag(client, editor_user, other_author):
    """Editors may edit every note, so every tag is in their filter."""
    (bert_draft,) = draft_notes(other_author, 1, "Bert's")
    bert_draft.tags.add(services.tag_get_or_create("Secret merger"))
    client.force_login(editor_user)
    assert "Secret merger" in _listed(client)


def test_dashboard_lists_own_and_coauthored_notes_only(client, author, other_author, note):
    """The dashboard shows my notes and notes I co-author, not others' notes."""
    services.note_create(user=other_author, title="Not mine")
    shared = services.note_create(user=other_author, title="Shared work")
    NoteAuthor.objects.create(note=shared, author=author.author, position=1)
    client.force_login(author)
    response = client.get("/write/")
    text = response.content.decode()
    assert response.status_code == 200
    assert "Heat equation" in text and "Shared work" in text and "Not mine" not in text
    assert "co-author" in text


def test_dashboard_search_and_status_filter(client, author, note):
    """?q= filters by title, ?status= by state."""
    services.note_create(user=author, title="Wave equation")
    client.force_login(author)
    text = client.get("/write/?q=wave").content.decode()
    assert "Wave equation" in text and "Heat equation" not in text
    text = client.get("/write/?status=published").content.decode()
    assert "Wave equation" not in text and "Heat equation" not in text
