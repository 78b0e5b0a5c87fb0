"""The editor's writes in notes.services: create, save, conflicts, publish, review, restore."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from notes import services
from notes.models import Author, Note, NoteRevision, Status
from scidraft.site.models import SiteSettings


def test_create_makes_a_draft_with_the_user_as_first_author(author):
    """note_create: a draft, a unique slug, the user's new Author first, revision 1."""
    first = services.note_create(user=author, title="Heat equation")
    second = services.note_create(user=author, title="Heat equation")
    assert first.status == Status.DRAFT and first.created_by == author
    assert first.slug == "heat-equation" and second.slug == "heat-equation-2"
    handle = Author.objects.get(user=author)
    assert (handle.name, handle.handle) == ("Ada Lovelace", "ada")
    assert [link.author for link in first.authorships.all()] == [handle]
    assert list(first.revisions.values_list("number", "kind")) == [(1, "save")]
    assert Author.objects.filter(user=author).count() == 1


def test_create_refused_without_add_permission(db):
    """A logged-in user in no group may not create notes."""
    from django.contrib.auth.models import User

    nobody = User.objects.create_user("nobody", password="x")
    with pytest.raises(PermissionDenied):
        services.note_create(user=nobody, title="No")


def test_save_bumps_the_version_renders_and_records_a_revision(author, note):
    """A save applies the fields, bumps version, renders, and records a "save" revision."""
    when = timezone.now() - dt.timedelta(days=1)
    result = services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"title": "Heat", "body": "Let $x^2$.", "tags": ["PDE", "heat"], "date": when,
                "summary": "Short", "show_title": True},
    )  # fmt: skip
    assert not result.conflict
    saved = Note.objects.get(pk=note.pk)
    assert saved.version == note.version + 1
    assert saved.title == "Heat" and saved.summary == "Short" and saved.show_title is True
    assert sorted(saved.tags.values_list("name", flat=True)) == ["PDE", "heat"]
    assert "katex" in saved.rendered_html
    assert result.revision.kind == "save" and result.revision.body == "Let $x^2$."
    assert result.revision.base_version == note.version


def test_stale_base_version_is_refused_and_kept_as_a_conflict_revision(author, note):
    """Two editors from one version: the second save is refused, kept, and overwrites nothing."""
    base = note.version
    services.note_save(note_id=note.pk, user=author, base_version=base, fields={"body": "first"})
    result = services.note_save(
        note_id=note.pk, user=author, base_version=base, fields={"body": "second", "title": "T2"}
    )
    assert result.conflict
    assert Note.objects.get(pk=note.pk).body == "first"
    assert result.revision.kind == NoteRevision.Kind.CONFLICT
    assert (result.revision.body, result.revision.title) == ("second", "T2")
    assert result.revision.base_version == base
    assert result.note.version == base + 1


def test_autosave_of_a_published_note_leaves_the_public_row_untouched(author, note):
    """Autosaving a published note records a revision and writes its working copy; the live
    text readers see does not change."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Public text."}
    )
    note.refresh_from_db()
    published = services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    before = Note.objects.get(pk=note.pk)
    result = services.note_save(
        note_id=note.pk, user=author, base_version=before.version,
        fields={"body": "Work in progress."}, kind="autosave",
    )  # fmt: skip
    after = Note.objects.get(pk=note.pk)
    assert published.note.status == Status.PUBLISHED
    assert (after.body, after.rendered_html) == ("Public text.", before.rendered_html)
    assert after.working_copy.body == "Work in progress."  # the authors' working copy
    assert result.revision.kind == "autosave" and result.revision.body == "Work in progress."


def test_autosave_of_a_draft_updates_it(author, note):
    """A draft has no public text to protect: autosave applies the fields."""
    result = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Draft"},
        kind="autosave",
    )  # fmt: skip
    assert Note.objects.get(pk=note.pk).body == "Draft"
    assert result.note.version == note.version + 1


def test_publish_and_unpublish(author, note):
    """Publish makes a note public; unpublish takes it back to draft; both are revisions."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Text"}
    )
    note.refresh_from_db()
    result = services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    assert result.note.is_published
    result = services.note_unpublish(note_id=note.pk, user=author, base_version=result.note.version)
    assert result.note.status == Status.DRAFT
    kinds = list(note.revisions.order_by("number").values_list("kind", flat=True))
    assert kinds[-2:] == ["publish", "unpublish"]


def test_publish_with_a_stale_version_is_a_conflict(author, note):
    """Publishing from an outdated page changes nothing."""
    result = services.note_publish(note_id=note.pk, user=author, base_version=note.version + 5)
    assert result.conflict and Note.objects.get(pk=note.pk).status == Status.DRAFT


def test_require_review_turns_an_authors_publish_into_a_review_request(author, editor_user, note):
    """With require_review on, an Author submits for review and an Editor approves."""
    site = SiteSettings.objects.current()
    site.require_review = True
    site.save()
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Text"}
    )
    note.refresh_from_db()
    submitted = services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    assert submitted.note.status == Status.REVIEW
    assert submitted.revision.message == "Submitted for review"
    approved = services.note_publish(
        note_id=note.pk, user=editor_user, base_version=submitted.note.version
    )
    assert approved.note.status == Status.PUBLISHED
    assert approved.revision.kind == "publish" and approved.revision.created_by == editor_user


def test_others_cannot_save_or_publish(other_author, note):
    """An Author may not touch someone else's note."""
    with pytest.raises(PermissionDenied):
        services.note_save(
            note_id=note.pk, user=other_author, base_version=note.version, fields={"body": "x"}
        )
    with pytest.raises(PermissionDenied):
        services.note_publish(note_id=note.pk, user=other_author, base_version=note.version)


def test_restore_copies_a_revision_into_a_new_version(author, note):
    """Restoring a revision brings back its title, body and metadata as a new version."""
    first = services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"title": "Old", "body": "old body", "summary": "old summary", "tags": ["a"]},
    )  # fmt: skip
    services.note_save(
        note_id=note.pk, user=author, base_version=first.note.version,
        fields={"title": "New", "body": "new body", "summary": "", "tags": []},
    )  # fmt: skip
    result = services.revision_restore(revision_id=first.revision.pk, user=author)
    restored = Note.objects.get(pk=note.pk)
    assert (restored.title, restored.body, restored.summary) == ("Old", "old body", "old summary")
    assert list(restored.tags.values_list("name", flat=True)) == ["a"]
    assert restored.version == first.note.version + 2
    assert result.revision.kind == "restore" and "Restored revision" in result.revision.message


def test_unknown_fields_are_rejected(author, note):
    """note_save writes only the editor's fields."""
    with pytest.raises(ValueError):
        services.note_save(
            note_id=note.pk, user=author, base_version=note.version, fields={"status": "published"}
        )
