"""The review queue (site setting "require review"): notes Authors submitted, which an Editor or
Admin reads, then approves (publishes) or sends back with a comment. Writes go through
notes.services; users without notes.review_note get 403."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Max, Prefetch, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from notes import services
from notes.models import Author, Note, NoteAuthor, Status
from scidraft.markup import render as markup_render
from scidraft.site.meta import PageMeta
from scidraft.site.models import SiteSettings

from .references import note_reference_changes
from .revision_diff import revision_diff
from .views import for_reviewers

SUBMITTED = services.SUBMITTED  # the revision message of a review request
CHANGED = "The note changed since you opened it: read the current version before deciding."


def _meta(title: str) -> PageMeta:
    return PageMeta(title=f"{title} | SciDraft editor", noindex=True)


def _require_reviewer(user) -> None:
    if not user.has_perm("notes.review_note"):
        raise PermissionDenied("Only editors review notes.")


def _base_version(request) -> int | None:
    try:
        return int(request.POST.get("base_version", ""))
    except ValueError:
        return None


@never_cache
@login_required
@require_GET
def review_queue(request):
    """Notes awaiting review, oldest submission first."""
    _require_reviewer(request.user)
    notes = (
        Note.objects.awaiting_review()
        .with_working_copy_state()
        .annotate(submitted_at=Max("revisions__created_at", filter=Q(revisions__message=SUBMITTED)))
        .select_related("created_by")
        .prefetch_related(
            Prefetch("authorships", queryset=NoteAuthor.objects.select_related("author"))
        )
        .only("pk", "slug", "title", "status", "version", "date", "updated_at", "created_by")
        .order_by("submitted_at", "pk")
    )
    return render(
        request,
        "editor/review_queue.html",
        {
            "notes": list(notes),
            "require_review": SiteSettings.objects.current().require_review,
            "meta": _meta("Review queue"),
            "assets": {},
        },
    )


def _review_page(request, note: Note, *, comment: str = "", status: int = 200):
    """What would be published: a draft's text, or a published note's submitted changes (with
    what changes against the live version)."""
    state = services.working_state(note)
    rendered = markup_render(state["body"], services.working_context(note, reader=request.user))
    flags = rendered.flags
    copy = note.working
    authors = {a.handle: a for a in Author.objects.filter(handle__in=state["authors"])}
    return render(
        request,
        "editor/review_note.html",
        {
            "note": note,
            "state": state,
            "changes": copy if note.status == Status.PUBLISHED else None,
            "changed_fields": _changed_fields(note, state) if copy is not None else [],
            "reference_changes": note_reference_changes(note),
            "text_diff": _text_diff(note, state) if copy is not None else None,
            "awaiting": services.awaiting_review(note),
            "authors": [authors[h] for h in state["authors"] if h in authors],
            "unconfirmed": services.unconfirmed_authors(note, state["authors"]),
            "submitted": note.revisions.filter(message=SUBMITTED)
            .select_related("created_by")
            .first(),
            "history": note.review_comments.select_related("reviewer")[:20],
            # Trusted: scidraft.markup sanitises its output (the public page shows the same).
            "body": mark_safe(for_reviewers(request, rendered.html)),  # noqa: S308
            "warnings": rendered.warnings,
            "comment": comment,
            "comment_limit": services.REVIEW_COMMENT_MAX_CHARS,
            "meta": _meta(f"Review: {note.title or note.slug}"),
            "assets": {
                "math": flags.get("has_math", False),
                "code": flags.get("has_code", False),
                "algorithm": flags.get("has_algorithm", False),
                "mermaid": flags.get("has_mermaid", False),
            },
        },
        status=status,
    )


def _text_diff(note: Note, state: dict) -> dict:
    """The submitted text against the live version's, as the revision list compares two
    revisions: a reviewer reads what changed, not the whole note again."""
    compared = revision_diff(note.body, state["body"], "Published", "Submitted")
    # Every piece of both texts is escaped by revision_diff; the rest is its own markup.
    table = mark_safe(compared.html) if compared.html else None  # noqa: S308
    return {"html": table, "message": compared.message}


def _changed_fields(note: Note, state: dict) -> list[str]:
    """The names of the fields the submitted changes change, against the live version."""
    live = services.note_state(note)
    return [name for name in services.STATE_FIELDS if live.get(name) != state.get(name)]


@never_cache
@login_required
@require_GET
def review_note(request, note_id: int):
    """A read-only preview of the note as it would be published, with the decision forms."""
    _require_reviewer(request.user)
    return _review_page(request, get_object_or_404(Note, pk=note_id))


def _refused(request, note_id: int, message: str, comment: str, status: int):
    messages.error(request, message)
    # The reviewer's comment is kept in the form, so nothing typed is lost.
    return _review_page(
        request, get_object_or_404(Note, pk=note_id), comment=comment, status=status
    )


@never_cache
@login_required
@require_POST
def review_approve(request, note_id: int):
    _require_reviewer(request.user)
    note = get_object_or_404(Note, pk=note_id)
    comment = request.POST.get("comment", "")
    try:
        result = services.note_review_approve(
            note_id=note.pk, user=request.user, base_version=_base_version(request),
            comment=comment,
        )  # fmt: skip
    except (services.ReviewError, ValidationError) as error:
        return _refused(
            request, note.pk, " ".join(getattr(error, "messages", [str(error)])), comment, 409
        )
    if result.conflict:
        return _refused(request, note.pk, CHANGED, comment, 409)
    title = result.note.title or result.note.slug
    if result.note.is_scheduled:
        messages.success(
            request, f"Approved “{title}”: scheduled for {result.note.date:%Y-%m-%d %H:%M}."
        )
    else:
        messages.success(request, f"Approved and published “{title}”.")
    return redirect("editor:review")


@never_cache
@login_required
@require_POST
def review_send_back(request, note_id: int):
    _require_reviewer(request.user)
    note = get_object_or_404(Note, pk=note_id)
    comment = request.POST.get("comment", "")
    try:
        result = services.note_review_send_back(
            note_id=note.pk, user=request.user, comment=comment,
            base_version=_base_version(request),
        )  # fmt: skip
    except services.ReviewError as error:
        status = 400 if services.awaiting_review(note) else 409
        return _refused(request, note.pk, str(error), comment, status)
    if result.conflict:
        return _refused(request, note.pk, CHANGED, comment, 409)
    messages.success(
        request, f"Sent “{result.note.title or result.note.slug}” back to its authors."
    )
    return redirect("editor:review")
