"""Reference lists waiting (site setting "require review"): the published notes a person may
edit whose cited bibliography files changed since they went live, and how each list would
change. Readers keep the published lists until "Publish changes" goes through review."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from notes.live_references import reference_changes
from notes.models import Note
from notes.services.references import references_waiting
from scidraft.site.meta import PageMeta

# Notes shown a page: each compares its cited entries with the files (a few queries).
NOTES_PER_PAGE = 20


def waiting_notes(user):
    """The notes `user` may edit whose reference lists wait, newest first."""
    return (
        Note.objects.editable_by(user)
        .references_waiting()
        .with_working_copy_state()
        .order_by("-date", "pk")
    )


def waiting_items(notes) -> list[dict]:
    """Each note (waiting_notes') with its reference changes, for editor/_reference_changes."""
    return [
        {"note": note, "changes": reference_changes(note), "in_review": note.changes_in_review}
        for note in notes
    ]


def note_reference_changes(note: Note) -> list:
    """How the note's reference lists would change if published again; none unless they wait."""
    return reference_changes(note) if references_waiting(note) else []


@never_cache
@login_required
@require_GET
def reference_changes_list(request):
    page = Paginator(waiting_notes(request.user), NOTES_PER_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "editor/reference_changes.html",
        {
            "items": waiting_items(page.object_list),
            "page": page,
            "reviewer": request.user.has_perm("notes.review_note"),
            "meta": PageMeta(title="Reference lists waiting | SciDraft editor", noindex=True),
            "assets": {},
        },
    )
