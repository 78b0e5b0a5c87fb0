"""Deleting into the trash, restoring from it and purging it: who may, and what each keeps."""

from __future__ import annotations

import datetime as dt
from io import StringIO

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.utils import timezone

from notes import services
from notes.models import Note, NoteAuthor, NoteRevision, Status
from tests.factories import draft_note, publish, write
from tests.people import user_in_group

ROLES = ("anonymous", "outsider", "creator", "coauthor", "editor", "admin")
DENIED, REFUSED, DONE = "denied", "refused", "done"

DELETE = {
    "draft": {
        "anonymous": DENIED, "outsider": DENIED, "creator": DONE, "coauthor": DONE,
        "editor": DONE, "admin": DONE,
    },
    "published": {
        "anonymous": DENIED, "outsider": DENIED, "creator": REFUSED, "coauthor": REFUSED,
        "editor": DONE, "admin": DONE,
    },
}  # fmt: skip
RESTORE = {
    "anonymous": DENIED, "outsider": DENIED, "creator": DENIED, "coauthor": DENIED,
    "editor": DONE, "admin": DONE,
}  # fmt: skip


@pytest.fixture
def people(author, other_author, editor_user, admin_user):
    coauthor = user_in_group("cleo", "Author")
    return {
        "anonymous": AnonymousUser(),
        "outsider": other_author,
        "creator": author,
        "coauthor": coauthor,
        "editor": editor_user,
        "admin": admin_user,
    }


def _note(people, state: str) -> Note:
    """A note of the creator's with the co-author named, as a draft or published."""
    creator, editor = people["creator"], people["editor"]
    note = draft_note(creator, f"A {state} note")
    NoteAuthor.objects.create(
        note=note, author=services.author_for_user(people["coauthor"]), position=1
    )
    note = write(note, creator, body="A lemma.")
    if state == "published":
        note = publish(note, editor)
        assert note.status == Status.PUBLISHED
    return note


def _outcome(action) -> str:
    try:
        action()
    except PermissionDenied:
        return DENIED
    except services.TrashError:
        return REFUSED
    return DONE


@pytest.mark.django_db
@pytest.mark.parametrize("state", ["draft", "published"])
@pytest.mark.parametrize("role", ROLES)
def test_delete_matrix(people, state, role):
    """Who may delete a draft or a published note, and what a refusal leaves unchanged."""
    note = _note(people, state)
    outcome = _outcome(lambda: services.note_delete(note_id=note.pk, user=people[role]))
    assert outcome == DELETE[state][role]
    note.refresh_from_db()
    if outcome == DONE:
        assert note.deleted_at is not None and note.deleted_by == people[role]
        assert note.status == Status.DRAFT
        assert note.revisions.filter(kind=NoteRevision.Kind.TRASH).exists()
    else:
        assert note.deleted_at is None and note.status == Status(
            "published" if state == "published" else "draft"
        )


@pytest.mark.django_db
@pytest.mark.parametrize("state", ["draft", "published"])
@pytest.mark.parametrize("role", ROLES)
def test_restore_matrix(people, state, role):
    """Only Editors and Admins restore; the note comes back as a draft with its revisions."""
    note = _note(people, state)
    services.note_delete(note_id=note.pk, user=people["editor"])
    revisions = note.revisions.count()
    outcome = _outcome(lambda: services.note_restore(note_id=note.pk, user=people[role]))
    assert outcome == RESTORE[role]
    note.refresh_from_db()
    if outcome == DONE:
        assert note.deleted_at is None and note.deleted_by is None
        assert note.status == Status.DRAFT and note.body == "A lemma."
        assert note.revisions.count() == revisions + 1
    else:
        assert note.deleted_at is not None and note.revisions.count() == revisions


@pytest.mark.django_db
def test_a_trashed_note_leaves_every_list_and_keeps_its_slug(people):
    """Readers' and editors' querysets leave a trashed note out; a new note cannot take its slug."""
    note = _note(people, "published")
    services.note_delete(note_id=note.pk, user=people["editor"])
    for role in ROLES:
        assert not Note.objects.visible_to(people[role]).filter(pk=note.pk).exists()
        assert not Note.objects.editable_by(people[role]).filter(pk=note.pk).exists()
    assert not Note.objects.published().filter(pk=note.pk).exists()
    assert not Note.objects.for_dashboard(people["admin"], mine=False).filter(pk=note.pk)
    assert list(Note.objects.trashed()) == [note]
    again = services.note_create(user=people["creator"], title=note.title)
    assert again.slug != note.slug


@pytest.mark.django_db
def test_an_editor_deleting_a_published_note_keeps_its_unpublished_changes(people):
    """The working copy of a published note becomes the trashed draft: nothing written is lost."""
    note = _note(people, "published")
    services.note_save(
        note_id=note.pk, user=people["creator"], base_version=note.version,
        fields={"body": "A better lemma."},
    )  # fmt: skip
    services.note_delete(note_id=note.pk, user=people["editor"])
    note.refresh_from_db()
    assert note.body == "A better lemma." and note.working is None


@pytest.mark.django_db
def test_purge_removes_only_notes_trashed_over_thirty_days_ago(people):
    """purge_trash removes notes in the trash longer than 30 days, and nothing else."""
    old, recent, kept = (_note(people, "draft") for _ in range(3))
    for note in (old, recent):
        services.note_delete(note_id=note.pk, user=people["creator"])
    Note.objects.filter(pk=old.pk).update(deleted_at=timezone.now() - dt.timedelta(days=31))
    Note.objects.filter(pk=recent.pk).update(deleted_at=timezone.now() - dt.timedelta(days=29))
    out = StringIO()
    call_command("purge_trash", stdout=out)
    assert "Removed 1 note" in out.getvalue()
    assert set(Note.objects.values_list("pk", flat=True)) == {recent.pk, kept.pk}
    assert not NoteRevision.objects.filter(note_id=old.pk).exists()
