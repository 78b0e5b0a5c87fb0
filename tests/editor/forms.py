"""The editor page's form as a browser posts it, for tests that save through the view."""

from __future__ import annotations

from django.utils import timezone


def editor_form(note, **changes) -> dict:
    """Every field of the editor's form for `note` as loaded (Save), with `changes` over it."""
    data = {
        "base_version": note.version,
        "title": note.title,
        "body": note.body,
        "summary": "",
        "tags": "",
        "date": timezone.localtime(note.date).strftime("%Y-%m-%dT%H:%M"),
        "show_title": "unknown",
        "action": "save",
    }
    return {**data, **changes}
