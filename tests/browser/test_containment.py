"""What an author writes stays inside the note card, in a real browser.

KaTeX's negative `\\hspace`, `\\raisebox`, `\\llap` and `\\smash` could move text anywhere on
the page (over the site's header, the next card), and pseudocode.js typeset `\\rule{3000em}…`
at full size. Sizes are capped and the note body clips what still leaves it; display math, code
and tables keep scrolling sideways inside it.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from hugosite.loading import note_import
from hugosite.reading import NoteSource
from notes.models import Note

from .worker import in_worker

pytestmark = pytest.mark.browser

HOSTILE = "\n\n".join(
    [
        "Before. $\\hspace{-3000em}\\text{LEFT OF THE CARD}$ after.",
        "$\\smash{\\raisebox{40em}{\\text{OVER THE HEADER}}}$ and "
        "$\\smash{\\raisebox{-40em}{\\text{UNDER THE CARD}}}$",
        "$\\llap{\\text{FAR LEFT}\\hspace{40em}}$ $\\rlap{\\hspace{40em}\\text{FAR RIGHT}}$",
        "```pseudo-algorithm\n\\begin{algorithm}\n\\caption{Huge}\n\\begin{algorithmic}\n"
        "\\STATE $\\rule{3000em}{3000em}$\n\\end{algorithmic}\n\\end{algorithm}\n```",
        "$$" + " + ".join(f"x_{{{n}}}" for n in range(300)) + "$$",
    ]
)

# What is drawn inside each body (text, images, SVG, ruled lines), but for what sits in a box
# that scrolls or clips by itself: how far it reaches past the body's edge. KaTeX's empty
# struts (pstrut) stick out of the line box unseen, so elements count only for what they draw.
_OUTSIDE_THE_BODY = """(margin) => {
  const results = [];
  const contained = (node, body) => {
    for (let inner = node.parentElement; inner && inner !== body; inner = inner.parentElement) {
      if (getComputedStyle(inner).overflowX !== "visible") return true;
    }
    return false;
  };
  const drawn = (element) => {
    if (["IMG", "SVG", "svg", "CANVAS", "VIDEO"].includes(element.tagName)) return true;
    const style = getComputedStyle(element);
    return ["Top", "Right", "Bottom", "Left"].some((side) =>
      parseFloat(style[`border${side}Width`]) > 0 && style[`border${side}Style`] !== "none");
  };
  for (const body of document.querySelectorAll(".note-body")) {
    const box = body.getBoundingClientRect();
    const rects = [];
    const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      if (!text.textContent.trim() || contained(text, body)) continue;
      const range = document.createRange();
      range.selectNodeContents(text);
      for (const rect of range.getClientRects()) rects.push([rect, text.parentElement]);
    }
    for (const element of body.querySelectorAll("*")) {
      if (drawn(element) && !contained(element, body)) {
        rects.push([element.getBoundingClientRect(), element]);
      }
    }
    for (const [rect, element] of rects) {
      if (rect.width === 0 && rect.height === 0) continue;
      const out = Math.max(box.left - rect.left, rect.right - box.right,
                           box.top - rect.top, rect.bottom - box.bottom);
      if (out > margin) {
        const text = element.textContent.slice(0, 20);
        results.push(`${element.tagName}.${element.className} "${text}": ${out}px`);
      }
    }
  }
  return results.slice(0, 10);
}"""


def _hostile_note() -> str:
    note, _ = note_import(
        source=NoteSource(
            path="hostile.md",
            slug="hostile-layout",
            title="Hostile layout",
            body=HOSTILE,
            date=timezone.now() - dt.timedelta(days=400),
        )
    )
    return note.slug


def test_demo_notes_draw_nothing_outside_their_body(new_page):
    """The clip costs real notes nothing: no element of any demo note's body reaches beyond it
    (by more than a pixel), so the clipped edge cuts no content."""
    slugs = in_worker(lambda: list(Note.objects.published().values_list("slug", flat=True)))
    page, _ = new_page(viewport={"width": 1280, "height": 900})
    for slug in slugs:
        page.goto(f"/notes/{slug}/", wait_until="networkidle")
        page.evaluate("document.fonts.ready.then(() => true)")
        assert page.evaluate(_OUTSIDE_THE_BODY, 1) == [], slug
    page.goto("/", wait_until="networkidle")
    assert page.evaluate(_OUTSIDE_THE_BODY, 1) == [], "the feed's cards"


def test_hostile_math_is_drawn_inside_the_card_only(new_page, screenshots):
    """Text moved by 3,000 em, raised over the header, lowered under the card or lapped far
    to either side is not visible (nor clickable) outside the body; the header still is."""
    slug = in_worker(_hostile_note)
    page, _ = new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"/notes/{slug}/", wait_until="networkidle")
    page.evaluate("document.fonts.ready.then(() => true)")
    target = screenshots / "note-hostile-layout.png"
    target.unlink(missing_ok=True)
    page.screenshot(path=str(target), full_page=True)
    body = page.locator(".note-body").bounding_box()
    assert page.evaluate("getComputedStyle(document.querySelector('.note-body')).overflow") == (
        "clip"
    )
    probes = [
        (body["x"] + body["width"] / 2, 20),  # the site's header
        (10, body["y"] + 30),  # left of the card
        (1270, body["y"] + 30),  # right of it
        (body["x"] + body["width"] / 2, body["y"] + body["height"] + 60),  # below the body
    ]
    for x, y in probes:
        inside = page.evaluate(
            "([x, y]) => { const e = document.elementFromPoint(x, y);"
            " return !!(e && e.closest('.note-body')); }",
            [x, y],
        )
        assert not inside, f"note content is drawn at ({x}, {y}), outside the note body"
    header = page.evaluate("() => !!document.elementFromPoint(640, 20).closest('header')")
    assert header, "the site's header is covered"
    # The algorithm's rule is capped at KaTeX's maxSize (40 em), not 3,000 em.
    rule = page.locator(".ps-root .rule").first.bounding_box()
    assert rule["width"] < 50 * 20
    # Wide display math scrolls inside the body instead of being cut off.
    display = page.locator(".katex-display").first
    assert display.evaluate("e => e.scrollWidth > e.clientWidth")
    assert display.evaluate("e => { e.scrollLeft = 200; return e.scrollLeft > 0; }")
