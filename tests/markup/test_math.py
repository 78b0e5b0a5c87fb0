"""Golden tests for math: delimiters, protection from Markdown, equation labels, error paths."""

from __future__ import annotations

import re

import pytest

from scidraft.markup import render

from .dom import parse, tex_annotations


def _codes(rendered, code):
    return [warning for warning in rendered.warnings if warning.code == code]


@pytest.mark.parametrize(
    ("source", "tex", "display"),
    [
        (r"Inline \(a+b\) here.", "a+b", False),
        (r"Inline $c+d$ here.", "c+d", False),
        ("Display:\n\n$$\ne+f\n$$\n", "e+f", True),
        ("Display:\n\n\\[\ng+h\n\\]\n", "g+h", True),
    ],
)
def test_four_delimiters(source, tex, display):
    """Each of \\(…\\), $…$, $$…$$ and \\[…\\] is typeset by KaTeX, display or inline as written."""
    rendered = render(source)
    doc = parse(rendered.html)
    assert tex_annotations(rendered.html) == [tex]
    katex = doc.select(".katex")
    assert len(katex) == 1
    in_display = bool(doc.select(".math-display .katex-display .katex"))
    assert in_display is display
    assert rendered.has_math
    assert rendered.warnings == []


def test_dollar_amounts_are_not_math():
    """`$5 and $10` stays text: no formula, no warning."""
    rendered = render("It costs $5 and $10 today.")
    assert "katex" not in rendered.html
    assert "$5 and $10" in parse(rendered.html).text
    assert not rendered.has_math
    assert rendered.warnings == []


def test_markdown_escaped_parentheses():
    """`\\\\(k\\\\)` (Markdown-escaped delimiters) is math k, not literal brackets."""
    rendered = render(r"The index \\(k\\) runs.")
    assert tex_annotations(rendered.html) == ["k"]
    assert "\\(" not in parse(rendered.html).text


def test_display_math_inside_paragraph_without_blank_lines():
    """`$$…$$` between two prose lines (no blank lines) is typeset and the prose survives."""
    rendered = render("Before the formula\n$$\nx^2 + y^2\n$$\nafter the formula.")
    doc = parse(rendered.html)
    assert tex_annotations(rendered.html) == ["x^2 + y^2"]
    assert doc.select(".math-display .katex-display")
    text = doc.text
    assert "Before the formula" in text and "after the formula." in text
    assert "$$" not in text


def test_display_math_in_list_items():
    """Display math inside list items stays inside its `li`."""
    rendered = render("- first $$a_1$$ item\n- second \\[b_2\\] item\n")
    doc = parse(rendered.html)
    items = doc.select("ul > li")
    assert len(items) == 2
    assert items[0].select(".math-display .katex-display")
    assert items[1].select(".math-display .katex-display")
    assert tex_annotations(rendered.html) == ["a_1", "b_2"]


def test_math_in_table_cells():
    """Inline and display math in table cells (even with `|` inside) stay in their cell."""
    source = "| a | b |\n|---|---|\n| $x|y$ | \\(p\\) $$q$$ |\n"
    rendered = render(source)
    doc = parse(rendered.html)
    cells = doc.select("tbody td")
    assert len(cells) == 2
    assert cells[0].select(".katex")
    assert len(cells[1].select(".katex")) == 2
    assert cells[1].select(".katex-display")
    assert tex_annotations(rendered.html) == ["x|y", "p", "q"]


def test_display_math_inside_environment():
    """Display math inside a `:::lemma` block is typeset inside the environment's div."""
    rendered = render(":::lemma\nFor all x\n$$\nf(x) \\le 1\n$$\nholds.\n:::\n")
    doc = parse(rendered.html)
    env = doc.select_one("div.env.env-lemma")
    assert env is not None
    assert env.select(".math-display .katex-display")
    assert tex_annotations(rendered.html) == [r"f(x) \le 1"]


@pytest.mark.parametrize(
    "tex",
    [
        r"\begin{pmatrix} a_1 & b_2 \\ c^* & d^* \end{pmatrix}",
        r"\{ x \mid |x| \lt 1 \} \cup \| y \| \gt 2",
        r"a_{i} * b_{j} * c_{k} < d_{l}",
        r"\mathbf{x}_1 \le x < y_2 \\ z",
    ],
)
def test_markdown_never_alters_tex(tex):
    """`\\\\`, `\\|`, `_`, `*`, `&`, `\\lt`, `\\gt`, `<` reach KaTeX exactly as written."""
    for source in (f"Inline ${tex}$ text.", f"Display\n\n$$\n{tex}\n$$\n", f"Paren \\({tex}\\)."):
        rendered = render(source)
        assert tex_annotations(rendered.html) == [tex], source
        assert rendered.warnings == []


@pytest.mark.parametrize("name", ["align", "align*", "equation", "gather", "multline"])
def test_amsmath_environments(name):
    """`\\begin{name}…\\end{name}` is display math, typeset without error."""
    body = r"a &= b \\ c &= d" if name.startswith("align") else r"a = b \\ c = d"
    if name == "equation":
        body = "a = b"
    source = f"Text before.\n\n\\begin{{{name}}}\n{body}\n\\end{{{name}}}\n\nText after."
    rendered = render(source)
    doc = parse(rendered.html)
    assert rendered.warnings == []
    assert doc.select(".math-display .katex-display")
    assert not doc.select(".math-error")
    assert "\\begin" not in doc.text.replace(tex_annotations(rendered.html)[0], "")


def test_equation_label_number_anchor_and_refs():
    """`\\label{eq:x}` numbers the equation, adds an anchor; `\\eqref` and `\\ref` link to it."""
    source = (
        "First\n\n$$\na = b \\label{eq:first}\n$$\n\n"
        "Second\n\n$$\nc = d \\label{eq:x}\n$$\n\n"
        "See \\eqref{eq:x} and \\ref{eq:first}."
    )
    rendered = render(source)
    doc = parse(rendered.html)
    assert rendered.labels["eq:first"]["number"] == "1"
    assert rendered.labels["eq:x"]["number"] == "2"
    anchors = [element.id for element in doc.select(".math-display .eq-anchor")]
    assert anchors == ["eq-first", "eq-x"]
    eqref = doc.select_one("a.eqref")
    assert eqref.get("href") == "#eq-x" and eqref.text == "(2)"
    ref = doc.select_one("a.ref")
    assert ref.get("href") == "#eq-first" and ref.text == "1"
    # the number is shown by the formula itself
    displays = doc.select(".math-display")
    assert "(1)" in displays[0].text and "(2)" in displays[1].text
    assert rendered.warnings == []


def test_equation_numbering_in_document_order_even_if_referenced_first():
    """Numbers follow the order of the equations, not of the references to them."""
    source = (
        "Look at \\eqref{eq:b} before \\eqref{eq:a}.\n\n"
        "$$\nx \\label{eq:a}\n$$\n\n$$\ny \\label{eq:b}\n$$\n"
    )
    rendered = render(source)
    doc = parse(rendered.html)
    links = doc.select("a.eqref")
    assert [(link.get("href"), link.text) for link in links] == [("#eq-b", "(2)"), ("#eq-a", "(1)")]


def test_align_rows_labelled_separately():
    """Each labelled row of an `align` gets its own number, both shown in the formula."""
    source = (
        "\\begin{align}\na &= b \\label{eq:r1} \\\\\nc &= d \\label{eq:r2}\n\\end{align}\n\n"
        "Rows \\eqref{eq:r1} and \\eqref{eq:r2}."
    )
    rendered = render(source)
    doc = parse(rendered.html)
    assert rendered.labels["eq:r1"]["number"] == "1"
    assert rendered.labels["eq:r2"]["number"] == "2"
    display = doc.select_one(".math-display")
    assert [a.id for a in display.select(".eq-anchor")] == ["eq-r1", "eq-r2"]
    assert not doc.select(".math-error")
    tex = tex_annotations(rendered.html)[0]
    # both tags belong to rows inside the environment, not after \end{…}
    assert tex.rstrip().endswith("\\end{align*}"), tex
    assert "\\tag{1}" in tex and "\\tag{2}" in tex


def test_katex_error_box_and_warning_line():
    """Bad TeX shows a `.math-error` box with its source and warns `math-error` on its line."""
    source = "Good $x$ first.\n\nSecond line\nbad $\\frac{1}$ here\n\nthen $y$ renders."
    rendered = render(source)
    doc = parse(rendered.html)
    error = doc.select_one(".math-error")
    assert error is not None
    assert error.text == "\\frac{1}"
    errors = [w for w in rendered.warnings if w.code == "math-error"]
    assert [w.line for w in errors] == [4]
    assert tex_annotations(rendered.html) == ["x", "y"]
    assert "renders" in doc.text


def test_katex_error_in_display_math_line():
    """A bad display formula points at the line of its opening `$$`."""
    source = "One\n\nTwo\n\n$$\n\\begin{matrix} a \\end{pmatrix}\n$$\n"
    rendered = render(source)
    assert [w.line for w in _codes(rendered, "math-error")] == [5]
    assert parse(rendered.html).select(".math-error")


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("para\n\n$$\nx + y\n\nmore text", 3),
        ("one\ntwo\nthree \\(y + z\n\nrest", 3),
        ("a\n\nb\n\nc\n\\begin{align}\nx &= 1\n", 6),
    ],
)
def test_unclosed_math_warns_with_line(source, line):
    """Unclosed `$$`, `\\(`, `\\begin{align}` warn `math-unclosed` with the right line."""
    rendered = render(source)
    warnings = _codes(rendered, "math-unclosed")
    assert [w.line for w in warnings] == [line]
    assert "katex" not in rendered.html


# LaTeX habits researchers type by reflex, each read as LaTeX reads it.


def _reference_texts(html: str) -> list[str]:
    return re.findall(r'<a class="(?:eq)?ref" href="[^"]*">([^<]*)</a>', html)


def test_an_authors_tag_wins_over_the_number_a_label_would_add():
    """`\\tag{A}` with `\\label{eq:x}`: no "Multiple \\tag" error (a second tag was added), the
    author's tag shows, \\eqref prints (A), and the next labelled equation is (1)."""
    rendered = render(
        "$$\nE = mc^2 \\tag{A} \\label{eq:x}\n$$\n\n$$\nF = ma \\label{eq:y}\n$$\n\n"
        "See \\eqref{eq:x}, \\ref{eq:x} and \\eqref{eq:y}."
    )
    assert not [w for w in rendered.warnings if w.code == "math-error"]
    assert _reference_texts(rendered.html) == ["(A)", "A", "(1)"]


def test_a_label_in_a_comment_on_an_aligned_last_row_labels_nothing():
    """A `%` comment on the last row of align* may hold a \\label: it is a comment (the tag
    added after it went into the comment and the formula failed)."""
    rendered = render(
        "$$\n\\begin{align*}\na &= b \\label{eq:y} \\\\\nc &= d % \\label{eq:z}\n"
        "\\end{align*}\n$$\n\nSee \\eqref{eq:y} and \\eqref{eq:z}."
    )
    assert not [w for w in rendered.warnings if w.code == "math-error"]
    assert _reference_texts(rendered.html) == ["(1)"]
    assert [w.message for w in rendered.warnings if w.code == "ref-unresolved"] == [
        "\\eqref{eq:z} points at no label"
    ]


def test_an_escaped_percent_is_no_comment():
    """`\\%` is a percent sign: what follows it on the row stays, label included."""
    rendered = render("$$\n50\\% \\text{ off} \\label{eq:p}\n$$\n\nSee \\eqref{eq:p}.")
    assert _reference_texts(rendered.html) == ["(1)"]


@pytest.mark.parametrize(
    ("source", "math"),
    [
        ("Let $ x^2 $ be.", ["x^2"]),  # Hugo's passthrough and MathJax typeset it
        ("Mixed $x $ and $ y$ here.", ["x", "y"]),
        ("It costs $5 and $10 today.", []),  # by design: Hugo typesets "5 and " here
        ("Nothing $ $ here.", []),
    ],
)
def test_spaces_inside_dollars(source, math):
    """Spaces just inside `$…$` still make a formula; a closing dollar before a digit does
    not (a price), nor do dollars around spaces alone."""
    assert [tex.strip() for tex in tex_annotations(render(source).html)] == math


def test_a_commutative_diagram_alone_is_math():
    """`\\begin{CD}…\\end{CD}` outside dollars is display math, as amsmath's environments are."""
    rendered = render(
        "Diagram:\n\n\\begin{CD}\nA @>a>> B \\\\\n@VbVV @VVcV \\\\\nC @>>d> D\n\\end{CD}\n"
    )
    assert rendered.html.count('class="katex-display"') == 1
    assert not rendered.warnings


def test_require_is_ignored_with_a_warning():
    """MathJax's `\\require{…}` in a formula is taken out with a warning; the formula and its
    definitions work."""
    rendered = render("$\\require{physics}\\newcommand{\\R}{\\mathbb{R}}$ Then $\\R^n$.")
    assert [w.code for w in rendered.warnings] == ["math-require"]
    assert "\\require{physics} was ignored" in rendered.warnings[0].message
    assert "math-error" not in rendered.html


def test_require_in_the_macros_field_is_no_field_error():
    """The macros field accepts a `\\require` line (ignored when rendering, with a warning)."""
    from scidraft.markup.preambles import preamble_problems

    assert preamble_problems("\\require{physics}\n\\newcommand{\\R}{\\mathbb{R}}") == []
