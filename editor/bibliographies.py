"""Bibliography files in the editor: an author's own .bib files (Editors and admins:
every file), their parse reports and entries, and the entry search behind the cite picker.

Thin views: files are looked up in BibFile.objects.editable_by(request.user) (404 otherwise)
and every write goes through bibliography.services.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import Case, IntegerField, Q, Value, When
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from bibliography import services
from bibliography.display import authors_text, latex_to_text_cut, shortened
from bibliography.entries import entry_data, plain_text
from bibliography.formatting import format_references
from bibliography.models import BibEntry, BibFile
from notes.models import Note, NoteBibliography, NoteCitation
from scidraft.site.meta import PageMeta
from scidraft.site.models import SiteSettings

from .references import NOTES_PER_PAGE, waiting_items, waiting_notes

ENTRIES_PER_PAGE = 100
CITE_RESULTS = 20
# The picker's bounds on one result: the fields it formats, the reference text it sends.
PICKER_ENTRY_CHARS = 20_000
PICKER_REFERENCE_CHARS = 1_000
# A file's text is offered for editing in place up to this size; larger ones are re-uploaded.
PREFILL_MAX_CHARS = 512 * 1024


def _meta(title: str) -> PageMeta:
    return PageMeta(title=f"{title} | SciDraft editor", noindex=True)


def _max_megabytes() -> str:
    return f"{settings.SCIDRAFT_BIB_MAX_BYTES / 1_048_576:g}"


class BibTextForm(forms.Form):
    """A .bib file or pasted BibTeX: exactly one of them, UTF-8, within the size limit."""

    upload = forms.FileField(
        required=False,
        label="Upload a .bib file",
        widget=forms.ClearableFileInput(attrs={"accept": ".bib,text/x-bibtex,text/plain"}),
    )
    text = forms.CharField(
        required=False,
        strip=False,
        label="…or paste BibTeX",
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false"}),
    )

    def clean(self):
        cleaned = super().clean()
        upload, text = cleaned.get("upload"), cleaned.get("text") or ""
        if upload is not None and text.strip():
            raise ValidationError("Upload a file or paste text, not both.")
        if upload is None and not text.strip():
            raise ValidationError("Upload a .bib file or paste its text.")
        try:
            if upload is not None:
                # The size first: a 20 MB upload is refused without being read.
                services.bib_size_check(upload.size)
                cleaned["raw"] = services.bib_text_check(upload.read())
            else:
                cleaned["raw"] = services.bib_text_check(text)
        except ValidationError as error:
            self.add_error("upload" if upload is not None else "text", error)
        return cleaned


class BibCreateForm(BibTextForm):
    name = forms.CharField(
        max_length=120,
        label="Name",
        help_text='Stored as bib/<name>.bib; notes name it in bib="bib/<name>.bib".',
    )

    field_order = ["name", "upload", "text"]

    def clean_name(self) -> str:
        return services.bib_name_for(self.cleaned_data["name"])


def _notes_using(file_ids) -> dict[int, set[int]]:
    """File id → ids of the notes that attach it as a default bibliography or cite from it."""
    using: dict[int, set[int]] = {pk: set() for pk in file_ids}
    links = NoteBibliography.objects.filter(bibfile_id__in=file_ids).values_list(
        "bibfile_id", "note_id"
    )
    citations = (
        NoteCitation.objects.filter(bibfile_id__in=file_ids)
        .values_list("bibfile_id", "note_id")
        .distinct()
    )
    for bibfile_id, note_id in [*links, *citations]:
        using[bibfile_id].add(note_id)
    return using


def _import_message(request, result) -> None:
    if result.outcome == "unchanged":
        messages.info(request, "The text is the same as before: nothing changed.")
        return
    done = "Created" if result.outcome == "created" else "Updated"
    text = f"{done} {result.bibfile.name}: {result.entries_kept} entries kept"
    if result.problems:
        messages.warning(
            request,
            f"{text}; {len(result.problems)} block(s) could not be read — see the parse report.",
        )
    else:
        messages.success(request, f"{text}; every block parsed.")


def _add_service_error(form: forms.Form, error: Exception, field: str | None = None) -> None:
    if isinstance(error, PermissionDenied):
        form.add_error(None, str(error) or "You may not do this.")
    elif isinstance(error, services.BibParseStopped):
        # About the text, not the name: shown beside the upload or the pasted text.
        form.add_error("upload" if form.cleaned_data.get("upload") else "text", error)
    else:
        form.add_error(field, error)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def bibfile_list(request):
    """The user's bibliography files (Editors and admins: all) and a form to add one."""
    form = BibCreateForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                result = services.bibfile_create(
                    user=request.user, name=form.cleaned_data["name"], raw=form.cleaned_data["raw"]
                )
            except (ValidationError, PermissionDenied) as error:
                _add_service_error(form, error, "name")
            else:
                _import_message(request, result)
                return redirect("editor:bibliography", bibfile_id=result.bibfile.pk)
    files = list(
        BibFile.objects.editable_by(request.user)
        .select_related("owner")
        .defer("raw")
        .order_by("name")
    )
    using = _notes_using([bibfile.pk for bibfile in files])
    rows = [
        {
            "file": bibfile,
            "problems": len(bibfile.parse_report),
            "notes": len(using[bibfile.pk]),
        }
        for bibfile in files
    ]
    return render(
        request,
        "editor/bibliographies.html",
        {
            "rows": rows,
            "form": form,
            "max_megabytes": _max_megabytes(),
            "sees_all": request.user.is_superuser
            or request.user.has_perm("bibliography.edit_any_bibfile"),
            "meta": _meta("Bibliographies"),
            "assets": {},
        },
        status=status,
    )


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def bibfile_detail(request, bibfile_id: int):
    """A file's entries (searchable), parse report and notes; POST replaces its text."""
    bibfile = get_object_or_404(
        BibFile.objects.editable_by(request.user).select_related("owner"), pk=bibfile_id
    )
    status = 200
    if request.method == "POST":
        form = BibTextForm(request.POST, request.FILES)
        status = 400
        if form.is_valid():
            try:
                result = services.bibfile_replace(
                    user=request.user, bibfile_id=bibfile.pk, raw=form.cleaned_data["raw"]
                )
            except (ValidationError, PermissionDenied) as error:
                _add_service_error(form, error, "text")
            else:
                _import_message(request, result)
                return redirect("editor:bibliography", bibfile_id=bibfile.pk)
    else:
        prefill = bibfile.raw if len(bibfile.raw) <= PREFILL_MAX_CHARS else ""
        form = BibTextForm(initial={"text": prefill})

    query = request.GET.get("q", "").strip()[:200]
    entries = (
        bibfile.entries.matching(query)
        .readable()
        .only("key", "entry_type", "fields", "persons", "position")
    )
    page = Paginator(entries, ENTRIES_PER_PAGE).get_page(request.GET.get("page"))
    rows = [
        {
            "key": entry.key,
            "type": entry.entry_type,
            "title": latex_to_text_cut(entry.title),
            "authors": authors_text(entry.persons),
            "year": shortened(entry.year, 20),
        }
        for entry in page
    ]

    note_ids = _notes_using([bibfile.pk])[bibfile.pk]
    notes = list(
        Note.objects.editable_by(request.user)
        .filter(pk__in=note_ids)
        .only("pk", "slug", "title")
        .order_by("title", "slug")
    )
    return render(
        request,
        "editor/bibliography.html",
        {
            "bibfile": bibfile,
            "form": form,
            "rows": rows,
            "page": page,
            "query": query,
            "notes": notes,
            "other_notes": len(note_ids) - len(notes),
            "waiting": waiting_items(
                waiting_notes(request.user).filter(pk__in=note_ids)[:NOTES_PER_PAGE]
            ),
            "downloadable": bibfile.name.startswith("bib/"),
            "served": BibFile.objects.public(Note.objects.published())
            .filter(pk=bibfile.pk)
            .exists(),
            "may_set_public": services.may_set_public(request.user),
            "too_long": len(bibfile.raw) > PREFILL_MAX_CHARS,
            "max_megabytes": _max_megabytes(),
            "meta": _meta(bibfile.name),
            "assets": {},
        },
        status=status,
    )


@never_cache
@login_required
@require_POST
def bibfile_public(request, bibfile_id: int):
    """POST public=1 or 0: an Editor marks the file public (served at /bib/, usable in every
    note) or private again; anyone else who may see the file is refused (403)."""
    bibfile = get_object_or_404(BibFile.objects.editable_by(request.user), pk=bibfile_id)
    public = request.POST.get("public") == "1"
    services.bibfile_set_public(user=request.user, bibfile_id=bibfile.pk, public=public)
    if public:
        messages.success(request, f"{bibfile.name} is public: anyone may download it.")
    else:
        messages.success(
            request,
            f"{bibfile.name} is private: readers download it only while a published note uses it.",
        )
    return redirect("editor:bibliography", bibfile_id=bibfile.pk)


@never_cache
@login_required
@require_GET
def cite_search(request, note_id: int):
    """JSON for the cite picker: entries matching ?q= in the files usable in this note, the
    note's own default bibliographies first (in their order), then the user's files."""
    note = get_object_or_404(Note.objects.editable_by(request.user), pk=note_id)
    query = request.GET.get("q", "").strip()[:200]
    attached = list(
        note.bibliography_links.order_by("position").values_list("bibfile_id", flat=True)
    )
    rank = Case(
        *[When(bibfile_id=pk, then=Value(index)) for index, pk in enumerate(attached)],
        When(bibfile__owner=request.user, then=Value(len(attached))),
        default=Value(len(attached) + 1),
        output_field=IntegerField(),
    )
    usable = BibFile.objects.usable_by(request.user, note=note).values("pk")
    entries = list(
        BibEntry.objects.filter(Q(bibfile__in=usable))
        .matching(query)
        .readable()
        .annotate(rank=rank)
        .select_related("bibfile")
        .only("key", "entry_type", "fields", "persons", "bibfile__name")
        .order_by("rank", "bibfile__name", "position")[: CITE_RESULTS + 1]
    )
    shown = entries[:CITE_RESULTS]
    site = SiteSettings.objects.current()
    # Each result as the note's reference list will print it (the site's style), as text: the
    # picker never parses an entry as HTML.
    # An entry too long for a picker's line (a file read before entries were bounded after
    # expansion may hold megabytes) is listed by its title alone, without formatting it.
    formatted = format_references(
        [entry_data(entry) for entry in shown if _fits_the_picker(entry)],
        site.citation_style,
        site.language_code,
    )
    results = [
        {
            "key": entry.key,
            "type": entry.entry_type,
            "title": latex_to_text_cut(entry.title),
            "authors": authors_text(entry.persons),
            "year": latex_to_text_cut(entry.year),
            "file": entry.bibfile.name,
            "reference": ""
            if entry.key in formatted.problems
            else shortened(
                plain_text(formatted.entries.get(entry.key, ""), formatted.math.get(entry.key, ())),
                PICKER_REFERENCE_CHARS,
            ),
        }
        for entry in shown
    ]
    return JsonResponse(
        {
            "results": results,
            "more": len(entries) > CITE_RESULTS,
            "message": _unusable_key_message(query, usable, found=[e.key for e in shown]),
        }
    )


def _fits_the_picker(entry: BibEntry) -> bool:
    """Whether the entry's fields and names are short enough to format for the picker."""
    size = sum(len(value) for value in entry.fields.values())
    size += sum(len(name) for names in entry.persons.values() for name in names)
    return size <= PICKER_ENTRY_CHARS


# Files named when a key is found only where the author may not cite from.
UNUSABLE_FILES_NAMED = 3


def _unusable_key_message(key: str, usable, *, found: list[str]) -> str:
    """When `key` is exactly an entry key of files this author may not use (and of none they
    may), where it is and whom to ask; else "". Only a whole key is looked up, so nothing of
    another person's file is found by searching its titles or authors."""
    if not key or key in found:
        return ""
    names = list(
        BibEntry.objects.filter(key=key)
        .exclude(bibfile__in=usable)
        .order_by("bibfile__name")
        .values_list("bibfile__name", flat=True)
        .distinct()[:UNUSABLE_FILES_NAMED]
    )
    if not names:
        return ""
    return f"“{key}” is in {', '.join(names)}, which you may not use: ask its owner or an Editor."
