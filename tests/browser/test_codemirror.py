"""The note editor as researchers expect it, in a real browser: CodeMirror's
highlighting, completion from the site's data, problems in the gutter, scroll sync, undoable
inserts, Ctrl+S, the syntax guide panel, the phone layout, keyboard use, and screenshots.

Database work that renders runs in a worker thread: the main thread holds Playwright's event
loop, in which the math engine refuses to run.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from notes.models import Note, NoteRevision
from tests.browser.editing import (
    BODY,
    body_has_focus,
    body_text,
    editor_note,
    place_cursor,
    selected_text,
)
from tests.browser.worker import in_worker

pytestmark = pytest.mark.browser

SHOWCASE = r"""# Heat flow

The solution $u(x,t)$ satisfies \(u_t = \alpha u_{xx}\), see \cite{knuth}.

$$
\int_0^1 u(x,t)\,dx = C \label{eq:mass}
$$

:::theorem[Maximum principle]{#thm-max}
The maximum of \(u\) is reached on the boundary.
:::

{{< references bib="bib/refs.bib" title="References" >}}

```python
def step(u):
    return u
```

```mermaid
flowchart LR
  A --> B
```
"""


def _preview_answered(page) -> None:
    page.wait_for_selector("form.editor-form[data-preview-seq]")


def _source_top_line(page) -> int:
    """The number of the source line at the top of the editor."""
    return page.evaluate(
        """() => {
          const v = SciDraftBody.of(document.querySelector('textarea[name=body]')).view;
          const top = v.scrollDOM.getBoundingClientRect().top;
          const block = v.lineBlockAtHeight(top - v.documentTop + 4);
          return v.state.doc.lineAt(block.from).number;
        }"""
    )


def _preview_top_line(page) -> int:
    """The source line of the first preview block showing at the top of the pane."""
    return page.evaluate(
        """() => {
          const pane = document.querySelector('.editor-preview-pane');
          const top = pane.getBoundingClientRect().top;
          const blocks = [...pane.querySelectorAll('[data-source-line]')];
          const first = blocks.find((b) => b.getBoundingClientRect().bottom > top + 4);
          return first ? parseInt(first.dataset.sourceLine, 10) : -1;
        }"""
    )


def _completions(page) -> list[str]:
    page.locator(".cm-tooltip-autocomplete li").first.wait_for()
    return page.locator(".cm-tooltip-autocomplete li .cm-completionLabel").all_inner_texts()


def test_highlighting_and_editing_basics(open_editor, screenshots):
    """The textarea is hidden behind CodeMirror, with line numbers and soft wrap; math (with
    the TeX inside coloured), environments, shortcodes, citations and code fences are
    highlighted; brackets match; search and replace works; the form posts CodeMirror's text."""
    note = editor_note("Showcase", SHOWCASE)
    page = open_editor(note)
    assert page.locator("textarea[name=body]").is_hidden()
    assert page.locator(".cm-lineNumbers .cm-gutterElement", has_text="12").count() == 1
    assert page.locator(".cm-content.cm-lineWrapping").count() == 1
    for css in (".cm-sd-math", ".cm-sd-environment", ".cm-sd-shortcode", ".cm-sd-command"):
        assert page.locator(f"{BODY} {css}").count() >= 1, css
    # Inside math the stex mode colours commands: \int and \label are keywords there.
    assert page.locator(f"{BODY} .cm-sd-math.cm-sd-keyword", has_text="\\int").count() == 1
    # The python fence gets Python's colours (its language chunk loads on demand).
    page.locator(f"{BODY} .cm-sd-keyword", has_text="def").wait_for()
    place_cursor(page, SHOWCASE.index("{xx}") + 1)  # just inside {
    assert page.locator(f"{BODY} .cm-matchingBracket").count() == 2

    page.keyboard.press("Control+f")
    page.locator(".cm-search input[name=search]").fill("Heat flow")
    page.locator(".cm-search input[name=replace]").fill("Diffusion")
    page.locator(".cm-search button[name=replaceAll]").click()
    page.keyboard.press("Escape")
    assert body_text(page).startswith("# Diffusion\n")
    page.screenshot(path=str(screenshots / "editor-codemirror.png"))

    page.click("button[name=action][value=save]")
    page.wait_for_selector(".editor-messages >> text=Saved.")
    assert in_worker(lambda: Note.objects.get(pk=note.pk).body).startswith("# Diffusion\n")
    assert not page.errors, page.errors


def test_cite_completion_offers_the_notes_bibliography(open_editor):
    """Typing \\cite{ lists the entries of the note's bibliography with authors and year;
    typing narrows it; Enter inserts the key."""
    note = editor_note("Citing", "Start.\n")
    page = open_editor(note)
    place_cursor(page, len("Start."))
    page.keyboard.type(" See \\cite{")
    assert set(_completions(page)) >= {"knuth", "lamport"}
    detail = page.locator(".cm-tooltip-autocomplete li", has_text="knuth").inner_text()
    assert "Knuth" in detail and "1968" in detail
    page.keyboard.type("lam")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.cm-tooltip-autocomplete .cm-completionLabel')]"
        ".map(e => e.textContent).join() === 'lamport'"
    )
    page.keyboard.press("Enter")
    assert body_text(page) == "Start. See \\cite{lamport}\n"
    assert not page.errors, page.errors


def test_ref_completion_offers_this_notes_and_other_notes_labels(open_editor):
    """\\ref{ lists the labels of this note (from the live preview: an environment and an
    equation) and slug:label of another published note."""
    editor_note(
        "Elsewhere",
        ":::lemma[Other]{#lem-other}\nText.\n:::\n",
        publish=True,
    )
    note = editor_note("Referring", SHOWCASE)
    page = open_editor(note)
    _preview_answered(page)
    place_cursor(page, len(SHOWCASE))
    page.keyboard.type("By \\ref{")
    _completions(page)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.cm-tooltip-autocomplete .cm-completionLabel')]"
        ".some(e => e.textContent === 'elsewhere:lem-other')"
    )
    labels = page.locator(".cm-tooltip-autocomplete .cm-completionLabel").all_inner_texts()
    assert {"thm-max", "eq:mass", "elsewhere:lem-other"} <= set(labels), labels
    page.keyboard.type("thm", delay=80)
    page.wait_for_function(
        "() => (document.querySelector('.cm-tooltip-autocomplete li[aria-selected]"
        " .cm-completionLabel') || {}).textContent === 'thm-max'"
    )
    page.keyboard.press("Enter")
    assert body_text(page).endswith("By \\ref{thm-max}")
    assert not page.errors, page.errors


def test_environment_shortcode_and_math_completion(open_editor):
    """::: plus a letter lists the site's environment kinds; {{< the shortcodes; a backslash in
    math the math commands."""
    note = editor_note("Completing", "\n")
    page = open_editor(note)
    place_cursor(page, 0)
    page.keyboard.type(":::le")
    assert ":::lemma" in _completions(page)
    page.keyboard.press("Escape")
    page.keyboard.press("Control+a")
    page.keyboard.type("{{< ref")
    assert "{{< references" in _completions(page)
    # Enter takes the selected option: wait until the list is the one filtered by "ref" (on a
    # busy machine the list for "{{<" may still be showing, or be refreshing).
    expect(
        page.locator(".cm-tooltip-autocomplete li[aria-selected] .cm-completionLabel")
    ).to_have_text("{{< references")
    # CodeMirror ignores Enter for its interactionDelay (75 ms) after the list last changed,
    # and the key then inserts a line break.
    page.wait_for_timeout(200)
    page.keyboard.press("Enter")
    assert body_text(page).startswith('{{< references bib="')
    page.keyboard.press("Control+a")
    page.keyboard.type("$x = \\fr")
    assert "\\frac" in _completions(page)
    assert not page.errors, page.errors


def _select(page, start: int, end: int) -> None:
    page.evaluate(
        """([from, to]) => {
           const b = SciDraftBody.of(document.querySelector('textarea[name=body]'));
           b.view.dispatch({selection: {anchor: from, head: to}}); b.focus(); }""",
        [start, end],
    )


def test_ctrl_b_i_k_write_bold_italic_and_a_link(open_editor):
    """Ctrl+B and Ctrl+I wrap the selection in ** and * (again: unwrap), Ctrl+K makes it a
    link with its url selected, so typing the address replaces the placeholder."""
    note = editor_note("Formatting", "A key result.\n")
    page = open_editor(note)
    _select(page, 2, 5)  # "key"
    page.keyboard.press("Control+b")
    assert body_text(page) == "A **key** result.\n" and selected_text(page) == "key"
    page.keyboard.press("Control+b")
    assert body_text(page) == "A key result.\n" and selected_text(page) == "key"
    page.keyboard.press("Control+i")
    assert body_text(page) == "A *key* result.\n"
    page.keyboard.press("Control+z")
    assert body_text(page) == "A key result.\n"
    _select(page, 6, 12)  # "result"
    page.keyboard.press("Control+k")
    assert body_text(page) == "A key [result](url).\n" and selected_text(page) == "url"
    page.keyboard.type("https://example.org")
    assert body_text(page) == "A key [result](https://example.org).\n"
    place_cursor(page, 0)
    page.keyboard.press("Control+b")
    page.keyboard.type("New")
    assert body_text(page).startswith("**New**A key")
    assert not page.errors, page.errors


def test_the_word_count_and_reading_time_follow_typing(open_editor):
    """Beside the autosave status: the body's words and Hugo's reading time (213 words a
    minute, rounded up), updated as the author types; link targets are not words."""
    note = editor_note("Counting", "One two [three](https://example.org/a-b-c).\n")
    page = open_editor(note)
    count = page.locator(".editor-word-count")
    expect(count).to_have_text("3 words · 1 min read")
    place_cursor(page, 0)
    page.keyboard.type("Zero, ")
    expect(count).to_have_text("4 words · 1 min read")
    page.evaluate(
        "() => SciDraftBody.of(document.querySelector('textarea[name=body]'))"
        ".setText('word '.repeat(214))"
    )
    expect(count).to_have_text("214 words · 2 min read")
    assert not page.errors, page.errors


def test_shortcode_completion_lists_references_first(open_editor):
    """{{< offers the reference list before every other shortcode."""
    note = editor_note("Shortcodes", "\n")
    page = open_editor(note)
    place_cursor(page, 0)
    page.keyboard.type("{{<")
    assert _completions(page)[0] == "{{< references"
    assert not page.errors, page.errors


def test_problems_mark_the_gutter_and_follow_typing(open_editor):
    """A warning marks its line in the gutter and hovering shows its message; typing a line
    above moves the marker at once, and the next preview moves the panel's entry with it."""
    note = editor_note("Problems", "Intro.\n\nSee \\cite{ghost}.\n\n{{< references >}}\n")
    page = open_editor(note)
    _preview_answered(page)
    marker = page.locator(".cm-gutter-lint .cm-lint-marker")
    marker.first.wait_for()
    assert marker.count() == 1
    lines = page.locator(".cm-lineNumbers .cm-gutterElement")

    def marked_line() -> str:
        box = marker.first.bounding_box()
        for index in range(lines.count()):
            line = lines.nth(index).bounding_box()
            if line and abs(line["y"] - box["y"]) < line["height"] / 2 + 2:
                return lines.nth(index).inner_text()
        return "?"

    assert marked_line() == "3"
    marker.first.hover()
    tooltip = page.locator(".cm-tooltip-lint")
    tooltip.wait_for()
    assert "ghost" in tooltip.inner_text()
    assert page.locator(".editor-problem[data-line='3']").count() == 1

    place_cursor(page, 0)
    page.keyboard.type("New first line.\n")
    assert marked_line() == "4"  # mapped through the edit, before any preview
    page.locator(".editor-problem[data-line='4']").wait_for()
    assert page.locator(".editor-problem-count").inner_text() == "1"
    assert not page.errors, page.errors


def test_source_and_preview_scroll_together(open_editor):
    """Scrolling the source brings the preview's block of the line at the top into view, and
    scrolling the preview brings the source along."""
    body = "\n\n".join(
        f"## Section {n}\n\nParagraph {n} with $x_{{{n}}}^2$ and some words to fill it."
        for n in range(1, 81)
    )
    note = editor_note("Long", body)
    page = open_editor(note, viewport={"width": 1400, "height": 900})
    _preview_answered(page)
    page.wait_for_selector(".editor-preview [data-source-line]")
    line = body.split("\n").index("## Section 50") + 1
    page.evaluate(
        "(line) => { const v = SciDraftBody.of(document.querySelector('textarea[name=body]')).view;"
        " const top = v.lineBlockAt(v.state.doc.line(line).from).top;"
        " v.scrollDOM.scrollTop = top + v.documentTop - v.scrollDOM.getBoundingClientRect().top"
        " + v.scrollDOM.scrollTop; }",
        line,
    )
    page.wait_for_timeout(400)
    assert abs(_preview_top_line(page) - _source_top_line(page)) <= 3
    assert 45 * 4 < _preview_top_line(page) < 55 * 4

    page.locator(".editor-preview-pane").evaluate(
        "(pane) => { const h = [...pane.querySelectorAll('h2')].find(e => e.textContent ==="
        " 'Section 20'); pane.scrollTop += h.getBoundingClientRect().top"
        " - pane.getBoundingClientRect().top; }"
    )
    page.wait_for_timeout(400)
    assert abs(_source_top_line(page) - _preview_top_line(page)) <= 3
    assert 15 * 4 < _source_top_line(page) < 25 * 4
    assert not page.errors, page.errors


def test_a_cite_insert_is_one_undo_step_at_the_cursor(open_editor):
    """The cite picker inserts at the cursor, keeping a selection, and one Ctrl+Z removes
    exactly the insert, leaving what was typed just before."""
    note = editor_note("Undo", "Intro.\n")
    page = open_editor(note)
    place_cursor(page, len("Intro."))
    page.keyboard.type(" Known")
    page.keyboard.press("Shift+ArrowLeft")  # a selection: "n" stays, the cite goes after it
    page.click("button.cite-picker-toggle")
    page.keyboard.type("knuth")
    page.locator("#cite-picker-results li", has_text="knuth").wait_for()
    page.wait_for_function(
        "() => document.querySelectorAll('#cite-picker-results li').length === 1"
    )
    page.keyboard.press("Enter")
    assert body_text(page) == "Intro. Known\\cite{knuth}\n"
    assert body_has_focus(page)
    page.keyboard.press("Control+z")
    assert body_text(page) == "Intro. Known\n"
    page.keyboard.press("Control+y")
    assert body_text(page) == "Intro. Known\\cite{knuth}\n"
    assert not page.errors, page.errors


def test_ctrl_s_saves_through_the_form_and_keeps_the_place(open_editor):
    """Ctrl+S in the text is the Save button: the whole form is saved (a revision of kind
    save, the version goes up), and the editor comes back with the cursor where it was."""
    note = editor_note("Saving", "One.\n")
    page = open_editor(note)
    place_cursor(page, len("One."))
    page.keyboard.type(" Two.")
    page.fill("input[name=title]", "Saved by keyboard")
    place_cursor(page, len("One. Two."))
    page.keyboard.press("Control+s")
    page.wait_for_selector(".editor-messages >> text=Saved.")
    stored = in_worker(lambda: Note.objects.get(pk=note.pk))
    assert (stored.title, stored.body) == ("Saved by keyboard", "One. Two.\n")
    assert stored.version > note.version
    assert (
        in_worker(
            lambda: stored.revisions.filter(kind=NoteRevision.Kind.SAVE).order_by("-number").first()
        ).body
        == "One. Two.\n"
    )
    page.locator(BODY).wait_for()
    assert body_has_focus(page)
    page.keyboard.type("!")
    assert body_text(page) == "One. Two.!\n"
    # From a side-panel field too.
    page.fill("input[name=title]", "Again")
    page.locator("input[name=title]").press("Control+s")
    page.wait_for_selector(".editor-messages >> text=Saved.")
    assert in_worker(lambda: Note.objects.get(pk=note.pk).title) == "Again"
    assert not page.errors, page.errors


def test_syntax_guide_panel_inserts_an_example(open_editor):
    """The Syntax guide opens inside the editor with examples rendered by the engine; an
    example's Insert puts its source at the cursor, and one Ctrl+Z takes it out."""
    note = editor_note("Guide", "Before.\n")
    page = open_editor(note)
    place_cursor(page, len("Before.\n"))
    page.click(".editor-help-toggle")
    panel = page.locator("#editor-help-panel")
    panel.locator(".syntax-example").first.wait_for()
    assert panel.locator(".syntax-output .katex").count() > 3
    assert page.locator(".editor-help-toggle").get_attribute("aria-expanded") == "true"
    section = panel.locator("section", has=page.locator("h2", has_text="Display math"))
    source = section.locator(".syntax-source").first.inner_text()
    section.get_by_role("button", name=re.compile("Insert the example")).first.click()
    assert body_text(page) == "Before.\n" + source + "\n"
    page.keyboard.press("Control+z")
    assert body_text(page) == "Before.\n"
    page.keyboard.press("Escape")  # in the editor: closes nothing there
    page.click(".editor-help-close")
    assert panel.is_hidden()
    assert not page.errors, page.errors


def test_phone_width_shows_source_and_preview_as_tabs(open_editor, screenshots):
    """At 390 px the page does not scroll sideways; Source and Preview are tabs showing one
    pane at a time; the preview tab shows the place the source was at."""
    note = editor_note("Phone", SHOWCASE)
    page = open_editor(note, viewport={"width": 390, "height": 844}, is_mobile=True)
    _preview_answered(page)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert page.locator("[data-view-button=split]").is_hidden()
    source_tab = page.locator("[data-view-button=source]")
    preview_tab = page.locator("[data-view-button=preview]")
    assert source_tab.get_attribute("aria-pressed") == "true"
    assert page.locator(".editor-source").is_visible()
    assert page.locator(".editor-preview-pane").is_hidden()
    page.locator(BODY).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\nTyped on a phone.")
    page.locator(".editor-tools").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "editor-mobile.png"))
    preview_tab.click()
    assert preview_tab.get_attribute("aria-pressed") == "true"
    assert page.locator(".editor-source").is_hidden()
    page.locator(".editor-preview-pane .katex").first.wait_for()
    page.locator(".editor-preview", has_text="Typed on a phone.").wait_for()
    page.screenshot(path=str(screenshots / "editor-mobile-preview.png"))
    source_tab.click()
    assert page.locator(".editor-source").is_visible()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert not page.errors, page.errors


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_screenshots_in_both_themes(open_editor, screenshots, theme):
    """The editor in the light and the dark theme (test-artifacts/screenshots/)."""
    note = editor_note(f"Theme {theme}", SHOWCASE)
    page = open_editor(note, viewport={"width": 1400, "height": 900})
    page.evaluate("(theme) => localStorage.setItem('pref-theme', theme)", theme)
    page.reload()
    page.locator(BODY).wait_for()
    _preview_answered(page)
    page.locator(".editor-preview pre.mermaid svg").wait_for()
    assert page.evaluate("() => document.documentElement.dataset.theme") == theme
    background = page.evaluate(
        "() => getComputedStyle(document.querySelector('.cm-editor')).backgroundColor"
    )
    assert background == ("rgb(30, 31, 34)" if theme == "dark" else "rgb(255, 255, 255)")
    page.screenshot(path=str(screenshots / f"editor-{theme}.png"))
    assert not page.errors, page.errors


def test_every_control_is_reachable_by_keyboard_and_named(open_editor):
    """Every control of the editor form has an accessible name and is in the tab order;
    Tab from the title reaches the editor, and Escape then Tab leaves it."""
    note = editor_note("Keys", "Text.\n")
    page = open_editor(note)
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll([
              '.editor-form button', '.editor-form a[href]',
              '.editor-form input:not([type=hidden])',
              '.editor-form select', '.editor-form textarea', '.editor-form [tabindex="0"]',
              '.editor-form [contenteditable=true]'].join(','))]
            .filter((e) => e.offsetParent !== null && !e.closest('[hidden]'))
            .filter((e) => {
              const label = e.getAttribute('aria-label') || e.getAttribute('aria-labelledby')
                || (e.labels && e.labels.length && e.labels[0].textContent.trim())
                || e.textContent.trim() || e.getAttribute('title') || e.value;
              return !label || (e.tabIndex < 0 && !e.isContentEditable);
            }).map((e) => e.outerHTML.slice(0, 120))"""
    )
    assert unnamed == []
    page.locator("input[name=title]").focus()
    reached = []
    for _ in range(12):
        page.keyboard.press("Tab")
        reached.append(
            page.evaluate(
                "() => { const e = document.activeElement; return e.getAttribute('aria-label')"
                " || e.innerText.trim().slice(0, 30); }"
            )
        )
        if body_has_focus(page):
            break
    assert body_has_focus(page), reached
    assert {"Split", "Source", "Full preview", "Cite…", "Insert image", "Syntax guide"} <= set(
        reached
    ), reached
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert not body_has_focus(page)
    assert not page.errors, page.errors


def test_the_editor_runs_under_the_sites_policy(open_editor):
    """The bundle is a module script from the site itself, with no eval and no inline script:
    under the site's Content-Security-Policy the editor mounts, is styled (CodeMirror's base
    theme applies), and the page reports no violation."""
    note = editor_note("Policy", "Some $x^2$ text with \\cite{knuth}.\n")
    page = open_editor(note)
    _preview_answered(page)
    header = page.evaluate(
        "() => fetch(location.href).then(r => r.headers.get('content-security-policy'))"
    )
    assert "script-src 'self'" in header and "unsafe-eval" not in header
    assert page.locator(".cm-editor").evaluate("e => getComputedStyle(e).display") == "flex"
    assert page.locator(".cm-gutters").evaluate("e => getComputedStyle(e).display") == "flex"
    assert not page.errors, page.errors


def test_a_paused_preview_says_so_and_asks_again_after_retry_after(open_editor, settings):
    """Past the preview limit the server answers 429: the editor says the preview is paused,
    asks again once Retry-After has passed, and then shows the text typed meanwhile."""
    settings.EDITOR_PREVIEW_LIMIT, settings.EDITOR_PREVIEW_WINDOW = 1, 3
    note = editor_note("Paused", "First text.")
    page = open_editor(note)  # its first preview is the one the limit allows
    page.locator(BODY).click()
    page.keyboard.press("Control+End")
    page.keyboard.type(" Typed while paused.")
    status = page.locator(".editor-preview-status")
    expect(status).to_contain_text("Preview paused", timeout=10_000)
    expect(page.locator(".editor-preview")).to_contain_text("Typed while paused.", timeout=15_000)
    expect(status).to_have_text("")
    # The browser logs every refused request itself; nothing else went wrong.
    others = [error for error in page.errors if "status of 429" not in error]
    assert not others, others
