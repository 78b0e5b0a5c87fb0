"""Revisions a person can read, in Chromium: two revisions picked in the
list are compared as hunks with the changed words marked; Restore asks first, and restoring a
published note writes its working copy. Screenshots in both themes and at 390 px."""

from __future__ import annotations

import re

import pytest

from notes.models import Note
from tests.browser.editing import editor_note
from tests.browser.worker import in_worker

FIRST = "# Heat\n\nThe solution converges in the norm.\n\n" + "Unchanged line.\n" * 30
SECOND = FIRST.replace("in the norm", "in the energy norm") + "A closing remark.\n"


def _save(note: Note, body: str) -> Note:
    from django.contrib.auth.models import User

    from notes import services

    def save():
        user = User.objects.get(username="ada")
        fresh = Note.objects.get(pk=note.pk)
        services.note_save(
            note_id=note.pk, user=user, base_version=fresh.version, fields={"body": body}
        )
        return Note.objects.get(pk=note.pk)

    return in_worker(save)


def _revisions(page, note: Note) -> None:
    page.goto(f"/write/{note.pk}/revisions/")
    page.locator("table.editor-revision-table").wait_for()


def test_two_revisions_picked_in_the_list_are_compared_word_by_word(open_editor, screenshots):
    """Checking From and To and pressing Compare shows one hunk: the changed word inserted
    within its line, the added line, context around, and the unchanged lines far away left
    out. The radio buttons are labelled for screen readers."""
    note = editor_note("Revisions", FIRST)
    _save(note, SECOND)
    page = open_editor(note, viewport={"width": 1200, "height": 900})
    _revisions(page, note)
    numbers = [int(n) for n in page.locator("td:nth-child(3)").all_inner_texts()]
    newest, older = numbers[0], numbers[1]
    page.get_by_label(f"Compare from revision {older}").check()
    page.get_by_label(f"Compare to revision {newest}").check()
    page.get_by_role("button", name="Compare selected revisions").click()
    page.wait_for_url(lambda url: f"a={older}" in url and f"b={newest}" in url)
    diff = page.locator("table.revision-diff")
    assert diff.locator("ins").first.inner_text() == "energy "
    assert "A closing remark." in diff.locator("tr.diff-added").last.inner_text()
    assert diff.locator("tr.diff-hunk").count() == 2  # the edit, and the line added at the end
    assert diff.locator("tr.diff-context").count() <= 4 * 3
    page.screenshot(path=str(screenshots / "editor-revisions-light.png"), full_page=True)
    assert not page.errors, page.errors


def test_restore_asks_first_then_writes_the_working_copy(open_editor, screenshots):
    """Restore… opens a page saying what changes and where; Cancel changes nothing; the
    button restores into the published note's working copy, never the live version."""
    note = editor_note("Restoring", FIRST, publish=True)
    _save(note, SECOND)  # unpublished changes
    page = open_editor(note)
    _revisions(page, note)
    page.get_by_role("link", name=re.compile(r"Restore… revision 1$")).click()
    assert page.locator("h1").inner_text() == "Restore revision 1?"
    page.screenshot(path=str(screenshots / "editor-restore-confirm.png"), full_page=True)
    assert "readers keep seeing the published version" in page.locator("main").inner_text()
    page.get_by_role("link", name="Cancel").click()
    page.wait_for_url(re.compile(r"/revisions/$"))
    page.get_by_role("link", name=re.compile(r"Restore… revision 1$")).click()
    page.get_by_role("button", name="Restore revision 1").click()
    page.wait_for_url(re.compile(rf"/write/{note.pk}/$"))
    assert "as unpublished changes" in page.locator(".editor-messages").inner_text()
    live = in_worker(lambda: Note.objects.get(pk=note.pk))
    assert live.body == FIRST  # the live version is what was published
    assert live.working is not None and "energy" not in live.working.body
    assert not page.errors, page.errors


@pytest.mark.parametrize(
    ("theme", "width"), [("dark", 1200), ("light", 390)], ids=["dark", "phone"]
)
def test_revisions_page_reads_in_dark_and_on_a_phone(open_editor, screenshots, theme, width):
    """The diff in the dark theme and at 390 px: the page never scrolls sideways."""
    note = editor_note(f"Revisions {theme}", FIRST)
    _save(note, SECOND)
    page = open_editor(note, viewport={"width": width, "height": 900})
    page.evaluate("(theme) => localStorage.setItem('pref-theme', theme)", theme)
    _revisions(page, note)
    page.locator("a", has_text="Changes").first.click()
    page.locator("table.revision-diff").wait_for()
    page.screenshot(path=str(screenshots / f"editor-revisions-{theme}-{width}.png"), full_page=True)
    assert page.evaluate("() => document.documentElement.dataset.theme") == theme
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    assert not page.errors, page.errors
