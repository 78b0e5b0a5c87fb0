"""The web editor. Thin views: every write goes through notes.services, and every
view that takes a note looks it up in Note.objects.editable_by(request.user): 404 otherwise."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Max, Q
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from bibliography.models import BibFile
from collaboration import documents, presence
from notes import services
from notes.models import Author, AuthorConsent, Note, NoteRevision, Status, Tag
from notes.rendering import environment_kinds, render_incomplete, with_macros
from scidraft.markup import ENGINE_VERSION
from scidraft.markup import render as markup_render
from scidraft.markup.external_images import mark_external_images
from scidraft.markup.rendered import RenderWarning
from scidraft.markup.shortcodes import SHORTCODES
from scidraft.site.meta import PageMeta
from scidraft.site.models import MATH_MACROS_MAX_CHARS

from . import previews
from .forms import NoteEditorForm
from .live import live_refusal
from .references import note_reference_changes, waiting_notes
from .revision_diff import revision_diff

STATUS_FILTERS = ("draft", "review", "scheduled", "published", "changes")
DASHBOARD_FILTERS = ("q", "status", "author", "tag", "problems")
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


DASHBOARD_PAGE_SIZE = 50


@never_cache
@login_required
@require_GET
def dashboard(request):
    """The notes a person works on: an Author's own and co-authored notes; every note for
    Editors and Admins (or only theirs, ?scope=mine). Filtered by title, status, author, tag,
    problems and review; 50 a page, in a constant number of queries."""
    user = request.user
    editor = services.is_editor(user)
    scope = "mine" if not editor or request.GET.get("scope") == "mine" else "all"
    notes = Note.objects.for_dashboard(user, mine=scope == "mine")
    filters = {name: request.GET.get(name, "").strip() for name in DASHBOARD_FILTERS}
    notes = notes.dashboard_filtered(**filters, now=timezone.now())
    page = Paginator(notes, DASHBOARD_PAGE_SIZE).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "editor/dashboard.html",
        {
            "rows": [_dashboard_row(note, user) for note in rows],
            "page": page,
            "page_query": query.urlencode(),
            "filters": filters,
            "scope": scope,
            "editor": editor,
            "status_filters": STATUS_FILTERS,
            "author_options": Author.objects.filter(is_active=True).values_list("handle", "name"),
            "tag_options": Tag.objects.offered_to(user)
            .order_by("name")
            .values_list("slug", "name"),
            "references_waiting": waiting_notes(user).count(),
            "requests": AuthorConsent.objects.pending_for(user)
            .select_related("note", "requested_by")
            .order_by("created_at"),
            "meta": _meta("Notes" if scope == "all" else "My notes"),
            "assets": {},
        },
    )


def _dashboard_row(note: Note, user) -> dict:
    now = timezone.now()
    if note.changes_in_review or note.status == Status.REVIEW:
        label = "In review" if note.status == Status.REVIEW else "Published, changes in review"
    elif note.has_changes:
        label = "Published, with unpublished changes"
    elif note.status == Status.PUBLISHED:
        label = "Scheduled" if note.date > now else "Published"
    else:
        label = "Draft"
    links = list(note.authorships.all())
    return {
        "note": note,
        "status": label,
        "authors": [link.author for link in links],
        "coauthor": note.created_by_id != user.pk
        and any(link.author.user_id == user.pk for link in links),
        "problems": note.problem_count,
    }


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


def _wants_json(request) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def preview_json(rendered, html: str) -> dict:
    """The editor's preview: `html` (the render's, its blocks carrying their source lines and
    external images held back), its problems, and the note's labels (for completing
    \\ref{…})."""
    return {
        "html": html,
        "problems": [
            {
                "line": warning.line or 0,
                "code": warning.code,
                "message": warning.message,
                "blocking": warning.code in services.PUBLISH_BLOCKERS,
            }
            for warning in rendered.warnings
        ],
        "labels": [
            {"label": label, "kind": target.get("kind", ""), "text": target.get("text", "")}
            for label, target in rendered.labels.items()
        ],
    }


@never_cache
@login_required
@require_POST
def note_preview(request, note_id: int):
    """The published renderer in the note's context, with its problems: JSON for the editor
    (Accept: application/json, see preview_json), else HTML for the admin's preview
    (static/js/admin-preview.js). The user's last preview again is answered as it was; any
    other is counted (editor.previews) and, past the limit, refused with 429 and Retry-After."""
    note = _editable(request, note_id)
    source = request.POST.get("content", "")
    wants_json = _wants_json(request)
    context = services.working_context(note, reader=request.user)
    if wants_json:
        context = dataclasses.replace(context, source_lines=True)
        if "math_macros" in request.POST:
            # The side panel's macros as typed, not saved yet: the renderer reports any it
            # refuses as problems of the preview, as it does for saved ones.
            macros = request.POST["math_macros"][:MATH_MACROS_MAX_CHARS]
            context = with_macros(context, macros)
    key = previews.preview_key(
        note_id=note.pk, source=source, context=context, kind="json" if wants_json else "html"
    )
    answer = previews.kept(request.user.pk, key)
    if answer is None:
        allowance = previews.preview_allowance(request.user)
        if not allowance.allowed:
            return _preview_refused(allowance, wants_json)
        rendered = markup_render(source, context)
        if wants_json:
            answer = json.dumps(preview_json(rendered, for_reviewers(request, rendered.html)))
        else:
            body = for_reviewers(request, rendered.html)
            answer = problems_html(rendered.warnings) + body
        if rendered.complete:  # a render cut short by time is rendered again when asked
            previews.keep(request.user.pk, key, answer, len(answer))
    if wants_json:
        return HttpResponse(answer, content_type="application/json")
    # Trusted: scidraft.markup sanitises its output; the problems list is escaped.
    return HttpResponse(mark_safe(answer))  # noqa: S308


def _preview_refused(allowance, wants_json: bool) -> HttpResponse:
    if wants_json:
        response = JsonResponse(
            {"status": "paused", "error": allowance.message}, status=allowance.status
        )
    else:
        response = HttpResponse(
            format_html('<p class="render-error">{}</p>', allowance.message),
            status=allowance.status,
        )
    response["Retry-After"] = str(allowance.retry_after)
    return response


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


@never_cache
@login_required
@require_POST
def authorship_confirm(request, note_id: int, author_id: int):
    """The author, or an Editor for them, agrees to be named on the note."""
    try:
        services.authorship_confirm(note_id=note_id, author_id=author_id, user=request.user)
    except services.AuthorshipError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Confirmed: the note may be published with this name.")
    return redirect(_same_site(request, request.POST.get("next", "")) or "editor:dashboard")


def _same_site(request, target: str) -> str | None:
    """`target` if it is a path or URL of this site (a form's `next`), else None: a redirect
    never takes a signed-in person elsewhere."""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


@never_cache
@login_required
@require_POST
def authorship_decline(request, note_id: int):
    """The user declines being named on the note: their name leaves its authors."""
    try:
        services.authorship_decline(note_id=note_id, user=request.user)
    except services.AuthorshipError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Declined: your name is no longer on that note.")
    return redirect("editor:dashboard")
