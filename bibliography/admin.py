from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from scidraft.markup.sanitise import clean_fragment

from .display import latex_to_text_cut
from .entries import entry_data, with_math_source
from .formatting import format_references
from .models import BibEntry, BibFile
from .services import (
    bib_parse,
    bib_text_check,
    bibfile_import,
    bibfile_set_public,
    may_set_public,
)


class BibFileForm(forms.ModelForm):
    """Upload a .bib file or paste its text; either goes through the import service."""

    upload = forms.FileField(
        required=False, help_text="A .bib file (UTF-8). It replaces the text below."
    )

    class Meta:
        model = BibFile
        fields = ["name", "description", "owner", "is_public", "raw"]
        widgets = {"raw": forms.Textarea(attrs={"rows": 20, "spellcheck": "false"})}
        labels = {"raw": "BibTeX (paste)"}

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("upload")
        try:
            if upload is not None:
                cleaned["raw"] = bib_text_check(upload.read())
            else:
                cleaned["raw"] = bib_text_check(cleaned.get("raw") or "")
            # Read here, within its CPU budget, so that a file that cannot be read in time is
            # an error on the form (save_model cannot refuse); the import reuses the result.
            cleaned["parsed"] = bib_parse(cleaned["raw"])
        except ValidationError as error:
            self.add_error("upload" if upload is not None else "raw", error)
        return cleaned


@admin.register(BibFile)
class BibFileAdmin(admin.ModelAdmin):
    form = BibFileForm
    list_display = [
        "name", "entry_count", "problem_count", "owner", "is_public", "updated_at", "download",
    ]  # fmt: skip
    list_filter = ["is_public"]
    search_fields = ["name", "description"]
    autocomplete_fields = ["owner"]
    readonly_fields = ["entry_count", "sha256", "report", "created_at", "updated_at"]
    fields = [
        "name", "description", "owner", "is_public", "upload", "raw", "report", "entry_count",
        "sha256", "created_at", "updated_at",
    ]  # fmt: skip

    def get_readonly_fields(self, request, obj=None):
        # Whether a file is public is the Editors' decision (bibfile_set_public checks it too).
        fields = list(super().get_readonly_fields(request, obj))
        return fields if may_set_public(request.user) else [*fields, "is_public"]

    @admin.display(description="problems")
    def problem_count(self, obj: BibFile) -> int:
        return len(obj.parse_report)

    @admin.display(description="file")
    def download(self, obj: BibFile):
        url = reverse("bibliography:bibfile_download", args=[obj.name.removeprefix("bib/")])
        return format_html('<a href="{}">{}</a>', url, obj.filename)

    @admin.display(description="parse report")
    def report(self, obj: BibFile):
        if not obj.pk:
            return "Shown after the upload."
        if not obj.parse_report:
            return "Every block parsed."
        # format_html_join escapes each value: keys and reasons come from the uploaded file.
        return format_html_join(
            "\n",
            "<div>line {}: {} — {}</div>",
            (
                (item.get("line", "?"), item.get("key") or "(no key)", item.get("reason", ""))
                for item in obj.parse_report
            ),
        )

    def save_model(self, request, obj, form, change):
        # The import service parses, stores entries and re-renders citing notes.
        result = bibfile_import(
            name=form.cleaned_data["name"],
            raw=form.cleaned_data["raw"],
            owner=form.cleaned_data.get("owner") or (None if change else request.user),
            parsed=form.cleaned_data["parsed"],
        )
        bibfile = result.bibfile
        if form.cleaned_data.get("description") != bibfile.description:
            bibfile.description = form.cleaned_data.get("description", "")
            bibfile.save(update_fields=["description"])
        public = form.cleaned_data.get("is_public")
        if "is_public" in form.cleaned_data and public != bibfile.is_public:
            bibfile_set_public(user=request.user, bibfile_id=bibfile.pk, public=bool(public))
        obj.pk = bibfile.pk
        obj.refresh_from_db()
        level = messages.WARNING if result.problems else messages.SUCCESS
        self.message_user(
            request,
            f"{result.entries_kept} entries kept ({result.outcome}); "
            f"{len(result.problems)} block(s) could not be read — see the parse report.",
            level,
        )

    def _to_report(self, request, obj, default):
        # After a save the author needs the parse report, which is on the file's own page.
        if "_addanother" in request.POST or "_popup" in request.POST:
            return default
        return HttpResponseRedirect(reverse("admin:bibliography_bibfile_change", args=[obj.pk]))

    def response_add(self, request, obj, post_url_continue=None):
        return self._to_report(request, obj, super().response_add(request, obj, post_url_continue))

    def response_change(self, request, obj):
        return self._to_report(request, obj, super().response_change(request, obj))


@admin.register(BibEntry)
class BibEntryAdmin(admin.ModelAdmin):
    list_display = ["key", "entry_type", "decoded_title", "first_author", "year", "bibfile"]
    list_filter = ["entry_type", "bibfile"]
    search_fields = ["key", "fields__title", "persons__author"]
    list_select_related = ["bibfile"]
    readonly_fields = [
        "bibfile", "key", "formatted", "entry_type", "fields", "persons", "source", "position",
        "cited_by",
    ]  # fmt: skip

    def has_add_permission(self, request):
        # Entries come from parsing their file; edit the file instead.
        return False

    @admin.display(description="title", ordering="key")
    def decoded_title(self, obj: BibEntry) -> str:
        return latex_to_text_cut(obj.title)

    @admin.display(description="first author")
    def first_author(self, obj: BibEntry) -> str:
        authors = obj.persons.get("author") or obj.persons.get("editor") or []
        return latex_to_text_cut(authors[0]) if authors else ""

    @admin.display(description="as cited")
    def formatted(self, obj: BibEntry):
        """The entry in the site's citation style, as a reference list prints it, or why
        citation-js could not format it."""
        from scidraft.site.models import SiteSettings  # site settings build on bibliography

        site = SiteSettings.objects.current()
        result = format_references([entry_data(obj)], site.citation_style, site.language_code)
        if obj.key in result.problems:
            return f"{result.problems[obj.key]} ({site.citation_style})"
        markup = with_math_source(result.entries.get(obj.key, ""), result.math.get(obj.key, ()))
        # Trusted: citation-js's output, through the engine's allowlist.
        safe = mark_safe(clean_fragment(markup))  # noqa: S308
        return format_html("{} <em>({})</em>", safe, site.citation_style)

    @admin.display(description="cited by")
    def cited_by(self, obj: BibEntry):
        from notes.models import NoteCitation  # notes builds on bibliography, not the reverse

        notes = (
            NoteCitation.objects.filter(bibfile=obj.bibfile, key=obj.key)
            .select_related("note")
            .order_by("note__slug")
            .distinct()
        )
        seen = {}
        for citation in notes:
            seen.setdefault(citation.note_id, citation.note)
        if not seen:
            return "No note cites this entry."
        return format_html_join(
            ", ",
            '<a href="{}">{}</a>',
            (
                (reverse("admin:notes_note_change", args=[note.pk]), str(note))
                for note in seen.values()
            ),
        )
