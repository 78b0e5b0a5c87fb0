"""The web editor's note page: a new note, the editor (save, publish and the rest), autosave;
and how rendered notes and their problems are shown to authors and reviewers. Thin views: every
write goes through notes.services, and every view that takes a note looks it up in
Note.objects.editable_by(request.user): 404 otherwise. The editor's other surfaces are modules
beside this one: dashboard, previews, revisions, authorship, review, trash, bibliographies."""

from __future__ import annotations

import datetime as dt
import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Max, Q
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from bibliography.models import BibFile
from collaboration import documents, presence
from notes import services
from notes.models import Author, Note, NoteRevision, Status, Tag
from notes.rendering import environment_kinds, render_incomplete
from scidraft.markup import ENGINE_VERSION
from scidraft.markup import render as markup_render
from scidraft.markup.external_images import mark_external_images
from scidraft.markup.rendered import RenderWarning
from scidraft.markup.shortcodes import SHORTCODES
from scidraft.site.meta import PageMeta

from .forms import NoteEditorForm
from .references import note_reference_changes

EDITOR_ASSETS = {"math": True, "algorithm": True, "code": True}


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


def for_reviewers(request, html: str) -> str:
    """Rendered note HTML as the editor, review and admin pages show it: images from other
    sites are not loaded, a note says why (their CSP blocks them as well)."""
    return mark_external_images(html, site_host=request.get_host())


def _stored_warnings(note: Note) -> list[RenderWarning]:
    return [
        RenderWarning(w.get("line") or 0, w.get("code", ""), w.get("message", ""))
        for w in note.render_warnings
    ]


@never_cache
@login_required
@require_POST
def note_new(request):
    note = services.note_create(user=request.user, title=request.POST.get("title", ""))
    return redirect("editor:edit", note_id=note.pk)


def _editor_page(request, note, form, *, conflict=None, confirm=None, status=200):
    copy = note.editor_copy
    if copy.render_version != ENGINE_VERSION or render_incomplete(copy):
        # A working copy rendered by an older engine, or cut short by time: its authors see
        # it, and it is rendered again when they open it.
        services.working_copy_refresh(note=note)
        copy = note.editor_copy
    warnings = _stored_warnings(copy)
    state = form.state
    reference_changes = note_reference_changes(note)
    preview_html = copy.rendered_html
    if reference_changes and note.working is None:
        # The live version's stored render reads the entries kept with it; its authors
        # preview the reference lists the files give now.
        context = services.working_context(note, reader=request.user)
        preview_html = markup_render(note.body, context).html
    return render(
        request,
        "editor/edit.html",
        {
            "note": note,
            # People count revisions (the list's numbers); note.version is the save lock.
            "revision": note.revisions.aggregate(last=Max("number"))["last"] or 0,
            "working": note.working,
            "form": form,
            "conflict": conflict,
            "confirm_problems": confirm,
            # Whether the textarea holds the text of the stored render shown as the preview.
            "preview_current": not form.is_bound,
            "future_date": dt.datetime.fromisoformat(state["date"]) > timezone.now(),
            "warnings": warnings,
            # The stored render of the saved text: the preview without JavaScript, and what
            # the page shows before the first live preview arrives. Sanitised at render time.
            "preview_html": mark_safe(for_reviewers(request, preview_html)),  # noqa: S308
            "bylines": _bylines(note, state["authors"]),
            "reference_changes": reference_changes,
            "reviewer": request.user.has_perm("notes.review_note"),
            "tag_options": Tag.objects.offered_to(request.user)
            .order_by("name")
            .values_list("name", flat=True),
            "author_options": _author_options(request.user, state["authors"]),
            "bib_options": BibFile.objects.usable_by(request.user, note=note).values_list(
                "name", flat=True
            ),
            # An attribute, not a <script> data block: the page has no inline script at all.
            "completion": json.dumps(_completion_data()),
            "meta": _meta(note.title or note.slug),
            "assets": EDITOR_ASSETS,
            "live": _live_editing(request, note),
        },
        status=status,
    )


def _live_editing(request, note) -> dict | None:
    """What the page's script needs to join the note's shared document, or None
    where live editing is off. The colour follows the user id, so a person keeps theirs on
    every note and two co-authors with neighbouring ids never share one."""
    if not settings.LIVE_EDITING:
        return None
    person = presence.person(request.user)
    return {
        "url": f"/live/notes/{note.pk}/",
        "name": person.name,
        "color": person.color,
        "user": person.user_id,
        # The browser keeps one offline store per live document (editor/codemirror/live.js).
        "generation": documents.generation(note.pk) or 0,
    }


def _author_options(user, handles: list[str]):
    """The handles the authors field offers: every active author to Editors; to an Author,
    those with an account who can confirm (notes.services.authorship) and those named already."""
    authors = Author.objects.filter(is_active=True)
    if not services.is_editor(user):
        authors = authors.filter(
            Q(user__isnull=False, user__is_active=True) | Q(handle__in=handles)
        )
    return authors.values_list("handle", "name")


def _completion_data() -> dict:
    """What the editor completes from the site without asking again: the environment kinds
    (after `:::`) and the shortcodes with their parameters (after `{{<`)."""
    return {
        "environments": [
            {"key": kind.key, "label": kind.label, "numbered": kind.numbered}
            for kind in environment_kinds()
        ],
        "shortcodes": [
            {"name": name, "summary": sig.summary, "params": list(sig.params), "paired": sig.paired}
            for name, sig in SHORTCODES.items()
        ],
    }


def _bylines(note: Note, handles: list[str]) -> list[dict]:
    """The authors being edited, each with whether they still have to confirm."""
    authors = {a.handle: a for a in Author.objects.filter(handle__in=handles)}
    waiting = {author.pk for author in services.unconfirmed_authors(note, handles)}
    return [
        {"author": authors[handle], "waiting": authors[handle].pk in waiting}
        for handle in handles
        if handle in authors
    ]


def _fresh_form(request, note: Note) -> NoteEditorForm:
    state = services.working_state(note)
    return NoteEditorForm(
        initial=NoteEditorForm.initial_for(note, state), note=note, user=request.user, state=state
    )


def _bound_form(request, note: Note) -> NoteEditorForm:
    return NoteEditorForm(
        request.POST, note=note, user=request.user, state=services.working_state(note)
    )


DONE = {
    "unpublish": "Unpublished: back to draft.",
    "discard": "Discarded the unpublished changes: the editor holds the published text.",
    "withdraw": "Withdrew the review request.",
}


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def note_edit(request, note_id: int):
    """The editor: GET shows the form; POST saves, publishes (a draft, or a published note's
    changes), unpublishes, discards unpublished changes or withdraws a review request.

    Publishing a note whose render has services.PUBLISH_BLOCKERS warnings saves it, then shows the
    problems and a "Publish anyway" button (confirm=1) instead of publishing."""
    note = _editable(request, note_id)
    if request.method == "GET":
        return _editor_page(request, note, _fresh_form(request, note))
    confirmed = request.POST.get("confirm") == "1"
    action = "publish" if confirmed else request.POST.get("action", "save")
    form = _bound_form(request, note)
    if not form.is_valid():
        return _editor_page(request, note, form, status=400)
    base_version = form.cleaned_data["base_version"]
    try:
        result, problems = _note_edit_write(request, note, form, action, confirmed)
    except (services.AuthorshipError, ValidationError) as error:
        # Nothing was written: the page keeps what was typed and says what is wrong.
        _show_refusal(request, form, error)
        return _editor_page(request, _editable(request, note_id), form, status=400)
    if problems:
        saved = result.note
        return _editor_page(request, saved, _fresh_form(request, saved), confirm=problems)
    if result.conflict:
        current = Note.objects.get(pk=note.pk)
        yours = result.revision
        conflict = {
            "yours_title": yours.title if yours else form.cleaned_data["title"],
            "yours_body": yours.body if yours else form.cleaned_data["body"],
            "revision": yours,
            "theirs": services.working_state(current),
            "version": current.version,
        }
        return _editor_page(
            request, current, _fresh_form(request, current), conflict=conflict, status=409
        )
    messages.success(request, _done(action, result, base_version))
    response = redirect("editor:edit", note_id=note.pk)
    # The version to save on next, as the autosave's JSON gives it: a client without the page
    # (a script, the load test) can go on saving without loading the editor again.
    response["X-Note-Version"] = str(result.note.version)
    return response


def _show_refusal(request, form, error) -> None:
    """A service's refusal on the page: next to the form's fields it names (the authors, the
    body…), else as a message."""
    by_field = getattr(error, "error_dict", None)
    if by_field and set(by_field) <= set(form.fields):
        for name, errors in by_field.items():
            form.add_error(name, errors)
        return
    messages.error(request, " ".join(getattr(error, "messages", [str(error)])))


def _done(action: str, result, base_version: int) -> str:
    note = result.note
    if action != "publish":
        return DONE.get(action, "Saved.")
    if services.awaiting_review(note):
        if note.status != Status.PUBLISHED:
            return "Submitted for review: readers see the note once an Editor approves it."
        return "Submitted for review: readers see the published version until it is approved."
    if result.revision is None:
        return "Nothing to publish: readers already see this version."
    if note.is_scheduled:
        return f"Scheduled for {timezone.localtime(note.date):%Y-%m-%d %H:%M}."
    return "Published."


def _note_edit_write(request, note, form, action, confirmed):
    """The POST's write, one service call: (result, publish problems or None)."""
    user = request.user
    base_version = form.cleaned_data["base_version"]
    if action in {"unpublish", "discard", "withdraw"}:
        service = {
            "unpublish": services.note_unpublish,
            "discard": services.working_copy_discard,
            "withdraw": services.note_review_withdraw,
        }[action]
        try:
            return service(note_id=note.pk, user=user, base_version=base_version), None
        except services.ReviewError as error:
            raise ValidationError(str(error)) from error
    write = services.note_save_and_publish(
        note_id=note.pk,
        user=user,
        base_version=base_version,
        fields=form.note_fields(),
        bibliographies=(
            form.cleaned_data["bibliographies"] if form.bibliographies_changed() else None
        ),
        publish=action == "publish",
        confirmed=confirmed,
    )
    if write.not_published:
        messages.error(request, f"Saved, not published: {write.not_published}")
    return write.result, write.problems


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
