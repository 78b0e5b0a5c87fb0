"""The XSS tests are not vacuous: the corpus holds enough distinct payloads, the checker reports
each kind of dangerous markup, and it accepts KaTeX's legitimate styles and MathML."""

from __future__ import annotations

import pytest

from scidraft.markup import render

from .xss import (
    BODY_PAYLOADS,
    ENGINE_CASES,
    MATH_PAYLOADS,
    PLACEHOLDER_CASES,
    SHORTCODE_CASES,
    violations,
)


def test_corpus_is_large_enough():
    """The corpus holds at least 45 distinct payloads."""
    sources = {p for _, p in BODY_PAYLOADS} | {t for _, t in MATH_PAYLOADS}
    sources |= {s for _, s in SHORTCODE_CASES + ENGINE_CASES + PLACEHOLDER_CASES}
    assert len(BODY_PAYLOADS) >= 45
    assert len(sources) >= 45


@pytest.mark.parametrize(
    "markup",
    [
        "<script>alert(1)</script>",
        '<img src="x" onerror="alert(1)">',
        '<a href=" &#x0A;JaVa&#x09;Script&colon;alert(1)">x</a>',
        '<svg><a xlink:href="data:text/html,x">y</a></svg>',
        '<p style="background: URL(x)">x</p>',
        '<iframe srcdoc="x"></iframe>',
        '<span data-x="<div class="highlight">q</span>',
        '<pre class="mermaid"><img src=x></pre>',
        "<meta http-equiv=refresh>",
    ],
    ids=[
        "script",
        "onerror",
        "obfuscated-js-url",
        "xlink-data",
        "style-url",
        "srcdoc",
        "breakout",
        "mermaid-child",
        "meta",
    ],
)
def test_checker_flags_known_bad_markup(markup):
    """The checker itself reports each kind of dangerous markup (it is not vacuous)."""
    assert violations(markup)


def test_checker_accepts_katex_styles():
    """KaTeX output with its style attributes and MathML passes the checker."""
    rendered = render("$$\\frac{a}{b} \\color{red}{x}$$")
    assert "style=" in rendered.html and "<math" in rendered.html
    assert not violations(rendered.html)
