"""The review workflow: an Author's publish under "require review" waits in the review queue,
where an Editor or Admin approves it (it is published) or sends it back with a comment the
Author sees in the editor."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from notes import services
from notes.models import Note, NoteRevision, ReviewComment, Status
from scidraft.site.models import ContentGeneration, SiteSettings

XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def review_required(db):
    site = SiteSettings.objects.current()
    site.require_review = True
    site.save()


@pytest.fixture
def submitted(review_required, author, note):
    """The Author's note, with a body, submitted for review by publishing it."""
    result = services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": "The heat equation $u_t = \\Delta u$."},
    )  # fmt: skip
    result = services.note_publish(note_id=note.pk, user=author, base_version=result.note.version)
    assert result.note.status == Status.REVIEW
    return result.note


def _reload(note: Note) -> Note:
    return Note.objects.get(pk=note.pk)


def test_queue_lists_submitted_notes_with_author_date_and_links(client, editor_user, submitted):
    """The queue shows each note in review with its authors, submission date, and links to the
    editor and to the read-only preview."""
    client.force_login(editor_user)
    response = client.get(reverse("editor:review"))
    assert response.status_code == 200
    text = response.content.decode()
    assert "Heat equation" in text
    assert "Ada Lovelace" in text  # the Author profile made for the note's creator
    revision = submitted.revisions.get(message="Submitted for review")
    assert revision.created_at.strftime("%Y-%m-%d %H:%M") in text
    assert reverse("editor:edit", args=[submitted.pk]) in text
    assert reverse("editor:review_note", args=[submitted.pk]) in text
    assert "no-store" in response["Cache-Control"]


def test_queue_leaves_out_drafts_and_published_notes(client, editor_user, submitted, others_note):
    """Only notes in review are listed."""
    client.force_login(editor_user)
    text = client.get(reverse("editor:review")).content.decode()
    assert "Someone else&#x27;s note" not in text and "Someone else's note" not in text


def test_review_page_previews_the_note_as_published(client, admin_user, submitted):
    """The read-only preview renders the body with the published renderer (math typeset)."""
    client.force_login(admin_user)
    response = client.get(reverse("editor:review_note", args=[submitted.pk]))
    assert response.status_code == 200
    text = response.content.decode()
    assert 'class="katex"' in text
    assert reverse("editor:review_approve", args=[submitted.pk]) in text
    assert f'name="base_version" value="{submitted.version}"' in text


def test_editor_approves_and_the_note_is_published(client, editor_user, submitted):
    """Approve publishes the note, records who approved it and bumps the content generation."""
    client.force_login(editor_user)
    before = ContentGeneration.objects.value()
    response = client.post(
        reverse("editor:review_approve", args=[submitted.pk]),
        {"base_version": submitted.version},
    )
    assert response.status_code == 302 and response["Location"] == reverse("editor:review")
    note = _reload(submitted)
    assert note.status == Status.PUBLISHED and note.is_published
    assert note.version == submitted.version + 1
    assert ContentGeneration.objects.value() > before
    latest = note.revisions.first()
    assert latest.kind == NoteRevision.Kind.PUBLISH and latest.message == "Approved by eve"
    decision = ReviewComment.objects.latest_for(note)
    assert decision.kind == ReviewComment.Kind.APPROVE and decision.reviewer == editor_user
    assert client.get(f"/notes/{note.slug}/").status_code == 200


def test_author_cannot_approve_or_send_back(client, author, submitted):
    """An Author gets 403 on the queue and on both decisions; the note stays in review."""
    client.force_login(author)
    assert client.get(reverse("editor:review")).status_code == 403
    assert client.get(reverse("editor:review_note", args=[submitted.pk])).status_code == 403
    approve = client.post(
        reverse("editor:review_approve", args=[submitted.pk]), {"base_version": submitted.version}
    )
    assert approve.status_code == 403
    send_back = client.post(
        reverse("editor:review_send_back", args=[submitted.pk]), {"comment": "no"}
    )
    assert send_back.status_code == 403
    assert _reload(submitted).status == Status.REVIEW
    assert not ReviewComment.objects.exists()


def test_services_refuse_users_without_the_review_permission(author, submitted):
    """The service checks the permission itself, whoever calls it."""
    with pytest.raises(PermissionDenied):
        services.note_review_approve(note_id=submitted.pk, user=author)
    with pytest.raises(PermissionDenied):
        services.note_review_send_back(note_id=submitted.pk, user=author, comment="x")
    assert _reload(submitted).status == Status.REVIEW


def test_send_back_returns_a_draft_and_the_author_sees_the_comment(
    client, author, editor_user, submitted
):
    """Send back: the note is a draft again, and its editor page says "Sent back by" with the
    comment, escaped."""
    editor_user.first_name, editor_user.last_name = "Eve", "<b>Reviewer</b>"
    editor_user.save()
    client.force_login(editor_user)
    response = client.post(
        reverse("editor:review_send_back", args=[submitted.pk]),
        {"comment": f"Define u first.\n{XSS}", "base_version": submitted.version},
    )
    assert response.status_code == 302
    note = _reload(submitted)
    assert note.status == Status.DRAFT
    comment = ReviewComment.objects.latest_for(note)
    assert comment.kind == ReviewComment.Kind.SEND_BACK
    assert comment.body == f"Define u first.\n{XSS}"
    assert note.revisions.first().message == "Sent back by Eve <b>Reviewer</b>"

    client.force_login(author)
    text = client.get(reverse("editor:edit", args=[note.pk])).content.decode()
    assert "Sent back by Eve &lt;b&gt;Reviewer&lt;/b&gt;" in text
    assert "Define u first." in text
    assert "<script>alert" not in text and "<img src=x" not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in text


def test_the_notice_goes_away_once_the_note_is_resubmitted(client, author, editor_user, submitted):
    """After the Author publishes again (a new submission), the old comment is not shown."""
    services.note_review_send_back(note_id=submitted.pk, user=editor_user, comment="Fix the typo")
    client.force_login(author)
    assert (
        "Fix the typo" in client.get(reverse("editor:edit", args=[submitted.pk])).content.decode()
    )
    note = _reload(submitted)
    services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    assert _reload(note).status == Status.REVIEW
    text = client.get(reverse("editor:edit", args=[note.pk])).content.decode()
    assert "Fix the typo" not in text


def test_send_back_without_a_comment_is_refused(client, editor_user, submitted):
    """An empty comment: 400 with a clear message; the note stays in review."""
    client.force_login(editor_user)
    response = client.post(
        reverse("editor:review_send_back", args=[submitted.pk]),
        {"comment": "   ", "base_version": submitted.version},
    )
    assert response.status_code == 400
    assert "Write a comment" in response.content.decode()
    assert _reload(submitted).status == Status.REVIEW
    assert not ReviewComment.objects.exists()


def test_a_note_changed_since_the_reviewer_opened_it_is_not_approved(
    client, author, editor_user, submitted
):
    """The Author autosaved after the reviewer loaded the page: approving is refused with 409,
    nothing is published, and the reviewer's comment is kept in the form."""
    services.note_save(
        note_id=submitted.pk, user=author, base_version=submitted.version,
        fields={"body": "Changed while in review."}, kind=NoteRevision.Kind.AUTOSAVE,
    )  # fmt: skip
    client.force_login(editor_user)
    response = client.post(
        reverse("editor:review_send_back", args=[submitted.pk]),
        {"comment": "Please cite Fourier.", "base_version": submitted.version},
    )
    assert response.status_code == 409
    text = response.content.decode()
    assert "changed since you opened it" in text and "Please cite Fourier." in text
    approve = client.post(
        reverse("editor:review_approve", args=[submitted.pk]), {"base_version": submitted.version}
    )
    assert approve.status_code == 409
    assert _reload(submitted).status == Status.REVIEW


def test_approving_a_note_not_in_review_says_so(client, editor_user, note, review_required):
    """A draft (never submitted, or already decided) cannot be approved: 409 and a message."""
    client.force_login(editor_user)
    response = client.post(reverse("editor:review_approve", args=[note.pk]))
    assert response.status_code == 409
    assert "not awaiting review" in response.content.decode()
    assert _reload(note).status == Status.DRAFT


def test_anonymous_visitors_are_sent_to_log_in(client, submitted):
    response = client.get(reverse("editor:review"))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_dashboard_links_reviewers_to_the_queue_and_admins_to_settings(
    client, author, editor_user, admin_user
):
    """Editors see the review queue link; Admins also People and Site settings; Authors none."""
    client.force_login(author)
    text = client.get(reverse("editor:dashboard")).content.decode()
    assert reverse("editor:review") not in text and reverse("editor:people") not in text
    client.force_login(editor_user)
    text = client.get(reverse("editor:dashboard")).content.decode()
    assert reverse("editor:review") in text and reverse("editor:people") not in text
    client.force_login(admin_user)
    text = client.get(reverse("editor:dashboard")).content.decode()
    assert reverse("editor:people") in text
    assert reverse("admin:site_sitesettings_changelist") in text


def test_review_of_changes_shows_the_diff_against_the_live_version(
    client, author, editor_user, note, review_required
):
    """Submitted changes to a published note are shown as a diff of the live text, lines
    removed and added marked, the whole note folded away."""
    body = "First line stays.\n\nThe old claim.\n\nLast line stays.\n"
    result = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": body}
    )
    services.note_publish(note_id=note.pk, user=editor_user, base_version=result.note.version)
    note = _reload(note)
    result = services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": body.replace("The old claim.", "The new claim.")},
    )  # fmt: skip
    services.note_publish(note_id=note.pk, user=author, base_version=result.note.version)
    client.force_login(editor_user)
    text = client.get(reverse("editor:review_note", args=[note.pk])).content.decode()
    diff = text.split('id="review-diff-heading"')[1].split("</section>")[0]
    assert "revision-diff" in diff and "Published → Submitted" in diff
    assert "diff-removed" in diff and "diff-added" in diff
    assert "old" in diff and "new" in diff
    assert "<details" in text and "A first publication" not in text


def test_review_of_a_first_publication_shows_the_whole_text_and_says_why(
    client, editor_user, submitted
):
    """With no live version to compare with, the whole text is shown and the page says so."""
    client.force_login(editor_user)
    text = client.get(reverse("editor:review_note", args=[submitted.pk])).content.decode()
    assert "A first publication" in text and "review-diff-heading" not in text
    assert 'class="katex"' in text
