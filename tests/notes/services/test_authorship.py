"""Bylines by consent, and who pins notes: issue 16 item 2. Before, an Author posting
`authors=alice-author` on their own note published it as Alice's (byline, author page,
Scholar citation_author, cite exports), and `weight=-1000` pinned it first on `/`."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from notes import services
from notes.models import AuthorConsent, Note, Status


@pytest.fixture
def alice(db):
    from tests.people import user_in_group

    user = user_in_group("alice", "Author", first_name="Alice", last_name="Author")
    services.author_for_user(user)
    return user


@pytest.fixture
def bobs_note(other_author):
    """Bob's (bert's) draft with a body, ready to publish."""
    note = services.note_create(user=other_author, title="Bob's result")
    return services.note_save(
        note_id=note.pk, user=other_author, base_version=note.version,
        fields={"body": "A theorem."},
    ).note  # fmt: skip


def _handles(*users) -> list[str]:
    return [services.author_for_user(user).handle for user in users]


def _reload(note: Note) -> Note:
    return Note.objects.get(pk=note.pk)


def _public(note: Note) -> str:
    return Client().get(f"/notes/{note.slug}/").content.decode()


def test_an_author_cannot_replace_themself_with_someone_else(bobs_note, other_author, alice):
    """Posting only Alice's handle on Bob's own note is refused: Bob cannot take his name off."""
    with pytest.raises(services.AuthorshipError, match="own name"):
        services.note_save(
            note_id=bobs_note.pk, user=other_author, base_version=bobs_note.version,
            fields={"authors": _handles(alice)},
        )  # fmt: skip
    assert list(_reload(bobs_note).authors.values_list("handle", flat=True)) == _handles(
        other_author
    )


def test_a_coauthor_with_an_account_confirms_before_the_note_is_public(
    bobs_note, other_author, alice
):
    """Adding Alice asks her; Bob's publish is refused while she has not confirmed, and no
    page names her; once she confirms, it publishes with her name."""
    note = services.note_save(
        note_id=bobs_note.pk, user=other_author, base_version=bobs_note.version,
        fields={"authors": _handles(other_author, alice)},
    ).note  # fmt: skip
    consent = AuthorConsent.objects.get(note=note, author__user=alice)
    assert consent.state == AuthorConsent.State.PENDING and consent.requested_by == other_author
    assert list(AuthorConsent.objects.pending_for(alice)) == [consent]
    with pytest.raises(services.AuthorshipError, match="Alice Author"):
        services.note_publish(note_id=note.pk, user=other_author, base_version=note.version)
    assert _reload(note).status == Status.DRAFT
    services.authorship_confirm(note_id=note.pk, author_id=consent.author_id, user=alice)
    services.note_publish(note_id=note.pk, user=other_author, base_version=note.version)
    page = _public(_reload(note))
    assert 'name="citation_author" content="Author, Alice"' in page or "Alice Author" in page


def test_adding_a_coauthor_to_a_published_note_waits_for_them(bobs_note, other_author, alice):
    """On a published note the new byline is in the working copy; publishing the change is
    refused until Alice confirms, and the live page never names her before."""
    services.note_publish(note_id=bobs_note.pk, user=other_author, base_version=bobs_note.version)
    note = _reload(bobs_note)
    note = services.note_save(
        note_id=note.pk, user=other_author, base_version=note.version,
        fields={"authors": _handles(other_author, alice)},
    ).note  # fmt: skip
    assert "Alice" not in _public(note)
    with pytest.raises(services.AuthorshipError):
        services.note_publish(note_id=note.pk, user=other_author, base_version=note.version)
    assert "Alice" not in _public(_reload(note))
    assert list(_reload(note).authors.values_list("handle", flat=True)) == _handles(other_author)


def test_declining_takes_the_name_off(bobs_note, other_author, alice):
    """Alice declines: her name leaves the note's authors and the request stays declined."""
    services.note_save(
        note_id=bobs_note.pk, user=other_author, base_version=bobs_note.version,
        fields={"authors": _handles(other_author, alice)},
    )  # fmt: skip
    services.authorship_decline(note_id=bobs_note.pk, user=alice)
    note = _reload(bobs_note)
    assert list(note.authors.values_list("handle", flat=True)) == _handles(other_author)
    assert (
        AuthorConsent.objects.get(note=note, author__user=alice).state
        == AuthorConsent.State.DECLINED
    )
    services.note_publish(note_id=note.pk, user=other_author, base_version=note.version)
    assert "Alice" not in _public(_reload(note))


def test_who_may_confirm_for_alice(bobs_note, other_author, alice, author, editor_user):
    """Only Alice or an Editor confirms Alice's byline; Bob (who asked) and another Author
    cannot."""
    services.note_save(
        note_id=bobs_note.pk, user=other_author, base_version=bobs_note.version,
        fields={"authors": _handles(other_author, alice)},
    )  # fmt: skip
    author_id = services.author_for_user(alice).pk
    for user in (other_author, author):
        with pytest.raises(PermissionDenied):
            services.authorship_confirm(note_id=bobs_note.pk, author_id=author_id, user=user)
    consent = services.authorship_confirm(
        note_id=bobs_note.pk, author_id=author_id, user=editor_user
    )
    assert consent.state == AuthorConsent.State.CONFIRMED and consent.decided_by == editor_user


def test_an_editor_adding_a_coauthor_confirms_for_them(note, editor_user, alice):
    """Bylines an Editor sets are the Editor's confirmation: nothing waits."""
    note = services.note_save(
        note_id=note.pk, user=editor_user, base_version=note.version,
        fields={"body": "x", "authors": [*services.working_state(note)["authors"], "alice"]},
    ).note  # fmt: skip
    assert services.unconfirmed_authors(note, services.working_state(note)["authors"]) == []
    services.note_publish(note_id=note.pk, user=editor_user, base_version=note.version)
    assert _reload(note).is_published


def test_only_editors_pin_notes(bobs_note, other_author, editor_user):
    """An Author's weight is refused by the service; an Editor's pins the note."""
    with pytest.raises(PermissionDenied, match="Only Editors pin"):
        services.note_save(
            note_id=bobs_note.pk, user=other_author, base_version=bobs_note.version,
            fields={"weight": -1000},
        )  # fmt: skip
    assert _reload(bobs_note).weight == 0
    services.note_save(
        note_id=bobs_note.pk, user=editor_user, base_version=bobs_note.version,
        fields={"weight": -1000},
    )  # fmt: skip
    assert _reload(bobs_note).weight == -1000


def test_an_authors_weight_post_changes_nothing(client, bobs_note, other_author):
    """Through the editor form, an Author's posted weight is ignored (the field is disabled)."""
    client.force_login(other_author)
    note = _reload(bobs_note)
    from tests.editor.forms import editor_form as _form

    response = client.post(f"/write/{note.pk}/", _form(note, weight="-1000"))
    assert response.status_code == 302
    assert _reload(note).weight == 0


def test_the_dashboard_lists_requests_with_confirm_and_decline(
    client, bobs_note, other_author, alice
):
    """Alice sees the request on her dashboard and confirms it there."""
    services.note_save(
        note_id=bobs_note.pk, user=other_author, base_version=bobs_note.version,
        fields={"authors": _handles(other_author, alice)},
    )  # fmt: skip
    client.force_login(alice)
    page = client.get("/write/").content.decode()
    assert "Co-authorship requests" in page and "Bob&#x27;s result" in page
    author_id = services.author_for_user(alice).pk
    response = client.post(f"/write/{bobs_note.pk}/authors/{author_id}/confirm/")
    assert response.status_code == 302
    assert (
        AuthorConsent.objects.get(note=bobs_note, author__user=alice).state
        == AuthorConsent.State.CONFIRMED
    )
