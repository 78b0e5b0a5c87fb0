"""Review (site setting "require review"): an Editor approves a note or sends it back."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction

from ..models import Note, NoteRevision, ReviewComment, Status
from .editing import SaveResult, stale_result
from .records import revision_record

REVIEW_COMMENT_MAX_CHARS = 10_000


class ReviewError(Exception):
    """A review action that does not apply to the note as it stands; the message says why."""


def _reviewable_note(*, note_id: int, user) -> Note:
    """The note, row-locked, if `user` may review notes; PermissionDenied otherwise."""
    if not (user.is_authenticated and user.is_active and user.has_perm("notes.review_note")):
        raise PermissionDenied("Only editors review notes.")
    note = Note.objects.select_for_update().get(pk=note_id)
    if note.status != Status.REVIEW:
        raise ReviewError(f"This note is not awaiting review: it is {note.get_status_display()}.")
    return note


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


def _review_decide(
    *, note_id: int, user, base_version: int | None, status: str, kind: str, comment: str
) -> SaveResult:
    """A reviewer's decision: the note's new status, its revision and the ReviewComment. With
    `base_version`, a note changed since the reviewer read it is left alone (a conflict)."""
    note = _reviewable_note(note_id=note_id, user=user)
    if base_version is not None:
        stale = stale_result(note, base_version)
        if stale is not None:
            return stale
    base = note.version
    note.status = status
    note.version += 1
    note.full_clean()
    note.save()
    approved = kind == ReviewComment.Kind.APPROVE
    revision = revision_record(
        note=note,
        kind=NoteRevision.Kind.PUBLISH if approved else NoteRevision.Kind.UNPUBLISH,
        user=user,
        base_version=base,
        message=f"{'Approved' if approved else 'Sent back'} by {_reviewer_name(user)}",
    )
    ReviewComment.objects.create(note=note, reviewer=user, kind=kind, body=comment)
    return SaveResult(note=note, conflict=False, revision=revision)


@transaction.atomic
def note_review_approve(
    *, note_id: int, user, base_version: int | None = None, comment: str = ""
) -> SaveResult:
    """Publish a note submitted for review (a future date schedules it). With `base_version`,
    a note changed since the reviewer read it is not approved: the result is a conflict."""
    return _review_decide(
        note_id=note_id, user=user, base_version=base_version, status=Status.PUBLISHED,
        kind=ReviewComment.Kind.APPROVE, comment=_review_comment(comment, required=False),
    )  # fmt: skip


@transaction.atomic
def note_review_send_back(
    *, note_id: int, user, comment: str, base_version: int | None = None
) -> SaveResult:
    """Return a note submitted for review to its authors as a draft, with a comment they see
    in the editor."""
    return _review_decide(
        note_id=note_id, user=user, base_version=base_version, status=Status.DRAFT,
        kind=ReviewComment.Kind.SEND_BACK, comment=_review_comment(comment, required=True),
    )  # fmt: skip
