"""Bylines by consent, and who pins notes: an Author posting `authors=alice-author` on their
own note cannot publish it as Alice's (byline, author page, Scholar citation_author, cite
exports) until she agrees, nor pin it first on `/` with `weight=-1000`."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from notes import services
from notes.models import AuthorConsent, Note, Status
from tests.factories import draft_note


@pytest.fixture
def alice(db):
    from tests.people import user_in_group

    user = user_in_group("alice", "Author", first_name="Alice", last_name="Author")
    services.author_for_user(user)
    return user


@pytest.fixture
def bobs_note(other_author):
    """Bob's (bert's) draft with a body, ready to publish."""
    return draft_note(other_author, "Bob's result", body="A theorem.")


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


# --- Who may be named: people who can answer, unless an Editor names them ------------------------


@pytest.fixture
def accountless(db):
    """An author without an account, as an import or the demo makes them."""
    from notes.models import Author

    return Author.objects.create(name="Imported Person", handle="imported-person")


@pytest.fixture
def shared_note(note, author, other_author, editor_user):
    """Ada's draft with Bert as a confirmed co-author (an Editor added him)."""
    return services.note_save(
        note_id=note.pk, user=editor_user, base_version=note.version,
        fields={"authors": _handles(author, other_author)},
    ).note  # fmt: skip


def _name(note: Note, user, handles: list[str]) -> Note:
    note = _reload(note)
    return services.note_save(
        note_id=note.pk, user=user, base_version=note.version, fields={"authors": handles}
    ).note


def _roles(author, other_author, editor_user, admin_user, alice) -> dict:
    from django.contrib.auth.models import AnonymousUser

    return {
        "anonymous": AnonymousUser(),
        "unrelated author": alice,
        "author": author,
        "co-author": other_author,
        "editor": editor_user,
        "admin": admin_user,
    }


def test_naming_an_author_without_an_account_is_an_editors_decision(
    shared_note, accountless, author, other_author, editor_user, admin_user, alice
):
    """Role matrix: an Author on the note (first author or co-author) who names an author
    without an account, first or last, is refused on the authors field and nothing changes;
    Editors and Admins name them; anyone who may not edit the note is refused before."""
    from django.core.exceptions import ValidationError

    roles = _roles(author, other_author, editor_user, admin_user, alice)
    expected = {
        "anonymous": PermissionDenied, "unrelated author": PermissionDenied,
        "author": ValidationError, "co-author": ValidationError, "editor": None, "admin": None,
    }  # fmt: skip
    own = _handles(author, other_author)
    for role, user in roles.items():
        for wanted in ([accountless.handle, *own], [*own, accountless.handle]):
            if expected[role] is None:
                note = _name(shared_note, user, wanted)
                assert services.working_state(note)["authors"] == wanted, role
                _name(note, editor_user, own)  # back, for the next role
                continue
            with pytest.raises(expected[role]) as refused:
                _name(shared_note, user, wanted)
            if expected[role] is ValidationError:
                assert "Imported Person" in refused.value.message_dict["authors"][0], role
            assert services.working_state(_reload(shared_note))["authors"] == own, role


def test_an_author_names_people_with_an_account_who_then_confirm(
    shared_note, author, other_author, alice
):
    """An Author may name a person with an account (asked to confirm) and keep themself."""
    note = _name(shared_note, other_author, _handles(author, other_author, alice))
    assert services.working_state(note)["authors"] == _handles(author, other_author, alice)
    consent = AuthorConsent.objects.get(note=note, author__user=alice)
    assert consent.state == AuthorConsent.State.PENDING


def test_an_author_cannot_name_someone_whose_account_is_closed(shared_note, author, alice):
    """A deactivated account cannot confirm either: naming it is an Editor's decision."""
    from django.core.exceptions import ValidationError

    alice.is_active = False
    alice.save()
    with pytest.raises(ValidationError, match="cannot confirm"):
        _name(shared_note, author, _handles(author, alice))


def test_a_name_already_on_the_note_stays_and_may_move(
    shared_note, accountless, author, other_author, editor_user
):
    """An author without an account whom an Editor named stays when an Author saves, even
    reordered: only adding such a name is refused."""
    own = _handles(author, other_author)
    _name(shared_note, editor_user, [*own, accountless.handle])
    note = _name(shared_note, author, [author.author.handle, accountless.handle, own[1]])
    assert services.working_state(note)["authors"][1] == accountless.handle
    note = services.note_save(
        note_id=note.pk, user=other_author, base_version=note.version, fields={"body": "Next."}
    ).note
    assert accountless.handle in services.working_state(note)["authors"]


def test_an_authors_naming_is_refused_on_a_published_notes_working_copy(
    shared_note, accountless, author, other_author
):
    """The rule holds for the working copy of a published note: its byline is never made."""
    from django.core.exceptions import ValidationError

    note = _reload(services.note_save(
        note_id=shared_note.pk, user=author, base_version=shared_note.version,
        fields={"body": "A theorem."},
    ).note)  # fmt: skip
    services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    with pytest.raises(ValidationError):
        _name(note, author, [accountless.handle, *_handles(author, other_author)])
    assert _reload(note).working is None


# --- The feed's promotion slots: an Editor's decision, as pinning is ----------------------------


def _promote(note: Note, user, value: bool) -> Note:
    note = _reload(note)
    return services.note_save(
        note_id=note.pk, user=user, base_version=note.version, fields={"promotion": value}
    ).note


@pytest.mark.parametrize("published", [False, True])
def test_only_editors_change_a_notes_promotion(
    published, shared_note, author, other_author, editor_user, admin_user, alice
):
    """Role matrix, on a draft and on a published note's working copy: an Author on the note
    who puts it in the promotion slots, or takes it out, is refused on the promotion field and
    nothing changes; Editors and Admins do both; others may not edit the note at all."""
    from django.core.exceptions import ValidationError

    if published:
        note = services.note_save(
            note_id=shared_note.pk, user=author, base_version=shared_note.version,
            fields={"body": "A theorem."},
        ).note  # fmt: skip
        services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    roles = _roles(author, other_author, editor_user, admin_user, alice)
    expected = {
        "anonymous": PermissionDenied, "unrelated author": PermissionDenied,
        "author": ValidationError, "co-author": ValidationError, "editor": None, "admin": None,
    }  # fmt: skip
    for role, user in roles.items():
        for value in (True, False):
            _promote(shared_note, editor_user, not value)  # the other way round to start
            if expected[role] is None:
                note = _promote(shared_note, user, value)
                assert services.working_state(note)["promotion"] is value, role
                continue
            with pytest.raises(expected[role]) as refused:
                _promote(shared_note, user, value)
            if expected[role] is ValidationError:
                assert "Only Editors" in refused.value.message_dict["promotion"][0], role
            assert services.working_state(_reload(shared_note))["promotion"] is not value, role
    if published:
        assert _reload(shared_note).promotion is False  # nothing of this went live


def test_an_author_saving_a_promoted_note_keeps_its_promotion(shared_note, author, editor_user):
    """Saving other fields of a note an Editor promoted is no change to its promotion."""
    _promote(shared_note, editor_user, True)
    note = _reload(shared_note)
    note = services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": "More.", "promotion": True},
    ).note  # fmt: skip
    assert note.promotion is True and note.body == "More."


def test_an_author_restoring_a_revision_keeps_the_promotion(shared_note, author, editor_user):
    """Restoring a revision from when the note was promoted leaves the promotion an Editor
    since took away (as the weight): only an Editor's restore brings it back."""
    note = _promote(shared_note, editor_user, True)
    promoted = note.revisions.order_by("-number").first()
    _promote(note, editor_user, False)
    services.revision_restore(revision_id=promoted.pk, user=author)
    assert _reload(note).promotion is False
    services.revision_restore(revision_id=promoted.pk, user=editor_user)
    assert _reload(note).promotion is True


def test_the_editor_form_shows_an_author_the_promotion_read_only_and_refuses_a_change(
    client, shared_note, author, editor_user
):
    """An Author's editor page shows the promotion box disabled with its value in a hidden
    input: a Save posts it back unchanged; a forged change is refused on the field (400) and
    nothing is saved. An Editor's box is a plain check box that changes it."""
    from tests.editor.forms import editor_form

    client.force_login(author)
    note = _promote(shared_note, editor_user, True)
    page = client.get(f"/write/{note.pk}/").content.decode()
    assert '<input type="hidden" name="promotion" value="true">' in page
    assert '<input type="checkbox" id="id_promotion" disabled checked>' in page
    response = client.post(f"/write/{note.pk}/", editor_form(note, promotion="true", body="B"))
    assert response.status_code == 302
    note = _reload(note)
    assert note.promotion is True and note.body == "B"
    refused = client.post(f"/write/{note.pk}/", editor_form(note, promotion="false", body="C"))
    assert refused.status_code == 400
    field = refused.content.decode().split('for="id_promotion"', 1)[1].split("</div>", 1)[0]
    assert "errorlist" in field and "Only Editors" in field
    note = _reload(note)
    assert note.promotion is True and note.body == "B"
    client.force_login(editor_user)
    page = client.get(f"/write/{note.pk}/").content.decode()
    assert 'type="checkbox" name="promotion"' in page
    response = client.post(f"/write/{note.pk}/", editor_form(note, body="D"))  # box unticked
    assert response.status_code == 302 and _reload(note).promotion is False
