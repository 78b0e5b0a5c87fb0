"""What the editor's completion needs from the site beyond the cite search
(editor/bibliographies.py): the labels of other notes, for \\ref{slug:label}."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from notes.models import Note

LABEL_NOTES = 30  # notes searched per request
LABEL_RESULTS = 100


def referable_notes(user):
    """Notes whose labels an author may point at: the published ones and those they may edit."""
    return Note.objects.filter(
        Q(pk__in=Note.objects.published().values("pk"))
        | Q(pk__in=Note.objects.editable_by(user).values("pk"))
    )


@never_cache
@login_required
@require_GET
def reference_labels(request, note_id: int):
    """JSON `{results: [{ref, text, title}], more}`: `slug:label` of other notes for \\ref{}.

    ?q= is what follows `\\ref{`: before a colon it matches slugs and titles, after one it is
    the slug, then the start of a label. One query for the note, one for the labels."""
    note = get_object_or_404(Note.objects.editable_by(request.user), pk=note_id)
    query = request.GET.get("q", "").strip()[:200]
    slug_part, colon, label_part = query.partition(":")
    notes = referable_notes(request.user).exclude(pk=note.pk)
    if colon:
        notes = notes.filter(slug=slug_part)
    elif query:
        notes = notes.filter(Q(slug__icontains=query) | Q(title__icontains=query))
    rows = notes.order_by("-updated_at").values_list("slug", "title", "render_labels")[
        : LABEL_NOTES + 1
    ]
    results = []
    for slug, title, labels in list(rows)[:LABEL_NOTES]:
        for label, target in (labels or {}).items():
            if colon and not label.startswith(label_part):
                continue
            text = target.get("text", "") if isinstance(target, dict) else ""
            results.append({"ref": f"{slug}:{label}", "text": str(text), "title": title})
    more = len(rows) > LABEL_NOTES or len(results) > LABEL_RESULTS
    return JsonResponse({"results": results[:LABEL_RESULTS], "more": more})
