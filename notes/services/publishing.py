"""Publishing: publish (or submit for review, or schedule) and unpublish."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction

from scidraft.site.models import SiteSettings

from ..models import NoteRevision, Status
from .editing import SaveResult, editable_note, stale_result
from .records import revision_record


@transaction.atomic
def note_publish(*, note_id: int, user, base_version: int) -> SaveResult:
    """Publish (a future date schedules it). When the site requires review, a user without
    notes.review_note submits the note for review instead; a reviewer's publish approves it."""
    if not user.has_perm("notes.publish_note"):
        raise PermissionDenied("You may not publish notes.")
    note = editable_note(note_id=note_id, user=user)
    stale = stale_result(note, base_version)
    if stale is not None:
        return stale
    review = SiteSettings.objects.current().require_review and not user.has_perm(
        "notes.review_note"
    )
    note.status = Status.REVIEW if review else Status.PUBLISHED
    note.version += 1
    note.full_clean()
    note.save()
    if review:
        kind, message = NoteRevision.Kind.SAVE, "Submitted for review"
    else:
        kind, message = NoteRevision.Kind.PUBLISH, ""
    revision = revision_record(
        note=note, kind=kind, user=user, base_version=base_version, message=message
    )
    return SaveResult(note=note, conflict=False, revision=revision)


@transaction.atomic
def note_unpublish(*, note_id: int, user, base_version: int) -> SaveResult:
    """Back to draft: readers no longer see it (also withdraws a review request)."""
    note = editable_note(note_id=note_id, user=user)
    stale = stale_result(note, base_version)
    if stale is not None:
        return stale
    note.status = Status.DRAFT
    note.version += 1
    note.full_clean()
    note.save()
    revision = revision_record(
        note=note, kind=NoteRevision.Kind.UNPUBLISH, user=user, base_version=base_version
    )
    return SaveResult(note=note, conflict=False, revision=revision)
