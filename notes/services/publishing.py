"""Publishing: publish a draft or a published note's changes (or submit them for review, or
schedule them), and unpublish; and the editor's click, which saves the form and publishes it
as one write."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from scidraft.site.generation import deferred_bumps
from scidraft.site.models import SiteSettings

from ..models import LiveBibliography, Note, NoteRevision, Status
from .authorship import AuthorshipError, consents_settle
from .editing import (
    SaveResult,
    editable_note,
    flushed_base_version,
    note_bibliographies_set,
    note_save,
    stale_result,
)
from .kept_entries import live_bibliography_keep
from .records import revision_record
from .references import live_references_publish, reference_update_copy, references_waiting
from .renders import FreshRender
from .working import (
    fields_apply,
    fields_from_state,
    version_bump,
    working_copy_publish,
    working_state,
)

SUBMITTED = "Submitted for review"  # the revision message of a review request
# Warnings that mean readers would see something broken: publishing them asks first.
PUBLISH_BLOCKERS = frozenset(
    {
        "cite-missing", "cite-unlisted", "bib-missing", "bib-private", "ref-unresolved",
        "duplicate-label", "math-error", "math-unclosed",
    }
)  # fmt: skip


def publish_problems(warnings: list[dict]) -> list[dict]:
    """The stored render warnings that publishing should not pass over silently."""
    return [warning for warning in warnings if warning.get("code") in PUBLISH_BLOCKERS]


@dataclass
class EditorWrite:
    """What an editor's Save or Publish did. `problems`: the saved render's PUBLISH_BLOCKERS
    warnings, so the note was saved and not published until confirmed; `not_published`: why
    the saved note's publish was refused (an authorship waiting for consent)."""

    result: SaveResult
    problems: list[dict] | None = None
    not_published: str = ""


def note_save_and_publish(
    *,
    note_id: int,
    user,
    base_version: int,
    fields: dict,
    bibliographies: list | None = None,
    publish: bool = False,
    confirmed: bool = False,
) -> EditorWrite:
    """The editor's Save (`publish` false) or Publish: save `fields` and, if given, the
    default `bibliographies`, then publish unless the saved render has PUBLISH_BLOCKERS
    warnings and the user has not `confirmed` them. The publish replaces the save's revision,
    so a click is one revision.

    Save and publish commit together: readers' cached pages turn over once, and the writer
    waits out one generation lease (scidraft.site.generation), not two. The bump is made last,
    so the site-wide generation row stays locked from there to the commit only, not through
    the render: other authors' saves wait on it. A refused publish leaves the save standing:
    PermissionDenied is raised after it commits; an authorship waiting for consent is told in
    `not_published`."""
    write = EditorWrite(result=None)
    refused = None
    with transaction.atomic(), deferred_bumps():
        result = note_save(note_id=note_id, user=user, base_version=base_version, fields=fields)
        write.result = result
        if result.conflict:
            return write
        if bibliographies is not None:
            note_bibliographies_set(note_id=note_id, user=user, bibfile_ids=bibliographies)
            result.note = Note.objects.get(pk=note_id)
        if not publish:
            return write
        saved = Note.objects.get(pk=note_id)
        if not confirmed:
            write.problems = publish_problems(saved.editor_copy.render_warnings) or None
            if write.problems:
                return write
        try:
            write.result = note_publish(
                note_id=note_id,
                user=user,
                base_version=saved.version,
                saved=result.revision,
                fresh=result.fresh,
            )
        except (PermissionDenied, AuthorshipError) as error:
            refused = error
    if isinstance(refused, AuthorshipError):
        write.not_published = str(refused)
        write.result.note = Note.objects.get(pk=note_id)
    elif refused is not None:
        raise refused
    return write


@transaction.atomic
def note_publish(
    *,
    note_id: int,
    user,
    base_version: int,
    saved: NoteRevision | None = None,
    fresh: FreshRender | None = None,
) -> SaveResult:
    """Publish what the note's authors edit (a future date schedules it).

    A draft becomes the live version; a published note's working copy replaces it ("Publish
    changes"). When the site requires review, a user without notes.review_note submits
    either for review instead, and the live version stays as it is until an Editor approves.
    A published note without changes whose cited files changed since it went live publishes
    (or submits) its reference lists as the files have them now (notes.live_references).
    No version goes public naming an author with an account who has not confirmed (an
    Editor's publish confirms for them). Text typed together is saved first, so what is
    published, and the optimistic lock, include it. `saved` is the revision of the save the
    same click made just before: the publish (or the review request) takes its place, and
    `fresh` the working copy's render it made, stored rather than made again."""
    if not user.has_perm("notes.publish_note"):
        raise PermissionDenied("You may not publish notes.")
    note = editable_note(note_id=note_id, user=user)
    base_version = flushed_base_version(note, base_version)
    stale = stale_result(note, base_version)
    if stale is not None:
        return stale
    review = SiteSettings.objects.current().require_review and not user.has_perm(
        "notes.review_note"
    )
    copy = note.working
    references_only = note.status == Status.PUBLISHED and copy is None
    if references_only and not references_waiting(note):
        return SaveResult(note=note, conflict=False, revision=None)  # nothing unpublished
    state = working_state(note)
    if review:
        if references_only:
            reference_update_copy(note, user)
        return _submit(note, user, base_version, saved)
    consents_settle(note=note, handles=state["authors"], user=user)
    if copy is not None:
        working_copy_publish(note, fresh=fresh)
        message = "Published the changes"
    elif references_only:
        live_references_publish(note)
        version_bump(note)
        message = "Published the changed reference lists"
    else:
        note.status = Status.PUBLISHED
        note.version += 1
        note.full_clean()
        note.save()
        live_bibliography_keep(note)
        message = ""
    revision = revision_record(
        note=note,
        kind=NoteRevision.Kind.PUBLISH,
        user=user,
        base_version=base_version,
        message=message,
        replacing=saved,
    )
    return SaveResult(note=note, conflict=False, revision=revision)


def _submit(note, user, base_version: int, saved: NoteRevision | None) -> SaveResult:
    """A review request: a draft's status becomes "review"; a published note's working copy is
    marked submitted. Either way readers see nothing new."""
    copy = note.working
    if copy is not None:
        copy.submitted_by, copy.submitted_at = user, timezone.now()
        copy.save(update_fields=["submitted_by", "submitted_at"])
        version_bump(note)
    else:
        note.status = Status.REVIEW
        note.version += 1
        note.full_clean()
        note.save()
    revision = revision_record(
        note=note,
        kind=NoteRevision.Kind.SAVE,
        user=user,
        base_version=base_version,
        message=SUBMITTED,
        state=working_state(note),
        replacing=saved,
    )
    return SaveResult(note=note, conflict=False, revision=revision)


@transaction.atomic
def note_unpublish(*, note_id: int, user, base_version: int) -> SaveResult:
    """Back to draft: readers no longer see it (also withdraws a review request). A published
    note's unpublished changes become the draft, so nothing its authors wrote is lost (text
    typed together included: it is saved first)."""
    note = editable_note(note_id=note_id, user=user)
    base_version = flushed_base_version(note, base_version)
    stale = stale_result(note, base_version)
    if stale is not None:
        return stale
    copy = note.working
    if copy is not None:
        state = working_state(note)
        copy.delete()
        note._state.fields_cache.pop("working_copy", None)
        note.status = Status.DRAFT
        fields_apply(note, fields_from_state(state))
    else:
        note.status = Status.DRAFT
        note.version += 1
        note.full_clean()
        note.save()
    LiveBibliography.objects.filter(note=note).delete()  # a draft has no live version
    revision = revision_record(
        note=note, kind=NoteRevision.Kind.UNPUBLISH, user=user, base_version=base_version
    )
    return SaveResult(note=note, conflict=False, revision=revision)
