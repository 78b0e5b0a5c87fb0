"""axe-core (the npm package, pinned) in Chromium on the pages readers and authors use most, in
light and dark: no serious or critical violation of WCAG 2.1 A and AA.

axe is evaluated through the DevTools protocol, which the pages' Content-Security-Policy does
not govern (a script tag would be refused, as it should be). Where the theme's own colours fail
a contrast rule, ours differ from the theme's: static/css/scidraft.css gives the theme's value
beside each, and docs/theme.md lists them."""

from __future__ import annotations

import pytest

from tests.browser.worker import in_worker
from tests.conftest import ROOT
from tests.people import PASSWORD, user_in_group

pytestmark = pytest.mark.browser

AXE = (ROOT / "node_modules" / "axe-core" / "axe.min.js").read_text(encoding="utf-8")
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

READERS_PAGES = {
    "home": "/",
    "note with math and citations": "/notes/method-citations-reference-heading/",
    "note with a theorem and equations": "/notes/result-theorem-doeblin-convergence/",
    "note with a diagram": "/notes/method-mermaid-pipeline-flowcharts/",
    "tag": "/tags/citations/",
    "search": "/search/?q=matrix",
    "login": "/accounts/login/",
}


def serious_violations(page) -> list[str]:
    """axe's serious and critical WCAG 2.1 A/AA violations on the page, one line each."""
    page.evaluate(AXE + "\n;undefined")
    result = page.evaluate(
        "(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}})", WCAG
    )
    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']} — "
        + "; ".join(node["target"][0] for node in violation["nodes"][:4])
        + (
            f" — {violation['nodes'][0].get('failureSummary', '')[:160]}"
            if violation["nodes"]
            else ""
        )
        for violation in result["violations"]
        if violation["impact"] in {"serious", "critical"}
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", list(READERS_PAGES))
def test_readers_pages_have_no_serious_violations(new_page, name, scheme):
    """Each reader's page, as the theme shows it in the scheme: axe finds nothing serious."""
    page, _ = new_page(color_scheme=scheme)
    page.goto(READERS_PAGES[name])
    page.wait_for_load_state("networkidle")
    assert serious_violations(page) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_wide_formulas_can_be_scrolled_by_keyboard(new_page, scheme):
    """At 390 px, where display math is wider than the column and scrolls inside its box, the
    home page and a note with equations: axe finds nothing serious."""
    page, _ = new_page(color_scheme=scheme, viewport={"width": 390, "height": 844})
    found = []
    for name in ("home", "note with a theorem and equations"):
        page.goto(READERS_PAGES[name])
        page.wait_for_load_state("networkidle")
        page.evaluate(
            "() => document.fonts.ready.then(() => new Promise("
            "(done) => requestAnimationFrame(() => requestAnimationFrame(done))))"
        )
        found += [f"{name}: {line}" for line in serious_violations(page)]
    assert found == []


def _note_of_an_author() -> int:
    """axel, an Author, and his note with math, a citation, a diagram and code wider than the
    column, longer than the editor's height (its source and preview scroll, and the line
    numbers run past 9, which axe needs to judge their contrast): its id."""
    from notes.services import note_create, note_save

    author = user_in_group("axel", "Author")
    note = note_create(user=author, title="Accessible")
    paragraphs = "\n\n".join(f"Paragraph {number} of the note." for number in range(1, 41))
    body = (
        "Euler: $e^{i\\pi} + 1 = 0$.\n\n```mermaid\nflowchart LR\n  A --> B\n```\n\n"
        "```python\nwidth = 1  # " + "wider than the column " * 12 + "\n```\n\n"
        f"{paragraphs}\n\nAs \\cite{{nobody}} says.\n"
    )
    note_save(note_id=note.pk, user=author, base_version=note.version, fields={"body": body})
    return note.pk


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_editor_has_no_serious_violations(new_page, scheme):
    """The editor on a note with math, a citation and a diagram, signed in as its Author:
    axe finds nothing serious."""
    note_id = in_worker(_note_of_an_author)
    page, _ = new_page(color_scheme=scheme)
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "axel")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/write/**")
    page.goto(f"/write/{note_id}/")
    page.wait_for_load_state("networkidle")
    page.locator(".cm-editor .cm-content").wait_for()
    assert serious_violations(page) == []
