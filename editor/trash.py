"""Deleting a note (after a confirmation page) and the trash an Editor restores from. Writes go
through notes.services (note_delete, note_restore), which check who may."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from notes import services
from notes.models import Note, Status
from scidraft.site.meta import PageMeta


def _meta(title: str) -> PageMeta:
    return PageMeta(title=f"{title} | SciDraft editor", noindex=True)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def note_delete(request, note_id: int):
    """GET asks first (what deleting does to this note); POST moves it to the trash."""
    note = get_object_or_404(Note.objects.editable_by(request.user), pk=note_id)
    editor = services.is_editor(request.user)
    if request.method == "POST":
        try:
            services.note_delete(note_id=note.pk, user=request.user)
        except services.TrashError as error:
            messages.error(request, str(error))
            return redirect("editor:edit", note.pk)
        except PermissionDenied:
            raise Http404 from None
        messages.success(
            request,
            f"“{note.title or note.slug}” is in the trash; an Editor can restore it for "
            f"{services.TRASH_DAYS} days.",
        )
        return redirect("editor:dashboard")
    published = note.status == Status.PUBLISHED
    return render(
        request,
        "editor/delete_confirm.html",
        {
            "note": note,
            "published": published,
            "refused": published and not editor,
            "days": services.TRASH_DAYS,
            "meta": _meta("Delete note"),
            "assets": {},
        },
    )


@never_cache
@login_required
@require_GET
def trash_list(request):
    """Notes in the trash, newest deletion first: Editors and Admins only."""
    if not services.is_editor(request.user):
        raise PermissionDenied("Only an Editor sees the trash.")
    notes = Note.objects.trashed().select_related("deleted_by")
    return render(
        request,
        "editor/trash.html",
        {"notes": list(notes), "days": services.TRASH_DAYS, "meta": _meta("Trash"), "assets": {}},
    )


@login_required
@require_POST
def trash_restore(request, note_id: int):
    try:
        note = services.note_restore(note_id=note_id, user=request.user)
    except services.TrashError:
        raise Http404 from None
    messages.success(request, f"“{note.title or note.slug}” is restored, as a draft.")
    return redirect("editor:trash")
