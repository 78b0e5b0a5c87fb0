"""The public site in a real browser: Debian's headless Chromium, driven by Playwright."""

from __future__ import annotations

import re

import pytest

from notes.models import Note

from .conftest import DEMO_NOTES

pytestmark = pytest.mark.browser

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.M | re.S)
MERMAID_NOTES = sorted(path.stem for path in DEMO_NOTES.glob("method-mermaid-*.md"))
CODE_NOTE = min(path.stem for path in DEMO_NOTES.glob("method-code-*.md"))
SURVEY_NOTE = "method-citations-two-bibliographies"
MATH_NOTE = "result-theorem-gronwall-inequality"


def fences(slug: str, language: str | None = None) -> list[str]:
    """The fenced blocks of a demo note's Markdown source, in order."""
    text = (DEMO_NOTES / f"{slug}.md").read_text(encoding="utf-8")
    return [body for lang, body in FENCE.findall(text) if language in (None, lang)]


def published_mermaid_notes() -> list[str]:
    """The Mermaid notes of the demo a reader can open now (some are scheduled for later)."""
    slugs = list(
        Note.objects.published()
        .filter(slug__startswith="method-mermaid-")
        .order_by("slug")
        .values_list("slug", flat=True)
    )
    assert slugs, "the demo has no published method-mermaid-* note"
    return slugs


def squash(text: str) -> str:
    return " ".join(text.split())


def assert_clean(recorder, *, ignore: tuple[str, ...] = ("/favicon.ico",)) -> None:
    """No request to another host, no CSP report, no failed request, no console error.

    Outside the feed test a missing /favicon.ico (the browser asks for it on its own) is left to
    that test, so one missing file fails one test; `ignore` names such URLs by their ending.
    """

    def kept(lines: list[str]) -> list[str]:
        marks = [f"{end}{mark}" for end in ignore for mark in (":", ")")]
        return [line for line in lines if not any(mark in line for mark in marks)]

    problems = {
        "requests to other hosts": recorder.foreign(),
        "Content-Security-Policy violations": recorder.csp,
        "failed requests": kept(recorder.failed),
        "console errors": kept(recorder.errors),
    }
    assert {name: lines for name, lines in problems.items() if lines} == {}


def test_feed_loads_cleanly(new_page):
    """The feed shows note cards with its assets, no console error, no CSP report, no other host."""
    page, recorder = new_page()
    page.goto("/", wait_until="networkidle")
    assert page.locator("article.note-card").count() > 0
    loaded = {url.split("/", 3)[-1] for url in recorder.requests}
    assert "static/css/scidraft.css" in loaded
    assert page.evaluate("getComputedStyle(document.body).fontFamily") != ""
    assert_clean(recorder, ignore=())


def test_mermaid_diagrams_become_svg(new_page):
    """Every pre.mermaid on each published Mermaid note becomes an SVG within 10 s."""
    page, recorder = new_page()
    published = published_mermaid_notes()
    for slug in MERMAID_NOTES:
        response = page.goto(f"/notes/{slug}/")
        if slug not in published:
            assert response.status == 404, f"{slug} is scheduled but visible"
            continue
        blocks = page.locator("pre.mermaid")
        assert blocks.count() == len(fences(slug, "mermaid")) > 0, slug
        for index in range(blocks.count()):
            blocks.nth(index).locator("svg").first.wait_for(state="attached", timeout=10_000)
        assert "Syntax error" not in page.locator("main").inner_text(), slug
        page.wait_for_load_state("networkidle")
    assert any(url.endswith("/static/vendor/mermaid/mermaid.min.js") for url in recorder.requests)
    scheduled = tuple(f"/notes/{slug}/" for slug in MERMAID_NOTES if slug not in published)
    assert_clean(recorder, ignore=("/favicon.ico", *scheduled))


def test_theme_toggle(new_page):
    """The toggle flips light/dark without a reload, persists, and a reload never flashes."""
    page, _ = new_page(color_scheme="light")
    page.goto("/")
    root = page.locator("html")
    assert root.get_attribute("data-theme") == "light"
    page.evaluate("window.__sameDocument = true")

    page.click("#theme-toggle")
    assert root.get_attribute("data-theme") == "dark"
    assert page.evaluate("localStorage.getItem('pref-theme')") == "dark"
    page.click("#theme-toggle")
    assert root.get_attribute("data-theme") == "light"
    page.click("#theme-toggle")
    assert root.get_attribute("data-theme") == "dark"
    assert page.evaluate("window.__sameDocument === true"), "the toggle reloaded the page"
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")

    # Before any script of the page runs, watch for <body>: its arrival precedes the first paint.
    page.add_init_script(
        """
        window.__themeAtBody = null;
        new MutationObserver(function (records, observer) {
          if (document.body) {
            window.__themeAtBody = document.documentElement.getAttribute("data-theme");
            observer.disconnect();
          }
        }).observe(document, { childList: true, subtree: true });
        """
    )
    page.reload(wait_until="domcontentloaded")
    assert page.evaluate("window.__sameDocument") is None
    assert page.evaluate("window.__themeAtBody") == "dark"
    assert root.get_attribute("data-theme") == "dark"
    page.wait_for_load_state("load")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == background

    page.click("#theme-toggle")
    page.reload()
    assert root.get_attribute("data-theme") == "light"


def test_copy_code_block(new_page, demo_site):
    """A code block's copy button puts exactly the code on the clipboard and says "copied!"."""
    page, recorder = new_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=demo_site)
    page.goto(f"/notes/{CODE_NOTE}/")
    assert page.locator("body[data-copy-code]").count() == 1
    sources = fences(CODE_NOTE)
    buttons = page.locator("button.copy-code")
    in_body = page.locator(".note-single .md-content pre > code")
    assert buttons.count() == in_body.count() == len(sources)
    for index in (0, buttons.count() - 1):
        button = buttons.nth(index)
        assert button.inner_text() == "copy"
        button.click()
        page.wait_for_function(
            "button => button.textContent === 'copied!'", arg=button.element_handle()
        )
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied.rstrip("\n") == sources[index].rstrip("\n")
    assert_clean(recorder)


def test_pages_work_without_javascript(new_page):
    """With JavaScript off pages render, math arrives typeset and Mermaid shows its source."""
    page, _ = new_page(java_script_enabled=False)
    page.goto("/")
    assert page.locator("article.note-card").count() > 0
    assert page.locator(".katex").count() > 0
    assert page.locator("#theme-toggle").is_hidden()

    page.goto(f"/notes/{MATH_NOTE}/")
    assert page.locator(".katex").count() > 0
    assert page.locator(".katex-mathml math").count() > 0

    slug = published_mermaid_notes()[0]
    page.goto(f"/notes/{slug}/")
    blocks = page.locator("pre.mermaid")
    sources = fences(slug, "mermaid")
    assert blocks.count() == len(sources) > 0
    assert page.locator("pre.mermaid svg").count() == 0
    for index, source in enumerate(sources):
        assert blocks.nth(index).is_visible()
        assert squash(blocks.nth(index).inner_text()) == squash(source)
    assert page.locator("button.copy-code").count() == 0


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_screenshots(new_page, screenshots, theme):
    """Full-page screenshots of the feed and of notes in one theme, saved as test artifacts."""
    page, _ = new_page(viewport={"width": 1280, "height": 900})
    page.add_init_script(f"localStorage.setItem('pref-theme', '{theme}');")
    for name, path in [
        ("feed", "/"),
        ("note-survey", f"/notes/{SURVEY_NOTE}/"),
        ("note-math", f"/notes/{MATH_NOTE}/"),
    ]:
        page.goto(path, wait_until="networkidle")
        assert page.locator("html").get_attribute("data-theme") == theme
        page.evaluate("document.fonts.ready.then(() => true)")
        target = screenshots / f"{name}-{theme}.png"
        target.unlink(missing_ok=True)
        page.screenshot(path=str(target), full_page=True)
        assert target.stat().st_size > 20_000, f"{target.name} is suspiciously small"
        assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name,path", [("feed", "/"), ("note-math", f"/notes/{MATH_NOTE}/")])
def test_narrow_screen(new_page, screenshots, name, path):
    """At 360 px wide the page fits the screen without horizontal scrolling."""
    page, _ = new_page(viewport={"width": 360, "height": 740})
    page.goto(path, wait_until="networkidle")
    page.evaluate("document.fonts.ready.then(() => true)")
    target = screenshots / f"{name}-360px.png"
    target.unlink(missing_ok=True)
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 20_000
    overflow = page.evaluate(
        """() => Array.from(document.querySelectorAll("body *"))
            .filter(el => el.getBoundingClientRect().right > 360.5)
            .filter(el => !el.closest("pre, .katex-display, .table-wrapper, table, svg"))
            .slice(0, 5).map(el => el.tagName.toLowerCase() + "." + el.className)"""
    )
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"page is {width}px wide; widest elements: {overflow}"
