"""NOTE_BODY_MAX_BYTES: the write paths refuse a larger body with a clear message
and write nothing; a body at the limit saves, previews and renders in time."""

from __future__ import annotations

import json
import time

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from hugosite import loading
from hugosite.reading import NoteSource
from notes import services
from notes.models import Note, NoteRevision

MB = 1024 * 1024
SECONDS = 5.0


def _state(note: Note) -> tuple:
    note = Note.objects.get(pk=note.pk)
    return note.version, note.body, note.rendered_html, note.revisions.count()


def _cpu(function):
    """Call `function`; assert it took under SECONDS of CPU time (the machine is shared, so
    the wall clock measures the neighbours too)."""
    start = time.process_time()
    result = function()
    assert time.process_time() - start < SECONDS
    return result


def test_default_limit_and_request_size_leave_room_for_form_encoding():
    """2 MB by default; Django accepts a request three times that (percent-encoding)."""
    assert django_settings.NOTE_BODY_MAX_BYTES == 2 * MB
    assert django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE >= 3 * django_settings.NOTE_BODY_MAX_BYTES


def test_body_check_counts_utf8_bytes_and_names_both_sizes(settings):
    """A body is measured in UTF-8 bytes: 50 × "é" is 100 bytes, at a limit of 100 it passes,
    one more byte is refused with a message on the body field."""
    settings.NOTE_BODY_MAX_BYTES = 100
    services.body_check("é" * 50)
    with pytest.raises(ValidationError) as refused:
        services.body_check("é" * 50 + "x")
    message = refused.value.message_dict["body"][0]
    assert "101 bytes" in message and "the limit is 100 bytes" in message
    assert "Nothing was saved" in message


@pytest.mark.parametrize("kind", [NoteRevision.Kind.SAVE, NoteRevision.Kind.AUTOSAVE])
def test_note_save_over_the_limit_writes_nothing(settings, author, note, kind):
    """An explicit save or an autosave over the limit raises before any write: the note, its
    stored render and its revisions are as they were."""
    settings.NOTE_BODY_MAX_BYTES = 100
    before = _state(note)
    with pytest.raises(ValidationError, match="the limit is 100 bytes"):
        services.note_save(
            note_id=note.pk, user=author, base_version=note.version,
            fields={"body": "x" * 101, "title": "Changed"}, kind=kind,
        )  # fmt: skip
    assert _state(note) == before


def test_conflicting_save_over_the_limit_is_refused_too(settings, author, note):
    """A stale save is normally kept as a conflict revision; an oversized one is refused
    first, so no revision holds a body the site would not accept."""
    settings.NOTE_BODY_MAX_BYTES = 100
    before = _state(note)
    with pytest.raises(ValidationError):
        services.note_save(
            note_id=note.pk, user=author, base_version=note.version - 1,
            fields={"body": "x" * 101},
        )  # fmt: skip
    assert _state(note) == before


def test_note_save_at_the_limit_saves(settings, author, note):
    """A body exactly at the limit is saved and rendered."""
    settings.NOTE_BODY_MAX_BYTES = 100
    result = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "é" * 50}
    )
    saved = Note.objects.get(pk=note.pk)
    assert not result.conflict and saved.body == "é" * 50 and "é" in saved.rendered_html


def _source(body: str) -> NoteSource:
    return NoteSource(path="content/notes/big.md", slug="big", title="Big", body=body)


def test_note_import_over_the_limit_creates_nothing(settings, db):
    """An imported body over the limit is refused; the import of the other files goes on
    (hugo_site_load reports it per file)."""
    settings.NOTE_BODY_MAX_BYTES = 100
    with pytest.raises(ValidationError, match="the limit is 100 bytes"):
        loading.note_import(source=_source("x" * 101))
    assert not Note.objects.filter(slug="big").exists()
    note, outcome = loading.note_import(source=_source("x" * 100))
    assert outcome == "created" and note.body == "x" * 100


# --- Over HTTP -------------------------------------------------------------------------------


def _form(note: Note, body: str) -> dict:
    return {
        "base_version": note.version,
        "title": note.title,
        "body": body,
        "summary": "",
        "tags": "",
        "date": timezone.localtime(note.date).strftime("%Y-%m-%dT%H:%M"),
        "show_title": "unknown",
        "action": "save",
    }


def _big_body() -> str:
    unit = "Prose with $x^2$ and **bold** text, a [link](https://example.org).\n\n"
    return (unit * (2 * MB // len(unit) + 1))[: 2 * MB]


def test_preview_of_a_body_at_the_limit_responds_in_time(client, author, note):
    """/write/<id>/preview/ with a 2 MB body: a 200 with the rendered note (or its announced
    fallback) within the time limit."""
    client.force_login(author)
    body = _big_body()
    response = _cpu(lambda: client.post(f"/write/{note.pk}/preview/", {"content": body}))
    assert response.status_code == 200
    assert "Prose with" in response.content.decode()


def test_preview_over_the_limit_shows_the_error_at_once(settings, client, author, note):
    """Over the limit the preview is the renderer's error paragraph and a problem entry."""
    settings.NOTE_BODY_MAX_BYTES = 1000
    client.force_login(author)
    response = _cpu(lambda: client.post(f"/write/{note.pk}/preview/", {"content": "x" * 1001}))
    text = response.content.decode()
    assert response.status_code == 200
    assert 'class="render-error"' in text and "over the limit" in text
    assert "x" * 1001 not in text


def test_editor_save_of_a_body_at_the_limit_saves_in_time(client, author, note):
    """Saving a 2 MB body through the editor form: stored, rendered, redirected, in time."""
    client.force_login(author)
    body = _big_body()
    response = _cpu(lambda: client.post(f"/write/{note.pk}/", _form(note, body)))
    assert response.status_code == 302
    saved = Note.objects.get(pk=note.pk)
    assert saved.body == body and "Prose with" in saved.rendered_html


def test_request_larger_than_django_accepts_is_a_clear_400(settings, client, author, note):
    """A request body over DATA_UPLOAD_MAX_MEMORY_SIZE is refused with the site's 400 page
    explaining it, not a 500; the note is untouched."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    client.force_login(author)
    before = _state(note)
    response = client.post(f"/write/{note.pk}/", _form(note, "x" * 20_000))
    assert response.status_code == 400
    assert "larger than the site accepts" in response.content.decode()
    assert _state(note) == before


def test_editor_save_over_the_limit_shows_the_error_in_the_form(settings, client, author, note):
    """Over NOTE_BODY_MAX_BYTES the editor answers 400 with the message next to the body and
    the author's text still in the textarea."""
    settings.NOTE_BODY_MAX_BYTES = 1000
    client.force_login(author)
    before = _state(note)
    response = client.post(f"/write/{note.pk}/", _form(note, "y" * 1001))
    text = response.content.decode()
    assert response.status_code == 400
    assert "the limit is 1,000 bytes" in text and "y" * 1001 in text
    assert _state(note) == before


def test_autosave_over_the_limit_is_a_json_error(settings, client, author, note):
    """An autosave over the limit answers 400 with the message as JSON; nothing is written."""
    settings.NOTE_BODY_MAX_BYTES = 1000
    client.force_login(author)
    before = _state(note)
    response = client.post(
        f"/write/{note.pk}/autosave/",
        json.dumps({"body": "y" * 1001, "base_version": note.version}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "the limit is 1,000 bytes" in response.json()["error"]
    assert _state(note) == before
