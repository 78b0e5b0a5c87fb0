"""Golden tests for the Markdown stage: tables, footnotes, headings, images, HTML, commands."""

from __future__ import annotations

import re

from scidraft.markup import render

from .dom import normalise_space, parse, tex_annotations


def _align(cell) -> str | None:
    style = cell.get("style") or ""
    match = re.search(r"text-align:\s*(\w+)", style)
    return match.group(1) if match else cell.get("align")


def test_gfm_table_with_alignment():
    """Delimiter-row alignment (`:---`, `:---:`, `---:`) reaches every cell of the column."""
    source = "| L | C | R | N |\n|:---|:---:|---:|---|\n| a | b | c | d |\n"
    doc = parse(render(source).html)
    table = doc.select_one("table")
    assert [th.text for th in table.select("thead th")] == ["L", "C", "R", "N"]
    assert [_align(th) for th in table.select("thead th")] == ["left", "center", "right", None]
    assert [_align(td) for td in table.select("tbody td")] == ["left", "center", "right", None]


def test_table_class_attribute_lines():
    """`{.table-academic}` / `{.table-striped}` on the line after a table become its class."""
    for skin in ("table-academic", "table-striped"):
        source = f"Before.\n\n| P | L |\n| --: | --: |\n| 125M | 2.914 |\n{{.{skin}}}\n\nAfter."
        rendered = render(source)
        doc = parse(rendered.html)
        table = doc.select_one("table")
        assert table.classes == [skin]
        assert f".{skin}" not in doc.text
        assert len(table.select("tbody tr")) == 1
    plain = parse(render("| a |\n|---|\n| b |\n").html).select_one("table")
    assert plain.classes == []


def test_table_cells_with_br_math_and_code():
    """Cells keep raw `<br>`, inline math and code."""
    source = "| Name | Notes |\n|---|---|\n| x | one<br>two |\n| $a_1$ | `b|c` |\n"
    doc = parse(render(source).html)
    cells = doc.select("tbody td")
    assert cells[1].select("br") and normalise_space(cells[1].text) == "onetwo"
    assert cells[2].select(".katex")
    assert cells[3].select_one("code").text == "b|c"


def test_footnotes():
    """`[^1]` makes a superscript link to a footnote list with a back-link, in Goldmark's
    markup (div.footnotes, fn:N and fnref:N ids, a second reference as fnref1:N)."""
    source = (
        "Claim[^1] and another[^note], again[^1].\n\n[^1]: First note.\n[^note]: Second *note*."
    )
    doc = parse(render(source).html)
    refs = doc.select("sup a.footnote-ref")
    assert [a.text for a in refs] == ["1", "2", "1"]
    assert [sup.id for sup in doc.select("sup")] == ["fnref:1", "fnref:2", "fnref1:1"]
    box = doc.select_one("div.footnotes")
    items = box.select("ol > li")
    assert [li.id for li in items] == ["fn:1", "fn:2"]
    assert [a.get("href") for a in refs] == ["#fn:1", "#fn:2", "#fn:1"]
    assert "First note." in items[0].text
    assert items[1].select_one("em").text == "note"
    backrefs = items[0].select("a.footnote-backref")
    assert [a.get("href") for a in backrefs] == ["#fnref:1", "#fnref1:1"]


def test_heading_ids_and_toc():
    """Headings get ids from their text; the TOC lists h2–h4 with links to them."""
    source = "# Title\n\n## First part\n\nText.\n\n### A detail\n\n## Second part\n"
    rendered = render(source)
    doc = parse(rendered.html)
    assert [h.id for h in doc.select("h2")] == ["first-part", "second-part"]
    assert doc.select_one("h3").id == "a-detail"
    toc = parse(rendered.toc)
    links = [(a.get("href"), a.text) for a in toc.select("a")]
    assert links == [
        ("#first-part", "First part"),
        ("#a-detail", "A detail"),
        ("#second-part", "Second part"),
    ]


def test_heading_with_math_id_from_text():
    """A heading with math gets its id from its text as Hugo makes it (the formula adds
    nothing, code adds its text) and keeps typeset math (TOC too)."""
    rendered = render("## Bounds on \\(x\\) and `y`\n\nText.")
    heading = parse(rendered.html).select_one("h2")
    assert heading.id == "bounds-on--and-y"
    assert heading.select(".katex")
    assert heading.select_one("code").text == "y"
    toc_link = parse(rendered.toc).select_one("a")
    assert toc_link.get("href") == "#bounds-on--and-y"
    assert toc_link.select(".katex")


def test_duplicate_heading_ids_unique():
    """Repeated headings get Hugo's suffixes, -1, -2…, skipping ids already taken."""
    doc = parse(render("## Same\n\n## Same\n\n## Same-1\n\n## Same\n").html)
    assert [h.id for h in doc.select("h2")] == ["same", "same-1", "same-1-1", "same-2"]


# Hugo's default `github` anchors for headings a Hugo user writes (ids read off Hugo 0.168's
# output; tests/conformance/test_hugo.py checks many more against Hugo itself).
HUGO_HEADING_IDS = [
    ("intro_1", "intro_1"),
    ("c--go", "cgo"),  # the typographer makes -- an en dash, which the anchor drops
    ("über--café", "übercafé"),
    ("Hello, World! (2024)", "hello-world-2024"),
    ("  Spaces  around  ", "spaces--around"),
    ("???", "heading"),
    ("Step 1: `pip install`", "step-1-pip-install"),
    ("A & B", "a--b"),
    ("Ünïcödé ÆØÅ 中文", "ünïcödé-æøå-中文"),
]


def test_heading_ids_are_hugos_github_anchors():
    """Each heading's id is the one Hugo gives it, so anchors copied from a Hugo site work."""
    for text, expected in HUGO_HEADING_IDS:
        assert parse(render(f"## {text}\n").html).select_one("h2").id == expected, text


def test_heading_attributes_set_id_and_class():
    """`## Title {#id .class}` sets both (Goldmark's heading attributes); an explicit id is
    taken, so a later heading of that text gets a suffix."""
    doc = parse(render("## Custom {#intro .lead}\n\n## Intro\n").html)
    first, second = doc.select("h2")
    assert (first.id, first.classes, first.text) == ("intro", ["lead"], "Custom")
    assert second.id == "intro-1"


def test_definition_lists():
    """`Term` / `: definition` renders a `dl` with `dt` and `dd`."""
    doc = parse(render("Softmax\n:   A normalised exponential.\n\nLoss\n:   Cross entropy.\n").html)
    dl = doc.select_one("dl")
    assert [dt.text for dt in dl.select("dt")] == ["Softmax", "Loss"]
    assert [normalise_space(dd.text) for dd in dl.select("dd")] == [
        "A normalised exponential.",
        "Cross entropy.",
    ]


def test_images_including_center():
    """Images keep src and alt; a `#center` suffix stays on the src for the theme's CSS."""
    doc = parse(render("![A plot](/img/plot.png)\n\n![Centred](/img/c.png#center)\n").html)
    images = doc.select("img")
    assert [(img.get("src"), img.get("alt")) for img in images] == [
        ("/img/plot.png", "A plot"),
        ("/img/c.png#center", "Centred"),
    ]


def test_links_external_and_internal():
    """External links get target=_blank and rel noopener noreferrer; internal links do not."""
    doc = parse(render("[out](https://example.org/a) and [in](/notes/x/)").html)
    out, inside = doc.select("a")
    assert out.get("target") == "_blank"
    assert set(out.get("rel").split()) == {"noopener", "noreferrer"}
    assert inside.get("target") is None and inside.get("rel") is None


def test_raw_inline_html_kept_when_allowed():
    """Allowed inline HTML (`<mark>`, `<sub>`, `<kbd>`, `<abbr title>`) is kept."""
    source = 'Use <kbd>Ctrl</kbd>, H<sub>2</sub>O, <mark>hot</mark>, <abbr title="x y">XY</abbr>.'
    doc = parse(render(source).html)
    assert doc.select_one("p > kbd").text == "Ctrl"
    assert doc.select_one("p > sub").text == "2"
    assert doc.select_one("p > mark").text == "hot"
    assert doc.select_one("p > abbr").get("title") == "x y"


def test_raw_inline_html_sanitised_otherwise():
    """Disallowed HTML is removed: scripts, handlers, javascript: URLs, iframes, styles."""
    source = (
        'Hi <span onclick="alert(1)">there</span> <script>alert(2)</script>'
        '<a href="javascript:alert(3)">x</a> <iframe src="https://e.org"></iframe>'
        "<style>p{}</style> end."
    )
    rendered = render(source)
    lowered = rendered.html.lower()
    for bad in ("<script", "onclick", "javascript:", "<iframe", "<style"):
        assert bad not in lowered
    doc = parse(rendered.html)
    assert doc.select_one("span").text == "there"
    assert "end." in doc.text


def test_text_commands_with_nested_braces():
    """`\\textbf`, `\\textit`, `\\emph`, `\\texttt` become strong/em/em/code, braces counted."""
    source = (
        "A \\textbf{bold {inner} text} B \\textit{it} C \\emph{em \\textbf{both}} "
        "D \\texttt{x\\_y \\{z\\}}."
    )
    rendered = render(source)
    doc = parse(rendered.html)
    strong = doc.select("p > strong")
    assert strong[0].text == "bold {inner} text"
    assert [em.text for em in doc.select("p > em")] == ["it", "em both"]
    assert doc.select_one("p > em > strong").text == "both"
    assert doc.select_one("p > code").text == "x_y {z}"
    assert "\\text" not in doc.text and "\\emph" not in doc.text


def test_text_command_unbalanced_left_alone():
    """An unbalanced `\\textbf{…` stays as written."""
    rendered = render("Start \\textbf{never closed\n\nNext paragraph.")
    doc = parse(rendered.html)
    assert not doc.select("strong")
    assert "\\textbf{never closed" in doc.text


def test_text_commands_untouched_in_code_and_math():
    """Text commands inside code spans, fences and math are not converted."""
    source = "Code `\\textbf{a}` and $\\textbf{b}$.\n\n```latex\n\\emph{c}\n```\n"
    rendered = render(source)
    doc = parse(rendered.html)
    assert doc.select_one("p > code").text == "\\textbf{a}"
    assert tex_annotations(rendered.html) == ["\\textbf{b}"]
    assert doc.select_one("pre code").text == "\\emph{c}"
    assert not doc.select("p > strong") and not doc.select("p > em")


# --- CommonMark as Hugo's Goldmark reads it -------------------------------------------------------
# Each of these rendered differently under Python-Markdown (engine 3).


def test_lists_nest_at_two_and_three_spaces():
    """`- a⏎  - b` is a nested list, as are ordered items under a three-column marker."""
    doc = parse(render("- a\n  - b\n    - c\n\n1. one\n   1. inner\n").html)
    assert doc.select_one("ul > li > ul > li > ul > li").text == "c"
    assert doc.select_one("ol > li > ol > li").text == "inner"


def test_a_list_or_a_table_right_after_a_paragraph_line():
    """`Steps:⏎- one` is a paragraph and a list; a table may follow a line too, and `\\|` in a
    cell is a pipe."""
    doc = parse(
        render("Steps:\n- one\n- two\n\nData:\n| a | b |\n|---|---|\n| x \\| y | 2 |\n").html
    )
    assert [p.text for p in doc.select("p")] == ["Steps:", "Data:"]
    assert [li.text for li in doc.select("ul > li")] == ["one", "two"]
    assert [td.text for td in doc.select("tbody td")] == ["x | y", "2"]


def test_typographer_as_hugo_by_default():
    """Curly quotes and apostrophes, en and em dashes, ellipses, angle quotes; none in code."""
    rendered = render("\"Quoted\" and 'single', it's the '90s -- or --- so... <<a>> `\"x\" --`")
    text = parse(rendered.html).select_one("p").text
    assert text == '“Quoted” and ‘single’, it’s the ’90s – or — so… «a» "x" --'


def test_task_lists_strikethrough_and_hard_breaks():
    """`- [x]` draws a checked box (as text: the allowlist has no <input>), `~a~` and `~~b~~`
    strike through (<del>), and `\\` at a line's end breaks the line."""
    doc = parse(render("- [ ] to do\n- [x] done\n\n~a~ and ~~b~~, line\\\nbreak\n").html)
    boxes = doc.select("li > span.task-checkbox")
    assert [box.text for box in boxes] == ["☐", "☑"] and "task-checkbox-done" in boxes[1].classes
    assert [li.text for li in doc.select("li")] == ["☐ to do", "☑ done"]
    assert [d.text for d in doc.select("p > del")] == ["a", "b"]
    assert doc.select("p > br")


def test_links_bare_and_angled_as_goldmark_links_them():
    """Bare www. links get https; bare URLs drop trailing punctuation; `<foo.bar>` is text;
    an autolink of a scheme the allowlist refuses keeps its text, without the href."""
    doc = parse(
        render("See www.example.com/x, https://e.org/a_b. <foo.bar> <ssh://h.example>").html
    )
    links = doc.select("a")
    assert [(a.get("href"), a.text) for a in links[:2]] == [
        ("https://www.example.com/x", "www.example.com/x"),
        ("https://e.org/a_b", "https://e.org/a_b"),
    ]
    assert "<foo.bar>" in doc.text
    assert links[2].text == "ssh://h.example" and links[2].get("href") is None


def test_markdown_inside_an_html_block_after_a_blank_line():
    """`<details>`, a blank line, then Markdown: rendered inside the element, as CommonMark."""
    doc = parse(render("<details>\n<summary>More</summary>\n\n**bold** text\n\n</details>\n").html)
    assert doc.select_one("details > p > strong").text == "bold"


def test_block_attributes_apply_to_the_block_just_above():
    """`{.class}` on the line after a paragraph, list or quote gives it the class; after a
    blank line, or as the first line, it applies to nothing and disappears."""
    doc = parse(
        render("{.first}\n\nPara.\n{.lead}\n\n- a\n{.tight}\n\n> q\n{#quote}\n\n{.alone}\n").html
    )
    assert doc.select_one("p").classes == ["lead"]
    assert doc.select_one("ul").classes == ["tight"]
    assert doc.select_one("blockquote").id == "quote"
    assert "{" not in doc.text


def test_definitions_are_tight_unless_a_blank_line_comes_first():
    """Goldmark's rule, per definition: after a blank line its text is a paragraph."""
    doc = parse(render("Term\n: tight\n\nOther\n\n: loose\n").html)
    first, second = doc.select("dd")
    assert not first.select("p") and second.select_one("p").text == "loose"
