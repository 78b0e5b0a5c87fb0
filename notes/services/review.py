"""Review (site setting "require review"): an Editor approves a note or sends it back.

Two things wait for review: a draft submitted for its first publication (status "review"),
and a published note's working copy submitted as "Publish changes" (the live version stays
public meanwhile). Approving publishes either; sending back returns it to its authors."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction

from ..models import Note, NoteRevision, ReviewComment, Status
from .authorship import consents_settle
from .editing import SaveResult, editable_note, stale_result
from .kept_entries import live_bibliography_keep
from .records import revision_record
from .working import version_bump, working_copy_publish, working_state

REVIEW_COMMENT_MAX_CHARS = 10_000


class ReviewError(Exception):
    """A review action that does not apply to the note as it stands; the message says why."""


def _reviewable_note(*, note_id: int, user) -> Note:
    """The note, row-locked, if `user` may review notes; PermissionDenied otherwise."""
    if not (user.is_authenticated and user.is_active and user.has_perm("notes.review_note")):
        raise PermissionDenied("Only editors review notes.")
    note = Note.objects.select_for_update().get(pk=note_id)
    if not awaiting_review(note):
        raise ReviewError(f"This note is not awaiting review: it is {note.get_status_display()}.")
    return note


def awaiting_review(note: Note) -> bool:
    copy = note.working
    return note.status == Status.REVIEW or (copy is not None and copy.in_review)


def _reviewer_name(user) -> str:
    return user.get_full_name() or user.get_username()


def _review_comment(comment: str, *, required: bool) -> str:
    comment = comment.strip()
    if required and not comment:
        raise ReviewError("Write a comment: it tells the authors what to change.")
    if len(comment) > REVIEW_COMMENT_MAX_CHARS:
        raise ReviewError(
            f"The comment is {len(comment):,} characters; the limit is "
            f"{REVIEW_COMMENT_MAX_CHARS:,}."
        )
    return comment


def _review_decide(*, note_id: int, user, base_version: int | None, approve: bool, comment: str):
    """A reviewer's decision: what goes live (or back), its revision and the ReviewComment.
    With `base_version`, a note changed since the reviewer read it is left alone (a
    conflict). Approving confirms, as the Editor's, any byline not confirmed yet."""
    note = _reviewable_note(note_id=note_id, user=user)
    if base_version is not None:
        stale = stale_result(note, base_version)
        if stale is not None:
            return stale
    base = note.version
    copy = note.working
    changes = note.status == Status.PUBLISHED and copy is not None
    if approve:
        consents_settle(note=note, handles=working_state(note)["authors"], user=user)
    if changes and approve:
        working_copy_publish(note)
    elif changes:
        copy.submitted_by, copy.submitted_at = None, None
        copy.save(update_fields=["submitted_by", "submitted_at"])
        version_bump(note)
    else:
        note.status = Status.PUBLISHED if approve else Status.DRAFT
        note.version += 1
        note.full_clean()
        note.save()
        if approve:
            live_bibliography_keep(note)
    what = "Approved" if approve else "Sent back"
    revision = revision_record(
        note=note,
        kind=NoteRevision.Kind.PUBLISH if approve else NoteRevision.Kind.UNPUBLISH,
        user=user,
        base_version=base,
        message=f"{what}{' the changes' if changes else ''} by {_reviewer_name(user)}",
        state=None if approve or not changes else working_state(note),
    )
    kind = ReviewComment.Kind.APPROVE if approve else ReviewComment.Kind.SEND_BACK
    ReviewComment.objects.create(note=note, reviewer=user, kind=kind, body=comment)
    return SaveResult(note=note, conflict=False, revision=revision)


@transaction.atomic
def note_review_approve(
    *, note_id: int, user, base_version: int | None = None, comment: str = ""
) -> SaveResult:
    """Publish a note submitted for review (a future date schedules it). With `base_version`,
    a note changed since the reviewer read it is not approved: the result is a conflict."""
    return _review_decide(
        note_id=note_id, user=user, base_version=base_version, approve=True,
        comment=_review_comment(comment, required=False),
    )  # fmt: skip


@transaction.atomic
def note_review_send_back(
    *, note_id: int, user, comment: str, base_version: int | None = None
) -> SaveResult:
    """Return a note submitted for review to its authors as a draft, with a comment they see
    in the editor."""
    return _review_decide(
        note_id=note_id, user=user, base_version=base_version, approve=False,
        comment=_review_comment(comment, required=True),
    )  # fmt: skip


@transaction.atomic
def note_review_withdraw(*, note_id: int, user, base_version: int) -> SaveResult:
    """An author takes back a review request: a draft's goes back to draft, a published
    note's submitted changes stay its working copy, unsubmitted."""
    note = editable_note(note_id=note_id, user=user)
    stale = stale_result(note, base_version)
    if stale is not None:
        return stale
    if not awaiting_review(note):
        raise ReviewError("This note is not awaiting review.")
    copy = note.working
    if note.status == Status.PUBLISHED and copy is not None:
        copy.submitted_by, copy.submitted_at = None, None
        copy.save(update_fields=["submitted_by", "submitted_at"])
        version_bump(note)
    else:
        note.status = Status.DRAFT
        note.version += 1
        note.full_clean()
        note.save()
    revision = revision_record(
        note=note,
        kind=NoteRevision.Kind.SAVE,
        user=user,
        base_version=base_version,
        message="Withdrew the review request",
        state=working_state(note),
    )
    return SaveResult(note=note, conflict=False, revision=revision)
