"""The web editor (issue 6). Thin views: every write goes through notes.services, and every
view that takes a note looks it up in Note.objects.editable_by(request.user): 404 otherwise."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from bibliography.models import BibFile
from notes import services
from notes.models import Author, Note, NoteRevision, Status, Tag
from notes.rendering import context_for
from scidraft.markup import render as markup_render
from scidraft.markup.rendered import RenderWarning
from scidraft.site.caching import deferred_bumps
from scidraft.site.meta import PageMeta

from .forms import NoteEditorForm
from .revision_diff import revision_diff

STATUS_FILTERS = ("draft", "review", "scheduled", "published")
EDITOR_ASSETS = {"math": True, "algorithm": True, "code": True}
# Warnings that mean readers would see something broken: publishing them asks first.
PUBLISH_BLOCKERS = frozenset(
    {
        "cite-missing", "cite-unlisted", "bib-missing", "ref-unresolved", "duplicate-label",
        "math-error", "math-unclosed",
    }
)  # fmt: skip


def _meta(title: str) -> PageMeta:
    return PageMeta(title=f"{title} | SciDraft editor", noindex=True)


def _editable(request, note_id: int) -> Note:
    return get_object_or_404(Note.objects.editable_by(request.user), pk=note_id)


def problems_html(warnings) -> str:
    """The preview's problems list: line and message of each warning, escaped."""
    items = format_html_join(
        "",
        '<li data-line="{}"><span class="editor-problem-line">line {}</span> {}</li>',
        ((w.line or 0, w.line or "?", w.message) for w in warnings),
    )
    return format_html(
        '<div class="editor-problems" data-count="{}"><ul>{}</ul></div>', len(warnings), items
    )


def publish_problems(warnings: list[dict]) -> list[dict]:
    """The stored render warnings that publishing should not pass over silently."""
    return [warning for warning in warnings if warning.get("code") in PUBLISH_BLOCKERS]


def _stored_warnings(note: Note) -> list[RenderWarning]:
    return [
        RenderWarning(w.get("line") or 0, w.get("code", ""), w.get("message", ""))
        for w in note.render_warnings
    ]


@never_cache
@login_required
@require_GET
def dashboard(request):
    """The author's notes (own and co-authored), searchable and filtered by status."""
    user = request.user
    notes = (
        Note.objects.editable_by(user)
        .filter(Q(created_by=user) | Q(authors__user=user))
        .distinct()
        .only("pk", "slug", "title", "status", "date", "updated_at", "created_by")
        .order_by("-updated_at")
    )
    query = request.GET.get("q", "").strip()
    if query:
        notes = notes.filter(title__icontains=query)
    status = request.GET.get("status", "")
    now = timezone.now()
    if status == "scheduled":
        notes = notes.filter(status=Status.PUBLISHED, date__gt=now)
    elif status == "published":
        notes = notes.filter(status=Status.PUBLISHED, date__lte=now)
    elif status in STATUS_FILTERS:
        notes = notes.filter(status=status)
    rows = list(notes)
    sections = {
        "Drafts": [n for n in rows if n.status == Status.DRAFT],
        "In review": [n for n in rows if n.status == Status.REVIEW],
        "Scheduled": [n for n in rows if n.status == Status.PUBLISHED and n.date > now],
        "Published": [n for n in rows if n.status == Status.PUBLISHED and n.date <= now],
    }
    return render(
        request,
        "editor/dashboard.html",
        {
            "sections": sections,
            "query": query,
            "status": status,
            "status_filters": STATUS_FILTERS,
            "meta": _meta("My notes"),
            "assets": {},
        },
    )


@never_cache
@login_required
@require_POST
def note_new(request):
    note = services.note_create(user=request.user, title=request.POST.get("title", ""))
    return redirect("editor:edit", note_id=note.pk)


def _editor_page(request, note, form, *, conflict=None, confirm=None, autosave=None, status=200):
    warnings = _stored_warnings(note)
    return render(
        request,
        "editor/edit.html",
        {
            "note": note,
            "form": form,
            "conflict": conflict,
            "confirm_problems": confirm,
            "autosave": autosave,
            # Whether the textarea holds the text of the stored render shown as the preview.
            "preview_current": not form.is_bound and autosave is None,
            "future_date": note.date > timezone.now(),
            "warnings": warnings,
            # The stored render of the saved text: the preview without JavaScript, and what
            # the page shows before the first live preview arrives. Sanitised at render time.
            "preview_html": mark_safe(note.rendered_html),  # noqa: S308
            "tag_options": Tag.objects.order_by("name").values_list("name", flat=True),
            "author_options": Author.objects.filter(is_active=True).values_list("handle", "name"),
            "bib_options": BibFile.objects.usable_by(request.user, note=note).values_list(
                "name", flat=True
            ),
            "meta": _meta(note.title or note.slug),
            "assets": EDITOR_ASSETS,
        },
        status=status,
    )


def _fresh_form(request, note: Note, revision: NoteRevision | None = None) -> NoteEditorForm:
    initial = NoteEditorForm.initial_for(note)
    if revision is not None:
        initial.update(title=revision.title, body=revision.body)
    return NoteEditorForm(initial=initial, note=note, user=request.user)


def pending_autosave(note: Note) -> NoteRevision | None:
    """The autosave of a published note made on its current version and not published yet
    (autosaves never replace the public text): the editor continues from it."""
    if note.status != Status.PUBLISHED:
        return None  # a draft's autosave is the note itself
    latest = note.revisions.order_by("-number").first()
    if (
        latest is None
        or latest.kind != NoteRevision.Kind.AUTOSAVE
        or latest.base_version != note.version
        or (latest.title, latest.body) == (note.title, note.body)
    ):
        return None
    return latest


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def note_edit(request, note_id: int):
    """The editor: GET shows the form; POST saves, publishes or unpublishes.

    Publishing a note whose render has PUBLISH_BLOCKERS warnings saves it, then shows the
    problems and a "Publish anyway" button (confirm=1) instead of publishing."""
    note = _editable(request, note_id)
    if request.method == "GET":
        autosave = None if request.GET.get("published") else pending_autosave(note)
        return _editor_page(request, note, _fresh_form(request, note, autosave), autosave=autosave)
    confirmed = request.POST.get("confirm") == "1"
    action = "publish" if confirmed else request.POST.get("action", "save")
    form = NoteEditorForm(request.POST, note=note, user=request.user)
    if not form.is_valid():
        return _editor_page(request, note, form, status=400)
    base_version = form.cleaned_data["base_version"]
    if action == "unpublish":
        result = services.note_unpublish(
            note_id=note.pk, user=request.user, base_version=base_version
        )
    else:
        problems = refused = None
        # Save and publish commit together: readers' cached pages turn over once, and the
        # writer waits out one generation lease (scidraft.site.caching), not two. The bump is
        # made last, so the site-wide generation row stays locked from there to the commit
        # only, not through the render: other authors' saves wait on it.
        with transaction.atomic(), deferred_bumps():
            result = services.note_save(
                note_id=note.pk, user=request.user, base_version=base_version,
                fields=form.note_fields(),
            )  # fmt: skip
            if not result.conflict and form.bibliographies_changed():
                services.note_bibliographies_set(
                    note_id=note.pk,
                    user=request.user,
                    bibfile_ids=form.cleaned_data["bibliographies"],
                )
                result.note.refresh_from_db()
            if not result.conflict and action == "publish":
                problems = None if confirmed else publish_problems(result.note.render_warnings)
                if not problems:
                    try:
                        result = services.note_publish(
                            note_id=note.pk, user=request.user, base_version=result.note.version
                        )
                    except PermissionDenied as error:
                        refused = error  # the save stands: only the publish is refused
        if refused is not None:
            raise refused
        if problems:
            saved = result.note
            return _editor_page(request, saved, _fresh_form(request, saved), confirm=problems)
    if result.conflict:
        current = result.note
        yours = result.revision
        conflict = {
            "yours_title": yours.title if yours else form.cleaned_data["title"],
            "yours_body": yours.body if yours else form.cleaned_data["body"],
            "revision": yours,
            "theirs": current,
        }
        return _editor_page(
            request, current, _fresh_form(request, current), conflict=conflict, status=409
        )
    done = {
        "publish": "Submitted for review." if result.note.status == Status.REVIEW else "Published.",
        "unpublish": "Unpublished: back to draft.",
    }.get(action, "Saved.")
    messages.success(request, done)
    response = redirect("editor:edit", note_id=note.pk)
    # The version to save on next, as the autosave's JSON gives it: a client without the page
    # (a script, the load test) can go on saving without loading the editor again.
    response["X-Note-Version"] = str(result.note.version)
    return response


@never_cache
@login_required
@require_POST
def note_preview(request, note_id: int):
    """markdownx's preview: the published renderer in the note's context, with its problems."""
    note = _editable(request, note_id)
    source = request.POST.get("content", "")
    rendered = markup_render(source, context_for(note, reader=request.user))
    # Trusted: scidraft.markup sanitises its output; the problems list is escaped.
    return HttpResponse(mark_safe(problems_html(rendered.warnings) + rendered.html))  # noqa: S308


@never_cache
@login_required
@require_POST
def note_autosave(request, note_id: int):
    """JSON {body, title, base_version} → {status: "saved", version} or a 409 conflict."""
    note = _editable(request, note_id)
    try:
        data = json.loads(request.body or b"{}")
        base_version = int(data["base_version"])
        fields = {"body": str(data["body"])}
        if "title" in data:
            fields["title"] = str(data["title"])[:300]
    except (ValueError, KeyError, TypeError):
        return JsonResponse({"status": "error", "error": "Send body and base_version."}, status=400)
    try:
        result = services.note_save(
            note_id=note.pk, user=request.user, base_version=base_version, fields=fields,
            kind=NoteRevision.Kind.AUTOSAVE,
        )  # fmt: skip
    except ValidationError as error:  # the body is over NOTE_BODY_MAX_BYTES: nothing written
        return JsonResponse({"status": "error", "error": " ".join(error.messages)}, status=400)
    if result.conflict:
        return JsonResponse(
            {
                "status": "conflict",
                "conflict": {"version": result.note.version, "revision": result.revision.number},
            },
            status=409,
        )
    return JsonResponse(
        {"status": "saved", "version": result.note.version, "revision": result.revision.number}
    )


@never_cache
@login_required
@require_GET
def revision_list(request, note_id: int):
    """Who saved when, and the diff between any two revisions (?a=&b= numbers)."""
    note = _editable(request, note_id)
    # The list needs no bodies (each up to NOTE_BODY_MAX_BYTES): only the two compared are read.
    revisions = list(
        note.revisions.select_related("created_by").defer("body", "metadata").order_by("-number")
    )
    numbers = {revision.number for revision in revisions}
    diff = diff_message = None
    try:
        a, b = int(request.GET.get("a", "")), int(request.GET.get("b", ""))
    except ValueError:
        a = b = None
    if a in numbers and b in numbers:
        bodies = dict(note.revisions.filter(number__in=[a, b]).values_list("number", "body"))
        compared = revision_diff(bodies[a], bodies[b], f"Revision {a}", f"Revision {b}")
        # Every line of the revisions is escaped (difflib's table, or revision_diff's own);
        # the labels are our own text.
        diff = mark_safe(compared.html) if compared.html else None  # noqa: S308
        diff_message = compared.message
    return render(
        request,
        "editor/revisions.html",
        {
            "note": note,
            "revisions": revisions,
            "diff": diff,
            "diff_message": diff_message,
            "a": a,
            "b": b,
            "meta": _meta(f"Revisions of {note.title or note.slug}"),
            "assets": {},
        },
    )


@never_cache
@login_required
@require_POST
def revision_restore_view(request, note_id: int, revision_id: int):
    note = _editable(request, note_id)
    revision = get_object_or_404(NoteRevision, pk=revision_id, note=note)
    services.revision_restore(revision_id=revision.pk, user=request.user)
    messages.success(request, f"Restored revision {revision.number}.")
    return redirect("editor:edit", note_id=note.pk)
