"""Photographing pages as the reference set of the real theme was photographed, and putting
each photograph beside the theme's for a person to compare.

The reference set (../shared/reference/seed-screenshots/) is the theme's example site built by
Hugo 0.168 and photographed in Chromium at 1280 px wide, whole pages cut at 6,000 px, one file
per page and theme (`math-theorem-dark.png`). `REFERENCE_PAGES` names the same pages on a
SciDraft site that imported that example site.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.conftest import SHARED

REFERENCE = SHARED / "reference" / "seed-screenshots"
WIDTH = 1280
HEIGHT = 900
# The reference photographs stop at this height.
MAX_HEIGHT = 6000


@dataclass(frozen=True)
class ReferencePage:
    name: str
    path: str
    # What the reference photograph shows beyond the page as loaded.
    search: str = ""
    open_menu: bool = False
    full_page: bool = True


REFERENCE_PAGES = [
    ReferencePage("home", "/"),
    ReferencePage("notes-section", "/notes/"),
    ReferencePage("page2", "/page/2/"),
    ReferencePage("about", "/about/"),
    ReferencePage("404", "/no-such-page/"),
    ReferencePage("tags", "/tags/"),
    ReferencePage("tag-attention", "/tags/attention/"),
    ReferencePage("search", "/search/", search="softmax"),
    ReferencePage("menu-open", "/math-a-to-z/", open_menu=True, full_page=False),
    ReferencePage("math-a-to-z", "/math-a-to-z/"),
    ReferencePage("math-categories", "/math-categories/"),
    ReferencePage("rendering-a-to-z", "/rendering-a-to-z/"),
    ReferencePage("math-theorem", "/notes/demo-note-theorem-max-entropy/"),
    ReferencePage("math-proof", "/notes/demo-note-proof-softmax-shift/"),
    ReferencePage("math-formula-adam", "/notes/demo-note-formula-adam/"),
    ReferencePage("code-python", "/notes/demo-note-softmax-python/"),
    ReferencePage("folder-tree", "/notes/demo-note-folder-structure-intermediate/"),
    ReferencePage("mermaid", "/notes/demo-note-mermaid-flowchart/"),
    ReferencePage("mermaid-sequence", "/notes/demo-note-mermaid-sequence/"),
    ReferencePage("pseudo-algorithm", "/notes/demo-note-with-pseudo-algorithm/"),
    ReferencePage("pseudocode-attention", "/notes/demo-note-attention-pseudocode/"),
    ReferencePage("references", "/notes/demo-note-with-references/"),
    ReferencePage("references-multiple", "/notes/demo-note-paper-with-multiple-references/"),
    ReferencePage("table-notation", "/notes/demo-note-attention-notation-table/"),
    ReferencePage("table-variants", "/notes/demo-note-attention-variants-table/"),
]


def photograph(page, spec: ReferencePage, target: Path) -> Path:
    """Load `spec` in `page` (already sized and themed) and save its photograph at `target`."""
    url = spec.path
    if spec.search:
        url = f"{spec.path}?q={spec.search}"
    page.goto(url, wait_until="networkidle")
    if spec.search:
        # The reference was photographed right after typing the query: the box has focus.
        page.focus("#search-input")
    if spec.open_menu:
        page.locator("#menu .has-submenu > .menu-label").first.click()
        page.wait_for_timeout(300)  # the caret turns in 0.15s
    page.evaluate("document.fonts.ready.then(() => true)")
    target.parent.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("document.documentElement.scrollHeight")
    if spec.full_page and height > MAX_HEIGHT:
        # Cut as the reference was. Chromium takes a minute to photograph a long page whole
        # (clipped or not); a window as tall as the cut takes a second, and the page is
        # longer than it anyway, so nothing that depends on the window's height moves.
        window = page.viewport_size
        page.set_viewport_size({"width": window["width"], "height": MAX_HEIGHT})
        page.screenshot(path=str(target))
        page.set_viewport_size(window)
    else:
        page.screenshot(path=str(target), full_page=spec.full_page)
    return target


def side_by_side(reference: Path, ours: Path, target: Path, *, label: str = "") -> Path:
    """The reference photograph on the left, ours on the right, cut at the same height, with a
    gutter between them; written to `target`."""
    from PIL import Image, ImageDraw

    left = Image.open(reference).convert("RGB")
    right = Image.open(ours).convert("RGB")
    height = min(max(left.height, right.height), MAX_HEIGHT)
    gutter = 16
    band = 24
    sheet = Image.new("RGB", (left.width + gutter + right.width, height + band), "#ff00ff")
    sheet.paste(left.crop((0, 0, left.width, min(left.height, height))), (0, band))
    sheet.paste(
        right.crop((0, 0, right.width, min(right.height, height))), (left.width + gutter, band)
    )
    draw = ImageDraw.Draw(sheet)
    draw.rectangle((0, 0, sheet.width, band - 1), fill="#000000")
    draw.text((8, 6), f"theme (Hugo): {label}", fill="#ffffff")
    draw.text((left.width + gutter + 8, 6), f"SciDraft: {label}", fill="#ffffff")
    target.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(target, optimize=True)
    return target
