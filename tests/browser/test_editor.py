"""The web editor in a real browser: live preview, problems, conflicts, publishing, autosave.

Database work that renders (creating notes, importing .bib files) runs in a worker thread: the
main thread holds Playwright's event loop, in which the math engine refuses to run.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from bibliography.services import bibfile_import
from notes import services
from notes.models import Note, NoteRevision, Status
from tests.browser.editing import (
    BODY,
    body_has_focus,
    body_text,
    fill_body,
    place_cursor,
    selected_text,
    set_body_text,
    type_before_the_editor_loads,
    visible_line_end,
    wait_for_body_text,
)
from tests.browser.worker import in_worker
from tests.people import PASSWORD

pytestmark = pytest.mark.browser

BIB = "@book{knuth, title={The Art of Computer Programming}, author={Knuth, Donald}, year=1968}"
GRANTS = ("add_note", "change_note", "view_note", "publish_note", "view_author")


def _author(name: str) -> User:
    """An Author-role user (the grants of the Author group, given directly: the group rows
    that a migration made do not survive the flushes of earlier transactional tests)."""
    user = User.objects.create_user(
        name, f"{name}@example.org", PASSWORD, first_name=name.title(), last_name="Tester"
    )
    user.user_permissions.set(
        Permission.objects.filter(codename__in=GRANTS, content_type__app_label="notes")
    )
    services.author_for_user(user)
    return user


@pytest.fixture
def site(browser, transactional_db, live_server, settings):

    def setup():
        user = _author("ada")
        bibfile_import(name="bib/refs.bib", raw=BIB, owner=user)
        return user

    in_worker(setup)
    return live_server.url


@pytest.fixture
def open_page(browser, site):
    """`open_page()` → a page in a fresh context (its own cookies and localStorage)."""
    contexts = []

    def opener():
        context = browser.new_context(base_url=site)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.errors = errors
        return page

    yield opener
    for context in contexts:
        context.close()


def log_in(page, name: str = "ada") -> None:
    page.goto("/accounts/login/")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/write/"))


def new_note(page, title: str) -> int:
    page.goto("/write/")
    page.fill("form.editor-new input[name=title]", title)
    page.click("form.editor-new button[type=submit]")
    page.wait_for_url(re.compile(r"/write/\d+/$"))
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def make_note(title: str, body: str) -> Note:
    def create():
        user = User.objects.get(username="ada")
        note = services.note_create(user=user, title=title)
        return services.note_save(
            note_id=note.pk, user=user, base_version=note.version, fields={"body": body}
        ).note

    return in_worker(create)


def track_previews(page) -> dict:
    """Counts preview requests and the most that were in flight at once."""
    state = {"sent": 0, "most": 0}
    open_requests = set()

    def started(request):
        if request.url.endswith("/preview/"):
            state["sent"] += 1
            open_requests.add(request)
            state["most"] = max(state["most"], len(open_requests))

    def ended(request):
        open_requests.discard(request)

    page.on("request", started)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)
    return state


def wait_autosaved(page) -> None:
    page.wait_for_selector("form.editor-form[data-autosave=saved]")


def test_write_math_and_a_citation_then_publish(open_page, screenshots):
    """Log in, create a note, attach a bibliography in the side panel, type math and a
    citation: the preview typesets the math and numbers the citation; publish; the feed
    shows the note to readers."""
    page = open_page()
    log_in(page)
    note_id = new_note(page, "Browser note")
    page.fill("input[name=bibliographies]", "bib/refs.bib")
    page.fill("input[name=tags]", "Browser, Testing")
    page.click("button[name=action][value=save]")
    page.wait_for_selector(".editor-messages >> text=Saved.")
    assert in_worker(lambda: list(Note.objects.get(pk=note_id).bibliographies.all()))

    previews = track_previews(page)
    page.locator(BODY).click()
    # Slower than the preview's pause in places, so previews go out while typing goes on.
    for chunk in (
        "Euler: $e^{i\\pi} + 1 = 0$",
        " as in \\cite{knuth}.",
        "\n\n{{< references >}}\n",
    ):
        page.keyboard.type(chunk, delay=15)
        page.wait_for_timeout(400)
    preview = page.locator(".editor-preview")
    preview.locator(".katex").first.wait_for()
    preview.locator("sup.citation a", has_text="[1]").wait_for()
    assert "Knuth" in preview.inner_text()
    assert previews["sent"] >= 2 and previews["most"] == 1, previews  # one in flight at most
    assert previews["sent"] < 20, previews  # debounced, not one per keystroke
    assert page.locator(".editor-problem-count").inner_text() == "0"
    page.screenshot(path=str(screenshots / "editor-split.png"), full_page=True)

    wait_autosaved(page)
    page.click("button[name=action][value=publish]")
    page.wait_for_selector(".editor-messages >> text=Published.")
    assert in_worker(lambda: Note.objects.get(pk=note_id).status) == Status.PUBLISHED

    reader = open_page()
    reader.goto("/")
    slug = in_worker(lambda: Note.objects.get(pk=note_id).slug)
    reader.locator(f'a[href="/notes/{slug}/"]').first.wait_for()
    reader.goto(f"/notes/{slug}/")
    assert reader.locator(".note-body .katex").count() >= 1
    assert reader.locator(".note-body sup.citation").count() == 1
    assert not page.errors and not reader.errors


def test_macros_typed_in_the_side_panel_reach_the_preview_before_a_save(open_page, screenshots):
    """A formula using \\Ex is a problem until the side panel's Math macros define it; the
    preview typesets it as soon as the definition is typed, and Save keeps the macros."""
    note = make_note("Macros", "The mean $\\Ex[X]$ of a variable.\n")
    page = open_page()
    log_in(page)
    page.goto(f"/write/{note.pk}/")
    preview = page.locator(".editor-preview")
    preview.locator(".math-error").first.wait_for()
    page.locator(".editor-macros-group summary").click()
    page.fill("textarea[name=math_macros]", "\\newcommand{\\Ex}{\\mathbb{E}}")
    preview.locator(".katex .mathbb").first.wait_for()
    assert preview.locator(".math-error").count() == 0
    page.locator(".editor-problem-count", has_text="0").wait_for()
    page.screenshot(path=str(screenshots / "editor-macros.png"), full_page=True)
    page.click("button[name=action][value=save]")
    page.wait_for_selector(".editor-messages >> text=Saved.")
    assert in_worker(lambda: Note.objects.get(pk=note.pk).math_macros) == (
        "\\newcommand{\\Ex}{\\mathbb{E}}"
    )
    assert not page.errors


def test_conflict_from_a_second_browser_shows_both_versions(open_page):
    """Two browsers open the note; one saves; the other's save is refused and the page shows
    both versions side by side, with the refused text kept as a revision."""
    note = make_note("Shared note", "Start.")
    first, second = open_page(), open_page()
    for page in (first, second):
        log_in(page)
        page.goto(f"/write/{note.pk}/")
    fill_body(first, "First browser's text.")
    first.click("button[name=action][value=save]")
    first.wait_for_selector(".editor-messages >> text=Saved.")
    fill_body(second, "Second browser's text.")
    second.click("button[name=action][value=save]")
    second.wait_for_selector(".editor-conflict")
    assert "First browser's text." in second.locator(".editor-conflict-theirs").inner_text()
    assert "Second browser's text." in second.locator(".editor-conflict-yours").inner_text()
    stored = in_worker(lambda: Note.objects.get(pk=note.pk))
    assert stored.body == "First browser's text."
    kept = in_worker(lambda: stored.revisions.filter(kind=NoteRevision.Kind.CONFLICT).first())
    assert kept.body == "Second browser's text."


def test_problems_panel_lists_problems_and_a_click_selects_the_line(open_page):
    """A broken citation on line 5 appears in the panel after the preview; clicking it
    selects line 5 in the source."""
    note = make_note("Problems", "One.\n")
    page = open_page()
    log_in(page)
    page.goto(f"/write/{note.pk}/")
    text = (
        'Line one.\n\nLine three.\n\nSee \\cite{ghost}.\n\n{{< references bib="bib/refs.bib" >}}\n'
    )
    fill_body(page, text)
    problem = page.locator(".editor-problem[data-line='5']")
    problem.wait_for()
    assert "ghost" in problem.inner_text()
    page.locator(".editor-problem-count", has_text="1").wait_for()
    place_cursor(page, 0)
    problem.click()
    assert body_has_focus(page)
    assert selected_text(page) == "See \\cite{ghost}."


def test_preview_keeps_scroll_and_redraws_only_changed_diagrams(open_page):
    """Typing below a Mermaid diagram keeps its drawing and the pane's scroll position;
    changing the diagram draws it again; math renders throughout."""
    paragraphs = "\n\n".join(f"Paragraph {n} with $x_{{{n}}}$." for n in range(60))
    body = f"```mermaid\ngraph TD; A-->B\n```\n\n{paragraphs}\n"
    note = make_note("Diagram", body)
    page = open_page()
    log_in(page)
    page.goto(f"/write/{note.pk}/")
    page.locator(".editor-preview pre.mermaid svg").wait_for()
    page.wait_for_function(
        "() => document.querySelector('form.editor-form').dataset.mermaidRuns === '1'"
    )
    pane = page.locator(".editor-preview-pane")
    pane.evaluate("el => { el.scrollTop = 400 }")
    page.wait_for_function("() => document.querySelector('.cm-scroller').scrollTop > 0")
    # Unchanged blocks stay the same DOM nodes: only what changed is replaced.
    page.evaluate("() => { document.querySelector('.editor-preview p').dataset.kept = 'yes' }")
    # Where the source shows (it followed the pane): typing out of sight would scroll the
    # source to the cursor, and the pane would rightly follow it.
    place_cursor(page, visible_line_end(page))
    page.keyboard.type("\nThe end.")
    page.locator(".editor-preview p", has_text="The end.").wait_for()
    assert pane.evaluate("el => el.scrollTop") == 400
    assert page.locator(".editor-preview p[data-kept=yes]").count() == 1
    assert page.locator(".editor-preview pre.mermaid svg").count() == 1
    assert (
        page.evaluate("() => document.querySelector('form.editor-form').dataset.mermaidRuns") == "1"
    )
    place_cursor(page, 26)  # after A-->B
    page.keyboard.type("-->C")
    page.wait_for_function(
        "() => document.querySelector('form.editor-form').dataset.mermaidRuns === '2'"
    )
    assert page.locator(".editor-preview pre.mermaid svg").count() == 1
    assert not page.errors


def test_autosave_failures_are_retried_and_nothing_is_lost(open_page):
    """The first autosaves fail (503, then the network): the page says it is retrying and
    keeps the text in localStorage; once the server answers, the text is saved."""
    note = make_note("Flaky", "Before.")
    page = open_page()
    log_in(page)
    page.goto(f"/write/{note.pk}/")
    failures = {"left": 2}

    def flaky(route):
        if failures["left"] == 2:
            failures["left"] -= 1
            route.fulfill(status=503, content_type="text/html", body="<h1>Down</h1>")
        elif failures["left"] == 1:
            failures["left"] -= 1
            route.abort("connectionrefused")
        else:
            route.continue_()

    page.route("**/autosave/", flaky)
    fill_body(page, "Typed while the database was down.")
    page.locator(".editor-autosave-status", has_text="Not saved yet — retrying").wait_for()
    kept = page.evaluate(
        "() => Object.keys(localStorage).filter(k => k.startsWith('scidraft:unsaved:'))"
        ".map(k => JSON.parse(localStorage.getItem(k)).body)"
    )
    assert kept == ["Typed while the database was down."]
    page.locator(".editor-autosave-status", has_text="Autosaved").wait_for(timeout=20_000)
    assert failures["left"] == 0
    assert in_worker(lambda: Note.objects.get(pk=note.pk).body) == (
        "Typed while the database was down."
    )
    assert (
        page.evaluate(
            "() => Object.keys(localStorage).filter(k => k.startsWith('scidraft:unsaved:')).length"
        )
        == 0
    )


def _editor_offline(open_page, title: str):
    """ada's editor of a new note reading "Server text.", with every autosave failing."""
    note = make_note(title, "Server text.")
    page = open_page()
    log_in(page)
    page.route("**/autosave/", lambda route: route.abort("internetdisconnected"))
    page.goto(f"/write/{note.pk}/")
    page.locator("form.editor-form[data-editor=codemirror]").wait_for(state="attached")
    return page, note


def test_unsaved_text_is_offered_back_on_the_next_visit(open_page):
    """With every autosave failing, the text survives a reload: the editor offers to restore
    it, and restoring puts it back in the source."""
    page, note = _editor_offline(open_page, "Offline")
    set_body_text(page, "Written offline.")
    page.locator(".editor-autosave-status", has_text="Not saved yet").wait_for()
    page.goto(f"/write/{note.pk}/")
    restore = page.locator(".editor-restore")
    restore.wait_for()
    assert "newer than the saved note" in restore.inner_text()
    page.locator("form.editor-form[data-editor=codemirror]").wait_for(state="attached")
    assert body_text(page) == "Server text."
    page.click("[data-restore]")
    wait_for_body_text(page, "Written offline.")
    assert body_text(page) == "Written offline."


def test_the_unsaved_copy_is_made_as_the_page_is_hidden(open_page):
    """A phone discards a background tab without a beforeunload: the local copy of unsaved
    text is made as the page is hidden, not only 400 ms after the last key."""
    page, note = _editor_offline(open_page, "Hidden")
    place_cursor(page, len("Server text."))
    kept = (
        "(id) => Object.keys(localStorage).filter((k) => k.startsWith('scidraft:unsaved:' + id"
        " + ':')).map((k) => JSON.parse(localStorage.getItem(k)).body)"
    )
    page.keyboard.type(" Typed.")
    page.evaluate("() => window.dispatchEvent(new PageTransitionEvent('pagehide'))")
    assert page.evaluate(kept, str(note.pk)) == ["Server text. Typed."]
    page.keyboard.type(" More.")
    page.evaluate(
        "() => { Object.defineProperty(document, 'visibilityState', {value: 'hidden',"
        " configurable: true}); document.dispatchEvent(new Event('visibilitychange')); }"
    )
    assert page.evaluate(kept, str(note.pk)) == ["Server text. Typed. More."]


def test_typing_before_the_editor_loads_goes_on_where_it_was(open_page):
    """Text typed in the plain textarea while the editor's script is still on its way stays,
    and CodeMirror takes over with the caret where it was and the focus: the next keys land
    right after the first ones, not at the start and not nowhere."""
    note = make_note("Early", "First line.\nSecond line.")
    page = open_page()
    log_in(page)
    type_before_the_editor_loads(page, f"/write/{note.pk}/", 11, " Typed early.")
    page.locator("form.editor-form[data-editor=codemirror]").wait_for(state="attached")
    assert body_has_focus(page)
    page.keyboard.type(" And on.")
    wait_for_body_text(page, "First line. Typed early. And on.\nSecond line.")
    assert not page.errors


def test_split_view_resizes_and_full_preview_mode(open_page, screenshots):
    """Dragging the divider changes the source's share; "Full preview" hides the source and
    gives the preview the whole width; "Split" brings both back."""
    note = make_note("Views", "Some $x^2$ text.")
    page = open_page()
    page.set_viewport_size({"width": 1400, "height": 900})
    log_in(page)
    page.goto(f"/write/{note.pk}/")
    source = page.locator(".editor-source")
    preview = page.locator(".editor-preview-pane")
    before = source.bounding_box()["width"]
    divider = page.locator(".editor-divider").bounding_box()
    page.mouse.move(divider["x"] + 4, divider["y"] + 50)
    page.mouse.down()
    page.mouse.move(divider["x"] - 150, divider["y"] + 50, steps=5)
    page.mouse.up()
    assert source.bounding_box()["width"] < before - 100
    page.click("[data-view-button=preview]")
    assert not source.is_visible() and preview.is_visible()
    assert preview.bounding_box()["width"] > before
    page.screenshot(path=str(screenshots / "editor-full-preview.png"))
    page.click("[data-view-button=split]")
    assert source.is_visible() and preview.is_visible()


def test_tags_and_authors_complete_item_by_item(open_page):
    """The comma-separated fields suggest known names for the item being typed, after the
    items already written, and leave out names already chosen."""
    note = make_note("Completion", "Text.")

    def tagged():
        # Offered tags (Tag.objects.offered_to): one on this draft, one public.
        note.tags.add(services.tag_get_or_create("Browser"))
        public = make_note("Published", "Published text.")
        user = User.objects.get(username="ada")
        public = services.note_save(
            note_id=public.pk, user=user, base_version=public.version,
            fields={"tags": ["Brownian"]},
        ).note  # fmt: skip
        services.note_publish(note_id=public.pk, user=user, base_version=public.version)

    in_worker(tagged)
    page = open_page()
    log_in(page)
    page.goto(f"/write/{note.pk}/")
    page.fill("input[name=tags]", "Browser, bro")
    options = page.eval_on_selector_all(
        "#id_tags-completions option", "options => options.map(o => o.value)"
    )
    assert options == ["Browser, Brownian"]
    page.fill("input[name=authors]", "")
    options = page.eval_on_selector_all(
        "#id_authors-completions option", "options => options.map(o => [o.value, o.label])"
    )
    assert options == [["ada", "Ada Tester"]]


def test_the_headers_revision_follows_the_autosaves(open_page):
    """The header names the newest revision as the revisions list numbers it, and an
    autosave's new revision shows there at once (it stayed at the page's load)."""
    note = make_note("Counted", "Before.")
    page = open_page()
    log_in(page)
    page.goto(f"/write/{note.pk}/")
    shown = page.locator(".editor-revision")
    newest = in_worker(lambda: Note.objects.get(pk=note.pk).revisions.count())
    assert shown.inner_text() == str(newest)
    fill_body(page, "After.")
    page.locator(".editor-autosave-status", has_text="Autosaved").wait_for(timeout=20_000)
    saved = in_worker(
        lambda: Note.objects.get(pk=note.pk).revisions.order_by("-number").first().number
    )
    assert saved > newest
    assert shown.inner_text() == str(saved)


def test_the_account_menu_changes_the_password_and_signs_out(open_page, screenshots):
    """The editor's header names the person; its menu leads to Change password and signs out
    with a POST; a public page then shows Sign in, no Sign out."""
    page = open_page()
    log_in(page)
    menu = page.locator("#menu li.account-menu")
    expect(menu.locator(".menu-label")).to_contain_text("Ada Tester")
    menu.locator(".menu-label").click()
    expect(menu.get_by_role("link", name="Change password")).to_be_visible()
    page.screenshot(path=str(screenshots / "editor-account-menu.png"))
    menu.get_by_role("link", name="Change password").click()
    page.wait_for_url(re.compile(r"/accounts/password/change/$"))
    page.goto("/")
    header = page.locator("header.header")
    expect(header.get_by_role("link", name="Write")).to_be_visible()
    page.screenshot(path=str(screenshots / "site-signed-in-header.png"))
    header.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r"/$"))
    expect(page.locator("footer.footer").get_by_role("link", name="Sign in")).to_be_visible()
    assert page.locator("header.header").get_by_role("button", name="Sign out").count() == 0
    page.goto("/write/")
    page.wait_for_url(re.compile(r"/accounts/login/"))
    page.screenshot(path=str(screenshots / "site-signed-out-footer.png"))
    assert not page.errors, page.errors
