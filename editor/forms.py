"""The editor's form: every field of a note an author edits, and the version the page loaded.

A field left out of a POST altogether keeps the note's value (a client that posts only the body
changes only the body); check boxes are the exception, as browsers omit unticked ones.
"""

from __future__ import annotations

import datetime as dt

from django import forms
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.text import slugify

from bibliography.models import BibFile
from notes.models import Author, Note, body_size_error, tag_name
from notes.services import is_editor, working_state
from scidraft.site.models import MATH_MACROS_MAX_CHARS, EntrySet, validate_math_macros

# The entry-set fields of docs/theme.md#entry-sets when the site configures no set.
FALLBACK_ENTRY_SET = EntrySet(
    key="entry",
    title_field="entryTitle",
    category_field="entryCategory",
    aliases_field="entryAliases",
    summary_field="entrySummary",
)
ENTRY_PARTS = ("title", "category", "aliases", "summary")
FLAGS = ("disable_share", "search_hidden", "hidden_in_rss", "robots_noindex")
CHECKBOXES = frozenset({"promotion", *FLAGS})


class NoteBodyWidget(forms.Textarea):
    """The body's textarea, which the editor's CodeMirror takes over (static/vendor/editor/,
    built from editor/codemirror/): it stays the form's field, so the page works and posts
    without JavaScript. Its data attributes name the note's endpoints the editor's scripts use:
    preview, image upload (the protocol the admin's widget speaks too), cite
    search and the labels of other notes."""

    def __init__(self, note_id: int, attrs=None):
        base = f"/write/{note_id}/"
        super().__init__(
            {
                "rows": 24,
                "spellcheck": "true",
                "class": "editor-body",
                "data-preview-url": f"{base}preview/",
                "data-upload-url": f"{base}images/",
                "data-cite-url": f"{base}cite-search/",
                "data-labels-url": f"{base}labels/",
                **(attrs or {}),
            }
        )


class CardTitleSelect(forms.NullBooleanSelect):
    """The stored choice selected (NullBooleanSelect writes True as "true", which a plain
    Select compared with "True" and missed, so every note read "Theme rule" and was saved so),
    with the theme's wording for the unset choice."""

    def __init__(self, attrs=None):
        super().__init__(attrs)
        self.choices = [("unknown", "Theme rule"), ("true", "Yes"), ("false", "No")]


class ReadOnlyCheckbox(forms.CheckboxInput):
    """A box shown ticked or not that cannot be changed, its value posted in a hidden input:
    the form posts back the value it shows, so a Save changes nothing there, and a changed
    value reaches the service, which refuses it on the field."""

    def render(self, name, value, attrs=None, renderer=None):
        attrs = self.build_attrs(self.attrs, attrs)
        checked = self.check_test(value)
        return format_html(
            '<input type="hidden" name="{}" value="{}"><input type="checkbox" id="{}" disabled{}>',
            name,
            "true" if checked else "false",
            attrs.get("id", ""),
            mark_safe(" checked") if checked else "",  # noqa: S308
        )


def split_list(text: str, separator: str = ",") -> list[str]:
    """Non-empty, stripped items in order, each once."""
    return list(dict.fromkeys(item.strip() for item in text.split(separator) if item.strip()))


def _value(params: dict, field: str):
    """A params value by front-matter key, matched case-insensitively as Hugo does."""
    for key, value in params.items():
        if key.lower() == field.lower():
            return value
    return None


def _set_value(params: dict, field: str, value) -> None:
    current = _value(params, field)
    if current == value or (current is None and value in ("", [])):
        return  # unchanged: keep the key as it was written (Hugo's case-insensitive keys)
    for key in [key for key in params if key.lower() == field.lower()]:
        del params[key]
    if value not in (None, "", []):
        params[field] = value


class NoteEditorForm(forms.Form):
    base_version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    title = forms.CharField(max_length=300, required=False)
    body = forms.CharField(required=False, strip=False)
    slug = forms.CharField(
        max_length=200,
        required=False,
        help_text="The note's address, /notes/<slug>/. Other characters become hyphens; "
        "blank keeps the current slug.",
    )
    date = forms.DateTimeField(
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="A future date schedules the note.",
    )
    authors = forms.CharField(
        required=False,
        max_length=2000,
        help_text="Author handles, comma-separated, in order; the first is the card's @handle.",
        widget=forms.TextInput(attrs={"list": "editor-author-options", "autocomplete": "off"}),
    )
    institute = forms.CharField(
        max_length=200, required=False, help_text="Blank: the site's institute."
    )
    tags = forms.CharField(
        required=False,
        max_length=2000,
        help_text="Comma-separated; a new name creates the tag.",
        widget=forms.TextInput(attrs={"list": "editor-tag-options", "autocomplete": "off"}),
    )
    summary = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    math_macros = forms.CharField(
        required=False,
        max_length=MATH_MACROS_MAX_CHARS,
        validators=[validate_math_macros],
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "class": "editor-macros"}),
        label="Math macros",
        help_text="\\newcommand definitions for this note's math, after the site's; "
        "the preview uses them as you type.",
    )
    description = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Meta description; RSS prefers it to the summary.",
    )
    show_title = forms.NullBooleanField(required=False, widget=CardTitleSelect)
    promotion = forms.BooleanField(
        required=False, help_text="Out of the feed's flow, into the promotion pool."
    )
    weight = forms.IntegerField(
        required=False, help_text="Pins the feed order (lower first); 0 or blank: by date."
    )
    keywords = forms.CharField(
        required=False, max_length=2000, help_text="Comma-separated; blank: the tags."
    )
    canonical_url = forms.URLField(required=False, assume_scheme="https", label="Canonical URL")
    disable_share = forms.BooleanField(required=False, label="Hide the share buttons")
    search_hidden = forms.BooleanField(required=False, label="Leave out of site search")
    hidden_in_rss = forms.BooleanField(required=False, label="Leave out of RSS")
    robots_noindex = forms.BooleanField(required=False, label="Ask search engines not to index")
    bibliographies = forms.CharField(
        required=False,
        max_length=2000,
        label="Default bibliographies",
        help_text="File names, comma-separated, searched in order by reference lists without bib=.",
        widget=forms.TextInput(attrs={"list": "editor-bib-options", "autocomplete": "off"}),
    )

    def __init__(self, *args, note: Note, user, state: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.note = note
        self.user = user
        # What the fields edit: the working copy of a published note, else the note.
        self.state = working_state(note) if state is None else state
        if not is_editor(user):
            # Pinning is an Editor's (notes.services.authorship); the value shows, unchanged.
            self.fields["weight"].disabled = True
            self.fields["weight"].help_text += " Editors set it."
            # Promotion is an Editor's too: shown, posted back as it is, refused if changed.
            self.fields["promotion"].widget = ReadOnlyCheckbox()
            self.fields["promotion"].help_text += " Editors set it."
        self.fields["body"].widget = NoteBodyWidget(note.pk)
        self.entry_sets = list(EntrySet.objects.order_by("key")) or [FALLBACK_ENTRY_SET]
        for entry_set in self.entry_sets:
            for part in ENTRY_PARTS:
                self.fields[self.entry_field(entry_set, part)] = self._entry_form_field(
                    entry_set, part
                )
        if self.is_bound:
            # Left out of the POST: keep the note's value (see the module docstring).
            # A read-only box always posts its hidden value: absent, it was left out.
            boxes = {
                name
                for name in CHECKBOXES
                if not isinstance(self.fields[name].widget, ReadOnlyCheckbox)
            }
            self.omitted = {
                name
                for name in self.fields
                if name not in boxes and name != "base_version" and name not in self.data
            }
            for name in self.omitted:
                self.fields[name].required = False
        else:
            self.omitted = set()

    # --- Entry sets (docs/theme.md#entry-sets), kept in Note.params under the set's field names ---

    @staticmethod
    def entry_field(entry_set: EntrySet, part: str) -> str:
        return f"entry_{entry_set.key}_{part}"

    @staticmethod
    def _entry_form_field(entry_set: EntrySet, part: str) -> forms.Field:
        key = getattr(entry_set, f"{part}_field")
        if part in {"aliases", "summary"}:
            help_text = "One per line." if part == "aliases" else ""
            return forms.CharField(
                required=False,
                label=key,
                help_text=help_text,
                widget=forms.Textarea(attrs={"rows": 2}),
            )
        return forms.CharField(required=False, max_length=300, label=key)

    def entry_groups(self) -> list[tuple[str, list]]:
        """(set key, its four bound fields) for the template."""
        return [
            (entry_set.key, [self[self.entry_field(entry_set, part)] for part in ENTRY_PARTS])
            for entry_set in self.entry_sets
        ]

    def flag_fields(self) -> list:
        return [self[name] for name in FLAGS]

    # --- Initial values ----------------------------------------------------------------------

    @classmethod
    def initial_for(cls, note: Note, state: dict | None = None) -> dict:
        """The form's values from `state` (notes.services.working_state: the working copy of a
        published note, else the note)."""
        state = working_state(note) if state is None else state
        initial = {
            "base_version": note.version,
            "title": state["title"],
            "body": state["body"],
            "slug": state["slug"],
            "date": timezone.localtime(dt.datetime.fromisoformat(state["date"])),
            "authors": ", ".join(state["authors"]),
            "institute": state["institute"],
            "tags": ", ".join(state["tags"]),
            "summary": state["summary"],
            "math_macros": state.get("math_macros", ""),
            "description": state["description"],
            "show_title": state["show_title"],
            "promotion": state["promotion"],
            "weight": state["weight"] or None,
            "keywords": ", ".join(state["keywords"]),
            "canonical_url": state["canonical_url"],
            "bibliographies": ", ".join(state["bibliographies"]),
            **{name: state[name] for name in FLAGS},
        }
        params = state.get("params") or {}
        for entry_set in list(EntrySet.objects.order_by("key")) or [FALLBACK_ENTRY_SET]:
            for part in ENTRY_PARTS:
                value = _value(params, getattr(entry_set, f"{part}_field"))
                if part == "aliases" and isinstance(value, list):
                    value = "\n".join(str(alias) for alias in value)
                initial[cls.entry_field(entry_set, part)] = "" if value is None else str(value)
        return initial

    # --- Validation --------------------------------------------------------------------------

    def clean_body(self) -> str:
        # Browsers post a textarea's lines with CRLF; the autosave's JSON and the importer
        # give LF: stored bodies use LF, so a Save and an autosave of one text are equal.
        body = self.cleaned_data["body"].replace("\r\n", "\n").replace("\r", "\n")
        if message := body_size_error(body):
            raise forms.ValidationError(message)
        return body

    def clean_slug(self) -> str:
        raw = self.cleaned_data["slug"].strip()
        if not raw:
            return self.state["slug"]
        slug = slugify(raw, allow_unicode=True)[:200].strip("-")
        if not slug:
            raise forms.ValidationError("Write the slug with letters or digits.")
        if Note.objects.filter(slug=slug).exclude(pk=self.note.pk).exists():
            raise forms.ValidationError(f"Another note already has the slug “{slug}”.")
        return slug

    def clean_authors(self) -> list[str]:
        handles = [item.lstrip("@").strip() for item in split_list(self.cleaned_data["authors"])]
        handles = list(dict.fromkeys(handle for handle in handles if handle))
        known = set(Author.objects.filter(handle__in=handles).values_list("handle", flat=True))
        unknown = [handle for handle in handles if handle not in known]
        if unknown:
            raise forms.ValidationError(
                f"No author has the handle {', '.join(unknown)}. "
                "An administrator adds authors; pick a handle from the list."
            )
        return handles

    def clean_tags(self) -> list[str]:
        names = [tag_name(name) for name in split_list(self.cleaned_data["tags"])]
        too_long = [name for name in names if len(name) > 100]
        if too_long:
            raise forms.ValidationError(f"A tag is at most 100 characters: {too_long[0][:40]}…")
        return list(dict.fromkeys(names))

    def clean_keywords(self) -> list[str]:
        return split_list(self.cleaned_data["keywords"])

    def clean_weight(self) -> int:
        return self.cleaned_data["weight"] or 0

    def clean_bibliographies(self) -> list[BibFile]:
        names = split_list(self.cleaned_data["bibliographies"])
        usable = {
            bibfile.name: bibfile
            for bibfile in BibFile.objects.usable_by(self.user, note=self.note).filter(
                name__in=names
            )
        }
        unknown = [name for name in names if name not in usable]
        if unknown:
            raise forms.ValidationError(
                f"No bibliography file you may use is called {', '.join(unknown)}."
            )
        return [usable[name] for name in names]

    # --- What the services write -------------------------------------------------------------

    def note_fields(self) -> dict:
        """The fields for notes.services.note_save (bibliographies are written apart)."""
        data = self.cleaned_data
        names = [
            "title", "body", "slug", "date", "authors", "institute", "tags", "summary",
            "description", "show_title", "promotion", "weight", "keywords", "canonical_url",
            "math_macros", *FLAGS,
        ]  # fmt: skip
        fields = {name: data[name] for name in names if name not in self.omitted}
        if "weight" in self.fields and self.fields["weight"].disabled:
            fields.pop("weight", None)
        params = self._params()
        if params != (self.state.get("params") or {}):
            fields["params"] = params
        return fields

    def bibliographies_changed(self) -> bool:
        if "bibliographies" in self.omitted:
            return False
        wanted = [bibfile.name for bibfile in self.cleaned_data["bibliographies"]]
        return self.state["bibliographies"] != wanted

    def _params(self) -> dict:
        params = dict(self.state.get("params") or {})
        for entry_set in self.entry_sets:
            for part in ENTRY_PARTS:
                name = self.entry_field(entry_set, part)
                if name in self.omitted:
                    continue
                value = self.cleaned_data[name].strip()
                if part == "aliases":
                    value = split_list(value, "\n")
                _set_value(params, getattr(entry_set, f"{part}_field"), value)
        return params
