"""A note's revisions in the editor: who saved when, the diff of any two, and restoring one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from notes import services
from notes.models import Note, NoteRevision, Status
from scidraft.site.meta import PageMeta

from .live import live_refusal
from .revision_diff import revision_diff


def _meta(title: str) -> PageMeta:
    return PageMeta(title=f"{title} | SciDraft editor", noindex=True)


def _editable(request, note_id: int) -> Note:
    return get_object_or_404(Note.objects.editable_by(request.user), pk=note_id)


def _diff_markup(compared):
    """A RevisionDiff's table, for a template."""
    # Every piece of the revisions' text is escaped by revision_diff; the rest is our markup.
    return mark_safe(compared.html) if compared.html else None  # noqa: S308


@never_cache
@login_required
@require_GET
def revision_list(request, note_id: int):
    """Who saved when; the diff of any two revisions, picked in the list (?a=&b= numbers)."""
    note = _editable(request, note_id)
    # The list needs no bodies (each up to NOTE_BODY_MAX_BYTES): only the two compared are read.
    revisions = list(
        note.revisions.select_related("created_by").defer("body", "metadata").order_by("-number")
    )
    numbers = [revision.number for revision in revisions]
    for revision, before in zip(revisions, [*numbers[1:], None], strict=True):
        revision.previous_number = before  # for its "Changes" link
    diff = compared = None
    try:
        a, b = int(request.GET.get("a", "")), int(request.GET.get("b", ""))
    except ValueError:
        a = b = None
    if a in numbers and b in numbers:
        bodies = dict(note.revisions.filter(number__in=[a, b]).values_list("number", "body"))
        compared = revision_diff(bodies[a], bodies[b], f"Revision {a}", f"Revision {b}")
        diff = _diff_markup(compared)
    else:
        # Preselected: the newest revision against the one before it.
        a, b = (numbers[1] if len(numbers) > 1 else None), (numbers[0] if numbers else None)
    return render(
        request,
        "editor/revisions.html",
        {
            "note": note,
            "revisions": revisions,
            "diff": diff,
            "compared": compared,
            "a": a,
            "b": b,
            "live_refusal": live_refusal(request.user, note),
            "meta": _meta(f"Revisions of {note.title or note.slug}"),
            "assets": {},
        },
    )


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def revision_restore_view(request, note_id: int, revision_id: int):
    """GET asks first: what restoring would change in the text being edited, and where it goes
    (a published note's working copy, never the live version). POST restores."""
    note = _editable(request, note_id)
    revision = get_object_or_404(NoteRevision, pk=revision_id, note=note)
    if request.method == "GET":
        state = services.working_state(note)
        compared = revision_diff(
            state["body"], revision.body, "The text being edited", f"Revision {revision.number}"
        )
        return render(
            request,
            "editor/restore_confirm.html",
            {
                "note": note,
                "revision": revision,
                "title_changes": state["title"] != revision.title,
                "current_title": state["title"],
                "diff": _diff_markup(compared),
                "compared": compared,
                "published": note.status == Status.PUBLISHED,
                "meta": _meta(f"Restore revision {revision.number}?"),
                "assets": {},
            },
        )
    result = services.revision_restore(revision_id=revision.pk, user=request.user)
    if result.note.status == Status.PUBLISHED:
        messages.success(
            request,
            f"Restored revision {revision.number} as unpublished changes: readers see the "
            "published version until you publish them.",
        )
    else:
        messages.success(request, f"Restored revision {revision.number}.")
    return redirect("editor:edit", note_id=note.pk)
