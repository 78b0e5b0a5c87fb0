"""An Editor's reset of a note's live document (collaboration.recovery), offered on the note's
revisions page when the document cannot be opened."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from collaboration.recovery import live_document_refusal, live_document_reset
from notes import services
from notes.models import Note


def live_refusal(user, note: Note) -> str | None:
    """Why the note's live document is refused, for an Editor (who may reset it); None
    otherwise, and for anyone else (nothing is loaded for them)."""
    return live_document_refusal(note.pk) if services.is_editor(user) else None


@never_cache
@login_required
@require_POST
def live_reset(request, note_id: int):
    """POST: the service checks that the person is an Editor."""
    note = get_object_or_404(Note.objects.editable_by(request.user), pk=note_id)
    deleted = live_document_reset(note_id=note.pk, user=request.user)
    messages.success(
        request,
        f"The live document was started again from the saved text ({deleted:,} stored "
        "changes deleted). Editors who had the note open reload it to write together.",
    )
    return redirect("editor:revisions", note_id=note.pk)
