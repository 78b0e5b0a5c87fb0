"""A form saved untouched changes nothing: every field the editor (and the admin's change
form) shows comes back as it was stored, for every demo note and every note of the theme's
example site. The form is read from the page as a browser submits it (lxml's form values:
the selected option, checked boxes, textareas), not built from the model."""

from __future__ import annotations

import difflib
from io import StringIO

import lxml.html
import pytest
from django.core.management import call_command
from django.forms.models import model_to_dict
from django.urls import reverse

from notes.models import Note
from notes.services.working import working_state

pytestmark = pytest.mark.django_db

# Kept by the save itself, not shown in the form: the optimistic lock and the stored render.
ERRORS = "//ul[contains(@class, 'errorlist')]/li"

BOOKKEEPING = {"version", "updated", "modified", "rendered_at"}


def row_state(note: Note) -> dict:
    """The note's row, field by field (its many-to-many links included), and what its authors
    edit (the working copy, or the row's own state)."""
    note.refresh_from_db()
    fields = {
        name: value
        for name, value in model_to_dict(note).items()
        if name not in BOOKKEEPING and not name.startswith("rendered")
    }
    return {"row": fields, "working": working_state(note)}


def submitted_form(page: bytes, form_id: str | None = None) -> dict:
    """The fields a browser would post from the page's form (the editor's or the admin's)."""
    document = lxml.html.fromstring(page)
    forms = [form for form in document.forms if form.method.lower() == "post"]
    if form_id:
        forms = [form for form in forms if form.get("id") == form_id]
    form = max(forms, key=lambda form: len(form.inputs))
    for textarea in form.xpath(".//textarea"):
        # HTML's parser drops a newline right after <textarea> (Django writes one so that a
        # value's own leading newline survives); libxml2's keeps it.
        if textarea.text and textarea.text.startswith("\n"):
            textarea.text = textarea.text[1:]
    data: dict[str, list[str]] = {}
    for name, value in form.form_values():
        data.setdefault(name, []).append(value)
    return data


def difference(old, new) -> object:
    if isinstance(old, str) and isinstance(new, str):
        return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), n=1))
    return (old, new)


def assert_unchanged(before: dict, after: dict, slug: str) -> None:
    for part in ("row", "working"):
        changed = {
            name: difference(before[part].get(name), after[part].get(name))
            for name in set(before[part]) | set(after[part])
            if before[part].get(name) != after[part].get(name)
        }
        assert not changed, f"{slug}: saving the untouched form changed the {part}: {changed}"


def save_untouched_in_editor(client, note: Note) -> None:
    page = client.get(reverse("editor:edit", args=[note.pk]))
    assert page.status_code == 200
    data = submitted_form(page.content)
    data["action"] = ["save"]
    answer = client.post(reverse("editor:edit", args=[note.pk]), data)
    assert answer.status_code in (200, 302), answer.status_code
    if answer.status_code == 200:
        errors = lxml.html.fromstring(answer.content).xpath(ERRORS)
        assert not errors, [error.text_content() for error in errors]


def save_untouched_in_admin(client, note: Note) -> None:
    url = reverse("admin:notes_note_change", args=[note.pk])
    page = client.get(url)
    assert page.status_code == 200
    data = submitted_form(page.content, form_id="note_form")
    data["_save"] = ["Save"]
    answer = client.post(url, data)
    assert answer.status_code == 302, lxml.html.fromstring(answer.content).xpath(ERRORS)


def every_note_round_trips(client, save) -> None:
    notes = list(Note.objects.order_by("slug"))
    assert notes
    for note in notes:
        before = row_state(note)
        save(client, note)
        assert_unchanged(before, row_state(note), note.slug)


@pytest.mark.slow
def test_every_demo_note_saved_untouched_in_the_editor_is_unchanged(
    demo_loaded, client, editor_user
):
    """Each demo note's editor form, posted back as loaded, leaves its row and working copy as
    they were (the card-title choice read "Theme rule" for every note and was saved so)."""
    client.force_login(editor_user)
    every_note_round_trips(client, save_untouched_in_editor)


def test_every_demo_note_saved_untouched_in_the_admin_is_unchanged(demo_loaded, client, admin_user):
    """The admin's change form, posted back as loaded, changes no note."""
    client.force_login(admin_user)
    every_note_round_trips(client, save_untouched_in_admin)


@pytest.fixture
def example_loaded(example_site, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("import_hugo", str(example_site), stdout=StringIO())


@pytest.mark.slow
def test_every_example_note_saved_untouched_in_the_editor_is_unchanged(
    example_loaded, client, editor_user
):
    """The theme's 70 example notes, imported, each saved untouched in the editor: unchanged."""
    client.force_login(editor_user)
    every_note_round_trips(client, save_untouched_in_editor)


@pytest.mark.slow
def test_every_example_note_saved_untouched_in_the_admin_is_unchanged(
    example_loaded, client, admin_user
):
    """The same notes through the admin's change form: unchanged."""
    client.force_login(admin_user)
    every_note_round_trips(client, save_untouched_in_admin)
