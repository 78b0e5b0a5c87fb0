"""A published note has a live version (what readers see) and a working copy (what its authors
edit): an approved note's plain Save, autosave or Restore changes the working copy, never
the live title, body, authors and date, so "require review" gates every publish."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.utils import timezone

from notes import services
from notes.models import Note, NoteRevision, Status, WorkingCopy
from scidraft.site.models import ContentGeneration, SiteSettings


@pytest.fixture
def review_required(db):
    site = SiteSettings.objects.current()
    site.require_review = True
    site.save()


def _reload(note: Note) -> Note:
    return Note.objects.get(pk=note.pk)


@pytest.fixture
def approved(review_required, author, editor_user, note):
    """The Author's note, submitted and approved by an Editor: live with "Approved text."."""
    saved = services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"title": "Heat", "body": "Approved text."},
    ).note  # fmt: skip
    services.note_publish(note_id=note.pk, user=author, base_version=saved.version)
    services.note_review_approve(note_id=note.pk, user=editor_user)
    note = _reload(note)
    assert note.is_published and note.body == "Approved text."
    return note


def _public_body(note: Note) -> str:
    response = Client().get(f"/notes/{note.slug}/")
    assert response.status_code == 200
    return response.content.decode()


def test_a_save_after_approval_leaves_the_live_version_alone(approved, author):
    """The Author's plain Save writes the working copy: title, body, authors and date that
    readers see stay the approved ones; the editor holds the new text."""
    later = timezone.now() - dt.timedelta(days=3)
    services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"title": "Unreviewed", "body": "Unreviewed text.", "date": later},
    )  # fmt: skip
    live = _reload(approved)
    assert (live.title, live.body, live.date) == ("Heat", "Approved text.", approved.date)
    assert "Approved text." in _public_body(live) and "Unreviewed" not in _public_body(live)
    copy = live.working_copy
    assert (copy.title, copy.body) == ("Unreviewed", "Unreviewed text.")
    assert "Unreviewed text." in copy.rendered_html
    assert services.working_state(live)["date"] == later.isoformat()


def test_autosaves_and_saves_of_the_working_copy_leave_cached_pages_alone(approved, author):
    """Readers see nothing new, so the content generation (every cached page's key) stays."""
    before = ContentGeneration.objects.value()
    for kind in (NoteRevision.Kind.AUTOSAVE, NoteRevision.Kind.SAVE):
        note = _reload(approved)
        services.note_save(
            note_id=note.pk, user=author, base_version=note.version,
            fields={"body": f"Work in progress ({kind})."}, kind=kind,
        )  # fmt: skip
    assert ContentGeneration.objects.value() == before


def test_publish_changes_under_review_is_a_review_request(approved, author, editor_user):
    """Where review is required, an Author's "Publish changes" submits the working copy: the
    live version stays until an Editor approves, then it becomes the changes."""
    note = services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"body": "Revised text."},
    ).note  # fmt: skip
    result = services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    note = _reload(note)
    assert result.revision.message == services.SUBMITTED
    assert note.body == "Approved text." and note.working_copy.in_review
    assert services.awaiting_review(note)
    assert list(Note.objects.awaiting_review()) == [note]
    services.note_review_approve(note_id=note.pk, user=editor_user, base_version=note.version)
    note = _reload(note)
    assert note.body == "Revised text." and not note.has_unpublished_changes
    assert "Revised text." in _public_body(note)


def test_sending_changes_back_keeps_them_and_the_live_version(approved, author, editor_user):
    """A reviewer who sends submitted changes back leaves the note published as it was; the
    authors keep their working copy, no longer submitted."""
    note = services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"body": "Revised text."},
    ).note  # fmt: skip
    services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    services.note_review_send_back(note_id=note.pk, user=editor_user, comment="Cite it.")
    note = _reload(note)
    assert note.status == Status.PUBLISHED and note.body == "Approved text."
    assert note.working_copy.body == "Revised text." and not note.working_copy.in_review


def test_restore_writes_the_working_copy(approved, author):
    """Restoring an earlier revision of a published note changes what the authors edit, not
    what readers see."""
    first = approved.revisions.order_by("number").first()
    result = services.revision_restore(revision_id=first.pk, user=author)
    note = _reload(approved)
    assert note.body == "Approved text."
    assert note.working_copy.body == first.body
    assert result.revision.kind == NoteRevision.Kind.RESTORE


def test_an_editor_publishes_changes_directly(approved, editor_user):
    """Review binds Authors only: an Editor's "Publish changes" makes the copy live at once."""
    note = services.note_save(
        note_id=approved.pk, user=editor_user, base_version=approved.version,
        fields={"body": "Edited by the editor."},
    ).note  # fmt: skip
    assert _reload(note).body == "Approved text."
    services.note_publish(note_id=note.pk, user=editor_user, base_version=note.version)
    assert _reload(note).body == "Edited by the editor."
    assert not WorkingCopy.objects.filter(note=note).exists()


def test_a_future_date_in_the_copy_schedules_only_when_published(approved, editor_user):
    """Scheduling follows the same rule: a future date saved on a published note keeps it
    public until the change is published."""
    future = timezone.now() + dt.timedelta(days=7)
    note = services.note_save(
        note_id=approved.pk, user=editor_user, base_version=approved.version,
        fields={"date": future},
    ).note  # fmt: skip
    assert _reload(note).is_published
    services.note_publish(note_id=note.pk, user=editor_user, base_version=note.version)
    assert _reload(note).is_scheduled


def test_unpublish_keeps_the_unpublished_changes(approved, author):
    """Unpublishing makes the note a draft holding the working copy's text: nothing written is
    lost, and the note has no live version any more."""
    note = services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"body": "Newer text."},
    ).note  # fmt: skip
    services.note_unpublish(note_id=note.pk, user=author, base_version=note.version)
    note = _reload(note)
    assert note.status == Status.DRAFT and note.body == "Newer text."
    assert not note.has_unpublished_changes


def test_discarding_goes_back_to_the_live_text(approved, author):
    """Discard drops the working copy (kept as a revision): the editor holds the live text."""
    note = services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"body": "Abandoned."},
    ).note  # fmt: skip
    services.working_copy_discard(note_id=note.pk, user=author, base_version=note.version)
    note = _reload(note)
    assert not note.has_unpublished_changes
    assert services.working_state(note)["body"] == "Approved text."
    assert note.revisions.filter(body="Abandoned.").exists()


def test_saving_the_live_text_again_leaves_no_working_copy(approved, author):
    """A working copy exists only while it differs from the live version."""
    note = services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"body": "Changed."},
    ).note  # fmt: skip
    note = services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": "Approved text."},
    ).note  # fmt: skip
    assert not _reload(note).has_unpublished_changes


def test_a_stale_publish_of_changes_is_a_conflict(approved, author, other_author):
    """The optimistic lock covers the working copy: a publish from a page loaded before the
    last save is refused and publishes nothing."""
    services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"body": "Second."},
    )  # fmt: skip
    result = services.note_publish(note_id=approved.pk, user=author, base_version=approved.version)
    assert result.conflict and _reload(approved).body == "Approved text."


ROLES = ("anonymous", "own", "other", "editor", "admin")


@pytest.mark.parametrize("role", ROLES)
def test_who_may_change_the_live_version(
    role, approved, author, other_author, editor_user, admin_user
):
    """Save then "Publish changes" on an approved note, by role, with review required: the
    owner's becomes a review request, an Editor's and an Admin's go live, anyone else is
    refused before anything is written."""
    user = {
        "anonymous": AnonymousUser(), "own": author, "other": other_author,
        "editor": editor_user, "admin": admin_user,
    }[role]  # fmt: skip
    if role in {"anonymous", "other"}:
        with pytest.raises(PermissionDenied):
            services.note_save(
                note_id=approved.pk, user=user, base_version=approved.version,
                fields={"body": "Hijacked."},
            )  # fmt: skip
        assert not _reload(approved).has_unpublished_changes
        return
    note = services.note_save(
        note_id=approved.pk, user=user, base_version=approved.version,
        fields={"body": f"By {role}."},
    ).note  # fmt: skip
    services.note_publish(note_id=note.pk, user=user, base_version=note.version)
    live = _reload(note).body
    assert live == ("Approved text." if role == "own" else f"By {role}.")


def test_the_editor_page_says_published_with_unpublished_changes(client, approved, author):
    """The editor and the dashboard tell the authors that readers see another version."""
    services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"body": "Pending."},
    )  # fmt: skip
    client.force_login(author)
    page = client.get(f"/write/{approved.pk}/").content.decode()
    assert "Published, with unpublished changes" in page and "Pending." in page
    dashboard = client.get("/write/").content.decode()
    assert "published, with unpublished changes" in dashboard.lower()


def test_the_admin_cannot_change_a_live_version_or_a_status(client, approved, admin_user):
    """In the admin a published note's fields are read-only and the status is never a form
    field: publishing goes through the services' rules."""
    client.force_login(admin_user)
    url = f"/admin/notes/note/{approved.pk}/change/"
    page = client.get(url).content.decode()
    assert 'name="body"' not in page and 'name="status"' not in page
    client.post(url, {"title": "Admin hack", "body": "Admin hack.", "status": "published"})
    assert _reload(approved).body == "Approved text."


def test_tags_keep_the_order_the_author_typed_through_the_copy_and_publishing(
    approved, author, editor_user
):
    """Tags typed "Zeta, Alpha" stay in that order in the working copy, in the editor's state
    and, once published, on the note; a reordering alone is a change."""
    services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"tags": ["Zeta", "Alpha"]},
    )  # fmt: skip
    copy_state = services.working_state(_reload(approved))
    assert copy_state["tags"] == ["Zeta", "Alpha"]
    services.note_publish(note_id=approved.pk, user=author, base_version=_reload(approved).version)
    services.note_review_approve(note_id=approved.pk, user=editor_user)
    live = _reload(approved)
    assert [tag.name for tag in live.ordered_tags()] == ["Zeta", "Alpha"]
    assert live.tag_order == ["Zeta", "Alpha"]
    services.note_save(
        note_id=live.pk, user=author, base_version=live.version, fields={"tags": ["Alpha", "Zeta"]}
    )
    assert services.working_state(_reload(live))["tags"] == ["Alpha", "Zeta"]


def test_macros_edited_on_a_published_note_wait_in_the_copy_until_published(
    approved, author, editor_user
):
    """The note's math macros are part of what its authors edit: saved, they render the
    working copy (and its preview) while readers keep the live macros; publishing makes
    them the note's."""
    macros = "\\newcommand{\\Ex}{\\mathbb{E}}"
    services.note_save(
        note_id=approved.pk, user=author, base_version=approved.version,
        fields={"body": "Mean $\\Ex[X]$.", "math_macros": macros},
    )  # fmt: skip
    note = _reload(approved)
    assert note.math_macros == ""
    assert services.working_state(note)["math_macros"] == macros
    assert 'class="math-error"' not in note.working_copy.rendered_html
    assert "mathbb" in note.working_copy.rendered_html
    services.note_publish(note_id=note.pk, user=editor_user, base_version=note.version)
    live = _reload(approved)
    assert live.math_macros == macros and "mathbb" in live.rendered_html
    assert live.working is None
