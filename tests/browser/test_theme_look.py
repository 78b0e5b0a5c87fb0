"""The reader's side beside the real theme: type, measure and colours read from the
browser against the theme's values, and every page of the reference set photographed the same
way and put beside the theme's photograph for a person to look at.

The expected values come from the theme's stylesheets (mengyaozhu/scidraft, `assets/css/`) and
were checked against its photographs (../shared/reference/seed-screenshots/): the cards' borders
are at x = 280 and 999 of 1,280 (one 720 px column), their text starts at x = 300 (1px border,
1.2rem padding), tags are drawn in rgb(214, 214, 214) in light mode.

Where a theme's colour fails WCAG's contrast minimum (4.5:1), the expected value is ours, the
nearest colour that passes; the comment beside it gives the theme's (docs/theme.md lists them).
"""

from __future__ import annotations

import pytest

from .comparing import REFERENCE, REFERENCE_PAGES, photograph, side_by_side
from .worker import in_worker

pytestmark = pytest.mark.browser

GEORGIA = 'Georgia, "Times New Roman", serif'
# theme: rgb(155, 156, 157) in dark, 4.24:1 on the cards' rgb(55, 56, 62); ours 4.51:1.
SECONDARY = ("rgb(108, 108, 108)", "rgb(160, 161, 162)")
# theme: --tertiary, rgb(214, 214, 214), for tags in light, 1.45:1 on white; ours 4.54:1.
TAG_LIGHT = "rgb(118, 118, 118)"
THEOREM = "/notes/demo-note-theorem-max-entropy/"
# Its body has `exp` as inline code; the feed's first card is the identity demo (`hugo.toml`).
CODE_NOTE = "/notes/demo-note-softmax-python/"
REFERENCES = "/notes/demo-note-with-references/"

# (page, selector, property, light value, dark value); None where the theme sets nothing apart.
# The source of each row is the theme file named in the comment above it.
TYPE_AND_MEASURE = [
    # core/reset.css: Georgia over PaperMod's system sans-serif; 18px, line-height 1.6.
    ("/", "body", "font-family", GEORGIA, None),
    ("/", "body", "font-size", "18px", None),
    ("/", "body", "line-height", "28.8px", None),
    (THEOREM, "body", "font-family", GEORGIA, None),
    ("/about/", "body", "font-family", GEORGIA, None),
    # scidraft/notes.css: the feed is one 720 px column, as the note page (its 900 px is gone).
    ("/", ".notes-feed", "width", "720px", None),
    ("/", ".note-card", "width", "720px", None),
    ("/", ".note-card", "padding", "16px 19.2px", None),
    ("/", ".note-card", "border-radius", "16px", None),
    ("/", ".note-card", "background-color", "rgb(255, 255, 255)", "rgb(55, 56, 62)"),
    ("/", ".note-card .note-body", "font-size", "16px", None),
    ("/", ".note-card .note-title", "font-size", "24px", None),
    ("/", ".note-card .note-author", "font-weight", "700", None),
    ("/", ".note-card .note-time", "font-size", "13.6px", None),
    ("/", ".note-card .note-time", "color", *SECONDARY),
    # notes.css: tags in --tertiary (TAG_LIGHT), lifted to --secondary in dark mode (--primary on
    # a note).
    ("/", ".note-card .note-tag", "color", TAG_LIGHT, SECONDARY[1]),
    ("/", ".note-card .note-tag", "font-size", "13.6px", None),
    ("/", ".note-card .note-tag", "font-family", GEORGIA, None),
    (THEOREM, ".note-single", "width", "720px", None),
    (THEOREM, ".note-single .note-title", "font-size", "24px", None),
    (THEOREM, ".note-single .note-body", "font-size", "16px", None),
    (THEOREM, ".note-single .note-tag", "color", TAG_LIGHT, "rgb(218, 218, 219)"),
    # The theme has no rule for code in a note body: the browser's monospace at the text's size.
    (CODE_NOTE, ".note-body p code", "font-size", "16px", None),
    (CODE_NOTE, ".note-body p code", "background-color", "rgba(0, 0, 0, 0)", None),
    # md-content.css: fenced code on --code-block-bg, a lighter block in the dark theme.
    (CODE_NOTE, ".note-body pre code", "background-color", "rgb(28, 29, 33)", "rgb(46, 46, 51)"),
    # The language label over it: theme alpha 0.55, 4.39:1 on the light theme's block and 3.92:1
    # on the dark one's; ours 0.62, 5.22:1 and 4.57:1.
    (CODE_NOTE, ".highlight .code-lang", "color", "rgba(213, 213, 214, 0.62)", None),
    # post-single.css: prev/next, share row; note-recommendations.css.
    (THEOREM, ".paginav a", "padding", "12.8px", None),
    (THEOREM, ".paginav", "line-height", "21.6px", None),
    (THEOREM, ".share-buttons", "padding", "10px", None),
    (THEOREM, ".share-buttons", "gap", "10px", None),
    (THEOREM, ".share-buttons a", "color", "rgb(30, 30, 30)", "rgb(218, 218, 219)"),
    (THEOREM, ".note-recommendations", "padding", "9.6px 14.4px", None),
    (THEOREM, ".note-recommendations", "font-size", "16px", None),
    # md-content.css: a body's opening "# 1. <Title>" keeps its 40px, below the 24px title.
    (REFERENCES, ".note-body > h1:first-child", "margin-top", "40px", None),
    (REFERENCES, ".note-body > h1:first-child", "font-size", "28px", None),
    # post-single.css, headings.css: standalone pages.
    ("/about/", ".post-title", "font-size", "36px", None),
    ("/about/", ".post-content", "font-size", "16px", None),
    ("/about/", ".post-content", "width", "720px", None),
    # note-entry.css: a tag's page lists its notes as entries.
    ("/tags/attention/", ".tag-entry .entry-header h2", "font-size", "24px", None),
    ("/tags/attention/", ".tag-entry .entry-content", "font-size", "14px", None),
    ("/tags/attention/", ".tag-entry .entry-content", "color", *SECONDARY),
    ("/tags/attention/", ".tag-entry", "padding", "24px", None),
    # layouts/search.html (its own <style>). Its result titles are h3 under the page's h1; ours
    # are h2, the next level (headings skip none), at the theme's size.
    ("/search/?q=softmax", "#search-input", "padding", "12px 16px", None),
    ("/search/?q=softmax", ".search-result-item", "padding", "20px", None),
    ("/search/?q=softmax", ".search-result-item h2", "font-size", "23.4px", None),
    ("/search/?q=softmax", ".search-preview", "font-size", "14px", None),
]

# At 390 px (a phone) the theme keeps its type; only the gutters narrow (zmedia.css: 14px).
PHONE = [
    ("/", "body", "font-size", "18px"),
    ("/", ".note-card", "width", "362px"),
    ("/", ".note-card", "padding", "16px 19.2px"),
    ("/", ".note-card .note-body", "font-size", "16px"),
    ("/", ".note-card .note-title", "font-size", "24px"),
    (THEOREM, ".note-single .note-title", "font-size", "24px"),
    (THEOREM, ".note-single .note-body", "font-size", "16px"),
]

_READ = """([selector, property]) => {
    const element = document.querySelector(selector);
    return element ? getComputedStyle(element).getPropertyValue(property) : null;
}"""


def _differences(page, rows) -> list[str]:
    """Load each page once and list every row whose computed value is not the expected one."""
    found = []
    for path in dict.fromkeys(row[0] for row in rows):
        page.goto(path, wait_until="domcontentloaded")
        for _, selector, prop, expected in (row for row in rows if row[0] == path):
            actual = page.evaluate(_READ, [selector, prop])
            if actual != expected:
                found.append(f"{path} {selector} {prop}: {actual!r}, the theme's is {expected!r}")
    return found


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_type_and_measure_match_the_theme(new_example_page, theme):
    """Fonts, column widths, card padding, heading sizes and tag colours of the feed, a note, a
    standalone page and a tag page are the theme's (the table above), in both themes."""
    page, _ = new_example_page(viewport={"width": 1280, "height": 900})
    page.add_init_script(f"localStorage.setItem('pref-theme', '{theme}');")
    rows = [
        (path, selector, prop, (dark if theme == "dark" and dark is not None else light))
        for path, selector, prop, light, dark in TYPE_AND_MEASURE
    ]
    assert "\n".join(_differences(page, rows)) == ""


def test_type_and_measure_on_a_phone(new_example_page, screenshots):
    """At 390 px the type stays the theme's and a card fills the screen less the 14px gutters.
    The feed and a note are photographed in both themes (test-artifacts/screenshots/theme/
    phone-*.png; the reference set has no phone photographs to put beside them)."""
    page, _ = new_example_page(viewport={"width": 390, "height": 844})
    assert "\n".join(_differences(page, PHONE)) == ""
    for theme in ("light", "dark"):
        page.evaluate(f"localStorage.setItem('pref-theme', '{theme}')")
        for spec in REFERENCE_PAGES:
            if spec.name in ("home", "math-theorem", "pseudocode-attention"):
                target = screenshots / "theme" / f"phone-{spec.name}-{theme}.png"
                assert photograph(page, spec, target).stat().st_size > 10_000


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="no reference screenshots beside the checkout")
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_side_by_side_with_the_reference(new_example_page, screenshots, theme):
    """Each page of the reference set, photographed as it was (1,280 px, whole page, cut at
    6,000 px), is written beside the theme's photograph: test-artifacts/screenshots/theme/
    compare-<page>-<theme>.png, the theme left and SciDraft right, for a person to look at."""
    folder = screenshots / "theme"
    written = []
    for spec in REFERENCE_PAGES:
        reference = REFERENCE / f"{spec.name}-{theme}.png"
        if not reference.is_file():
            continue
        height = 450 if spec.open_menu else 900
        page, _ = new_example_page(viewport={"width": 1280, "height": height})
        page.add_init_script(f"localStorage.setItem('pref-theme', '{theme}');")
        ours = photograph(page, spec, folder / f"{spec.name}-{theme}.png")
        target = folder / f"compare-{spec.name}-{theme}.png"
        written.append(side_by_side(reference, ours, target, label=f"{spec.name} ({theme})"))
        page.context.close()
    assert written, "no reference photograph was found"
    for target in written:
        assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


PASSWORD = "correct horse battery staple"
ADMIN_BODY = (
    'Energy $E = mc^2$, as in \\cite{Diao2024-at}.\n\n{{< references bib="bib/refs.bib" >}}\n'
)


def _superuser_and_a_note() -> int:
    from django.contrib.auth.models import User

    from notes.models import Note

    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    return Note.objects.order_by("pk").values_list("pk", flat=True).first()


def _admin_log_in(page) -> None:
    page.goto("/admin/login/")
    page.fill("input[name=username]", "root")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/")


def test_admin_preview_shows_each_formula_once_and_numbers_references_once(new_example_page):
    """The admin's note preview has KaTeX's stylesheet (the MathML copy of a formula is hidden,
    where it printed every formula twice) and the reference list's own numbers only (it read
    `1. [1]`)."""
    in_worker(_superuser_and_a_note)
    page, _ = new_example_page(viewport={"width": 1280, "height": 900})
    _admin_log_in(page)
    page.goto("/admin/notes/note/add/")
    page.fill("textarea[name=body]", ADMIN_BODY)
    page.wait_for_selector(".admin-preview .references .ref-list li")
    mathml = page.locator(".admin-preview .katex-mathml").first.bounding_box()
    assert mathml["width"] <= 1 and mathml["height"] <= 1, "the formula's MathML shows as text"
    listed = page.evaluate(
        """() => { const list = document.querySelector(".admin-preview .ref-list");
            const style = getComputedStyle(list);
            return [style.listStyleType, style.paddingLeft,
                    list.querySelector(".ref-num").textContent]; }"""
    )
    assert listed == ["none", "0px", "[1]"]


def test_authoring_fields_have_a_visible_border(new_example_page):
    """Every text field and menu of the editor's dashboard and of a note's editor page has a
    border of another colour than the page (the reset took it away: the fields were invisible).
    The revisions page, where they were missing too, now picks revisions with radio buttons."""
    note = in_worker(_superuser_and_a_note)
    page, _ = new_example_page(viewport={"width": 1280, "height": 900})
    _admin_log_in(page)
    for path in ("/write/", f"/write/{note}/"):
        page.goto(path)
        fields = page.evaluate(
            """() => Array.from(document.querySelectorAll(".editor-page :is(input, select)"))
                .filter(el => !["hidden", "checkbox", "radio", "submit", "button", "file"]
                    .includes(el.type))
                .map(el => { const s = getComputedStyle(el);
                    return [el.name, s.borderTopStyle, s.borderTopWidth, s.borderTopColor,
                            getComputedStyle(document.body).backgroundColor]; })"""
        )
        assert fields, f"no field on {path}"
        for name, style, width, colour, background in fields:
            assert (style, width) == ("solid", "1px"), f"{path} {name}: {style} {width}"
            assert colour != background, f"{path} {name}: border of the page's colour"


def test_algorithm_indents_are_one_em_as_the_themes(new_example_page):
    """The example's algorithms indent with `\\hspace{0.5cm}`; the theme draws every one 1em wide
    (the width as written indented 27.5 px where the theme's photograph shows 19.4 px), and so
    does SciDraft."""
    page, _ = new_example_page(viewport={"width": 1280, "height": 900})
    page.goto("/notes/demo-note-attention-pseudocode/")
    spaces = page.evaluate(
        """() => Array.from(document.querySelectorAll(".pseudo-algorithm .mspace"))
            .map(el => getComputedStyle(el))
            .filter(s => parseFloat(s.marginRight) > parseFloat(s.fontSize) / 2)
            .map(s => [s.marginRight, s.fontSize])"""
    )
    assert len(spaces) == 4  # the four indented lines of the algorithm
    assert all(margin == size for margin, size in spaces), spaces
