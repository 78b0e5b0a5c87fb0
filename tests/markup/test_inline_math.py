"""scidraft.markup.inline_math: front-matter text with math (an entry index's fields) as HTML,
with the theme's MathJax delimiters typeset by KaTeX and everything else escaped."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from scidraft.markup.inline_math import marked, typeset, typeset_marked


def text_with_math_html(text: str) -> str:
    """The two steps as the engine takes them, without a sanitiser between."""
    return typeset_marked(marked(text), lambda tex, display: typeset(tex, display)[0])


def test_inline_math_with_either_delimiter_is_typeset():
    html = text_with_math_html(r"Rates of $O(1/k^2)$ and \(\ell_1\) norms")
    assert html.startswith('Rates of <span class="katex">')
    assert html.count('class="katex"') == 2
    assert "$" not in html and r"\(" not in html
    assert " and " in html and html.endswith(" norms")


def test_displayed_math_is_one_formula_not_two_empty_ones():
    for text in (r"$$\sum_k a_k$$", r"\[\sum_k a_k\]"):
        html = text_with_math_html(text)
        assert html.count('class="katex-display"') == 1, text
        assert "$" not in html


def test_an_escaped_dollar_is_a_dollar_sign_and_a_lone_one_is_text():
    assert text_with_math_html(r"Costs \$5 or \$6") == "Costs $5 or $6"
    assert text_with_math_html("A $5 fee") == "A $5 fee"


def test_a_formula_katex_refuses_shows_its_tex_with_the_reason():
    html = text_with_math_html(r"Broken $\frac{1}{$ here")
    assert '<span class="math-error" title="' in html
    assert r"<code>\frac{1}{</code>" in html
    assert html.endswith(" here")


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script> and $x$",
        '<img src=x onerror="alert(1)"> $y$',
        r"$\href{javascript:alert(1)}{x}$",
        r"$\url{javascript:alert(1)}$",
        r"$x$ <a href='javascript:alert(1)'>x</a>",
    ],
)
def test_markup_outside_and_inside_math_reaches_the_page_inert(text):
    """No element of the author's, no event handler, no javascript: address: only KaTeX's
    spans and MathML."""
    tags = _Tags()
    tags.feed(text_with_math_html(text))
    assert tags.names <= {"span", "math", "semantics", "mrow", "mi", "mo", "mn", "annotation",
                          "mtext", "mstyle", "code"}  # fmt: skip
    for name, value in tags.attributes:
        assert not name.startswith("on"), name
        assert "javascript" not in (value or "").lower(), (name, value)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.names: set[str] = set()
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.names.add(tag)
        self.attributes.extend(attrs)
