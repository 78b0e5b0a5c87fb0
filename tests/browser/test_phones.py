"""Notes on a phone, 375 px wide: the page never scrolls sideways; display
math, tables, code, diagrams and algorithms wider than the column scroll inside their own box,
with a fade at each edge that has more to see; equation tags stay clear of their formulas."""

from __future__ import annotations

import pytest

from notes.models import Note

from .worker import in_worker

pytestmark = pytest.mark.browser

PHONE = {"width": 375, "height": 740}
# Boxes that scroll when their content is wider than the column.
WIDE_BLOCKS = (
    ".katex-display, .math-error-display, .md-content table:not(.highlighttable), "
    ".md-content pre code, .md-content pre.algorithm-src, .pseudo-algorithm, pre.mermaid"
)
# Notes of the example site shown in test-artifacts/screenshots/ (wide equations, tables,
# a diagram).
SHOWN = (
    "demo-note-formula-rope",
    "demo-note-attention-variants-table",
    "demo-note-survey-chain-of-thought",
    "demo-note-mermaid-sequence",
)

# Everything measured in one pass over the page. Pixels: a box may overhang by KaTeX's 2 px
# Safari strut (.vlist-s), which draws nothing.
MEASURE = """(selector) => {
  const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const name = (el) => el.tagName.toLowerCase() + '.' + (el.getAttribute('class') || '')
    .split(' ').slice(0, 2).join('.');
  const fades = (el) => {
    const style = getComputedStyle(el);
    return [parseFloat(style.getPropertyValue('--scroll-fade-start')) || 0,
            parseFloat(style.getPropertyValue('--scroll-fade-end')) || 0];
  };
  const result = {
    pageWidth: document.documentElement.scrollWidth, viewport: innerWidth,
    clipped: [], wide: [], narrow: 0, tags: 0, overlaps: [],
  };
  for (const body of document.querySelectorAll('.note-body')) {
  const edge = body.getBoundingClientRect().right + 3;
  for (const el of body.querySelectorAll('*')) {
    if (el.ownerSVGElement || el.closest('.katex-mathml')) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right <= edge) continue;
    let parent = el.parentElement;
    while (parent && parent !== body && !scrolls(parent)) parent = parent.parentElement;
    if (!parent || parent === body) {
      result.clipped.push(name(el) + ' by ' + Math.round(box.right - edge));
    }
  }
  for (const el of body.querySelectorAll(selector)) {
    // Any scroll range, a pixel too, makes the box scroll and fade (a scroll timeline has no
    // threshold): "fits" means no range at all.
    if (el.scrollWidth <= el.clientWidth) {
      result.narrow += 1;
      const [start, end] = fades(el);
      if (start || end) result.wide.push({name: name(el), problem: 'fades though it fits'});
      continue;
    }
    const box = el.getBoundingClientRect();
    const [start, end] = fades(el);
    result.wide.push({
      name: name(el), scrolls: scrolls(el), inside: box.right <= edge,
      mask: getComputedStyle(el).maskImage !== 'none', start, end,
    });
    el.dataset.wide = result.wide.length - 1;
  }
  }
  for (const tag of document.querySelectorAll('.katex-display .katex-html > .tag')) {
    result.tags += 1;
    const t = tag.getBoundingClientRect();
    for (const base of tag.parentElement.querySelectorAll(':scope > .base')) {
      const b = base.getBoundingClientRect();
      if (b.right > t.left + 0.5 && b.left < t.right - 0.5) {
        result.overlaps.push(Math.round(b.right - t.left) + ' px: ' + tag.textContent);
      }
    }
  }
  return result;
}"""

# Scroll every wide box to its end, and report where each stands and how it fades there.
AT_THE_END = """async () => {
  const boxes = [...document.querySelectorAll('[data-wide]')];
  for (const el of boxes) el.scrollLeft = el.scrollWidth;
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return boxes.map((el) => {
    const style = getComputedStyle(el);
    return {
      end: el.scrollLeft + el.clientWidth >= el.scrollWidth - 1,
      start: parseFloat(style.getPropertyValue('--scroll-fade-start')) || 0,
      fade: parseFloat(style.getPropertyValue('--scroll-fade-end')) || 0,
    };
  });
}"""

TWO_FRAMES = """() => new Promise((done) =>
  requestAnimationFrame(() => requestAnimationFrame(done)))"""

DIAGRAMS_DRAWN = """() => [...document.querySelectorAll('pre.mermaid')]
  .every((block) => block.querySelector('svg') || block.dataset.processed)"""


def _published() -> list[str]:
    return list(Note.objects.published().order_by("slug").values_list("slug", flat=True))


def _problems(page, path: str) -> list[str]:
    """What is wrong with the page at 375 px, as sentences; counts in `page.counted`."""
    page.goto(path)
    page.wait_for_function(DIAGRAMS_DRAWN, timeout=15_000)
    # The fades are scroll-driven animations, whose values are computed with the next frames.
    page.evaluate(TWO_FRAMES)
    found = page.evaluate(MEASURE, WIDE_BLOCKS)
    problems = []
    if found["pageWidth"] > found["viewport"]:
        problems.append(f"the page scrolls sideways ({found['pageWidth']} px)")
    problems += [f"clipped, not scrollable: {item}" for item in found["clipped"]]
    problems += [f"tag over its formula by {item}" for item in found["overlaps"]]
    wide = found["wide"]
    for block in wide:
        if "problem" in block:
            problems.append(f"{block['name']} {block['problem']}")
        elif not (block["scrolls"] and block["inside"]):
            problems.append(f"{block['name']} is wider than the column and does not scroll")
        elif not (block["mask"] and block["start"] == 0 and block["end"] > 0):
            problems.append(f"{block['name']} shows no fade at its right edge")
    scrolled = [block for block in wide if "problem" not in block]  # those marked data-wide
    for block, end in zip(scrolled, page.evaluate(AT_THE_END), strict=True):
        if not end["end"]:
            problems.append(f"{block['name']} cannot be scrolled to its end")
        elif not (end["start"] > 0 and end["fade"] == 0):
            problems.append(f"{block['name']} at its end: fades {end['start']} / {end['fade']}")
    page.counted["wide"] += len(wide) - sum("problem" in block for block in wide)
    page.counted["narrow"] += found["narrow"]
    page.counted["tags"] += found["tags"]
    return problems


def _feed_pages(page) -> list[str]:
    """/, /page/2/… up to the last page of the feed."""
    paths, number = ["/"], 2
    while page.goto(f"/page/{number}/").status == 200:
        paths.append(f"/page/{number}/")
        number += 1
    return paths


def _counting(page):
    page.counted = {"wide": 0, "narrow": 0, "tags": 0}
    return page


def test_every_example_note_fits_a_phone(new_example_page, screenshots):
    """Each note of the theme's example site at 375 px, and its feed pages: no sideways page,
    every wide block
    scrolls in its box and fades at the edge with more to see (and not once scrolled there),
    nothing clipped, no tag over a formula. Screenshots of a few go to test-artifacts/."""
    page, _ = new_example_page(viewport=PHONE)
    page = _counting(page)
    slugs = in_worker(_published)
    assert len(slugs) >= 60, slugs
    feed = _feed_pages(page)
    assert len(feed) >= 2, feed
    paths = [*feed, *(f"/notes/{slug}/" for slug in slugs)]
    problems = {path: found for path in paths if (found := _problems(page, path))}
    assert problems == {}
    # The example site has wide blocks of every kind (23 of its 47 display equations alone).
    assert page.counted["wide"] >= 40 and page.counted["narrow"] > 0, page.counted
    for slug in SHOWN:
        page.goto(f"/notes/{slug}/")
        page.wait_for_function(DIAGRAMS_DRAWN, timeout=15_000)
        wide = page.locator(WIDE_BLOCKS).first
        wide.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -120)")
        page.screenshot(path=screenshots / f"phone-{slug}.png")


def test_equation_tags_stay_clear_of_wide_formulas(new_page, screenshots):
    """The demo's numbered equations (KaTeX tags), at 375 px: each tag stays beside its formula,
    the formula and tag scroll together in their box."""
    page, _ = new_page(viewport=PHONE)
    page = _counting(page)
    slugs = ("result-theorem-gronwall-inequality", "result-definition-contraction-mapping")
    problems = {slug: found for slug in slugs if (found := _problems(page, f"/notes/{slug}/"))}
    assert problems == {}
    assert page.counted["tags"] >= 2 and page.counted["wide"] >= 2, page.counted
    page.locator(".katex-display .tag").first.scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, -160)")
    page.screenshot(path=screenshots / "phone-tagged-equation.png")
