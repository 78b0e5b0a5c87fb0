"""The editor's form: the note's fields an author edits, and the version the page loaded."""

from __future__ import annotations

from django import forms
from django.utils import timezone
from markdownx.widgets import MarkdownxWidget


class NotePreviewWidget(MarkdownxWidget):
    """markdownx's widget, previewing through the note's own endpoint (login and permission
    checked, rendered in the note's context) instead of the site-wide setting."""

    def __init__(self, preview_url: str, attrs=None):
        super().__init__(attrs)
        self.preview_url = preview_url

    def get_context(self, name, value, attrs=None):
        context = super().get_context(name, value, attrs)
        context["widget"]["attrs"]["data-markdownx-urls-path"] = self.preview_url
        context["widget"]["attrs"]["data-markdownx-upload-urls-path"] = ""
        return context


class NoteEditorForm(forms.Form):
    base_version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    title = forms.CharField(max_length=300, required=False)
    body = forms.CharField(required=False, strip=False)
    summary = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    tags = forms.CharField(required=False, max_length=2000, help_text="Comma-separated tag names.")
    date = forms.DateTimeField(
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="A future date schedules the note.",
    )
    show_title = forms.NullBooleanField(
        required=False,
        widget=forms.Select(choices=[("unknown", "Theme rule"), ("true", "Yes"), ("false", "No")]),
    )

    def __init__(self, *args, note_id: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["body"].widget = NotePreviewWidget(
            preview_url=f"/write/{note_id}/preview/", attrs={"rows": 24}
        )

    @classmethod
    def initial_for(cls, note) -> dict:
        return {
            "base_version": note.version,
            "title": note.title,
            "body": note.body,
            "summary": note.summary,
            "tags": ", ".join(sorted(note.tags.values_list("name", flat=True))),
            "date": timezone.localtime(note.date),
            "show_title": note.show_title,
        }

    def note_fields(self) -> dict:
        data = self.cleaned_data
        return {
            "title": data["title"],
            "body": data["body"],
            "summary": data["summary"],
            "tags": [name.strip() for name in data["tags"].split(",") if name.strip()],
            "date": data["date"],
            "show_title": data["show_title"],
        }
