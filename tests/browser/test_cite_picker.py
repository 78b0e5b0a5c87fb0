"""The editor's cite picker in a real browser (static/js/cite-picker.js): search the note's
bibliographies, insert \\cite{key} at the cursor, and let the preview and autosave see it.

Database work that renders runs in a worker thread: the main thread holds Playwright's event
loop, in which the math engine refuses to run.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from bibliography.services import bibfile_import
from notes import services
from tests.browser.editing import BODY, body_has_focus, body_text, signed_in
from tests.browser.worker import in_worker
from tests.people import PASSWORD

pytestmark = pytest.mark.browser

BIB = (
    "@book{knuth, title={The Art of Computer Programming}, author={Knuth, Donald}, year=1968}\n"
    "@book{lamport, title={A {D}ocument Preparation System}, author={Lamport, Leslie},"
    " year=1986}\n"
    "@misc{evil, title={<img src=x onerror=\"document.title='pwned'\">}, year=2020}\n"
)
GRANTS = ("add_note", "change_note", "view_note", "publish_note", "view_author")
PREVIEW = ".editor-preview"


@pytest.fixture
def note_id(browser, transactional_db, live_server, settings) -> int:
    """ada's note, with ada's file attached as its default bibliography."""

    def setup() -> int:
        # Grants given directly: group rows made by a migration do not survive the flushes of
        # earlier transactional tests.
        user = User.objects.create_user("ada", "ada@example.org", PASSWORD)
        user.user_permissions.set(
            Permission.objects.filter(codename__in=GRANTS, content_type__app_label="notes")
        )
        bibfile = bibfile_import(name="bib/ada.bib", raw=BIB, owner=user).bibfile
        note = services.note_create(user=user, title="Citing")
        note = services.note_save(
            note_id=note.pk, user=user, base_version=note.version,
            fields={"body": "Intro.\n\n{{< references >}}\n"},
        ).note  # fmt: skip
        services.note_bibliographies_set(note_id=note.pk, user=user, bibfile_ids=[bibfile.pk])
        return note.pk

    return in_worker(setup)


@pytest.fixture
def page(browser, live_server, note_id):
    page = signed_in(browser, live_server.url, "ada")
    page.goto(f"/write/{note_id}/")
    yield page
    page.context.close()


def _body_value(page) -> str:
    return body_text(page)


def test_enter_inserts_the_citation_at_the_cursor_and_the_preview_numbers_it(page):
    """Place the cursor, open the picker, search, Enter: \\cite{key} lands at the cursor, the
    body has focus again, the preview shows the numbered citation and autosave sends it."""
    page.locator(BODY).click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("See ")
    page.click("button.cite-picker-toggle")
    query = page.locator("#cite-picker-query")
    assert query.evaluate("element => element === document.activeElement")
    page.keyboard.type("lamport")
    # The empty query's list shows first; wait for the search's own.
    expect(page.locator("#cite-picker-results li")).to_have_count(1)
    assert "A Document Preparation System" in page.inner_text("#cite-picker-results")
    with page.expect_response(lambda response: response.url.endswith("/autosave/")) as saved:
        page.keyboard.press("Enter")
        assert _body_value(page).startswith("See \\cite{lamport}Intro.")
        assert body_has_focus(page)
        assert page.locator(".cite-picker-panel").is_hidden()
        preview = page.locator(PREVIEW).first
        preview.locator("sup.citation a", has_text="[1]").wait_for()
        assert "Lamport" in preview.inner_text()
    assert saved.value.ok
    assert not page.errors, page.errors


def test_arrows_and_click_choose_a_result_and_escape_closes(page):
    """The empty query lists the attached file's entries; ArrowDown moves the choice; a click
    inserts too; Escape closes without inserting anything."""
    page.locator(BODY).click()
    page.keyboard.press("Control+End")
    page.click("button.cite-picker-toggle")
    results = page.locator("#cite-picker-results li")
    results.nth(2).wait_for()
    assert [results.nth(i).locator(".cite-picker-key").inner_text() for i in range(3)] == [
        "knuth",
        "lamport",
        "evil",
    ]
    page.keyboard.press("ArrowDown")
    assert results.nth(1).get_attribute("aria-selected") == "true"
    page.keyboard.press("Escape")
    assert page.locator(".cite-picker-panel").is_hidden()
    assert "\\cite" not in _body_value(page)

    page.click("button.cite-picker-toggle")
    page.keyboard.type("knuth")
    expect(results).to_have_count(1)
    with page.expect_response(lambda response: response.url.endswith("/autosave/")) as saved:
        results.first.click()
        assert _body_value(page).endswith("{{< references >}}\n\\cite{knuth}")
    assert saved.value.ok
    assert not page.errors, page.errors


def test_markup_in_an_entry_is_shown_as_text_in_the_results(page):
    """An entry title holding an HTML tag with a handler is displayed as text: no element is
    created and the handler never runs."""
    page.click("button.cite-picker-toggle")
    page.keyboard.type("evil")
    result = page.locator("#cite-picker-results li")
    expect(result).to_have_count(1)
    assert "<img src=x" in result.inner_text()
    assert page.locator("#cite-picker-results img").count() == 0
    page.wait_for_timeout(200)
    assert page.title() != "pwned"
    assert not page.errors, page.errors


def test_a_key_in_a_file_the_author_may_not_use_says_where_it_is(page):
    """Searching a key that only someone else's private file holds offers nothing, and the
    picker says which file it is in and whom to ask."""

    def elsewhere():
        owner = User.objects.create_user("bert", "bert@example.org", PASSWORD)
        bibfile_import(name="bib/bert.bib", raw="@book{berts_key, title={T}}\n", owner=owner)

    # The editor's first preview is still being answered as the page opens; on SQLite a write
    # meanwhile locks the table it reads, and the preview answers 503.
    page.wait_for_load_state("networkidle")
    in_worker(elsewhere)
    page.click("button.cite-picker-toggle")
    page.keyboard.type("berts_key")
    expect(page.locator(".cite-picker-status")).to_have_text(
        "“berts_key” is in bib/bert.bib, which you may not use: ask its owner or an Editor."
    )
    expect(page.locator("#cite-picker-results li")).to_have_count(0)
    assert not page.errors, page.errors
