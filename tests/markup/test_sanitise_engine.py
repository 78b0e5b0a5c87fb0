"""The engine's own constructs stay inert: TeX payloads in every kind of math, payloads in
shortcode arguments, environments, Mermaid diagrams, algorithms, LaTeX text commands, headings,
footnotes and tables render without anything that runs, and the placeholders standing in for
math, code and citations (real or forged by an author) can never complete a dangerous URL or
put raw HTML into an attribute."""

from __future__ import annotations

import pytest

from scidraft.markup import render

from .xss import (
    ENGINE_CASES,
    MATH_CONTEXTS,
    MATH_PAYLOADS,
    PLACEHOLDER_CASES,
    SHORTCODE_CASES,
    assert_safe,
    violations,
)


@pytest.mark.parametrize("context_name", list(MATH_CONTEXTS))
@pytest.mark.parametrize("tex", [t for _, t in MATH_PAYLOADS], ids=[i for i, _ in MATH_PAYLOADS])
def test_math_payload_is_neutralised(context_name, tex):
    """TeX with links, HTML commands or raw HTML renders (or errors) without anything that runs."""
    assert_safe(MATH_CONTEXTS[context_name](tex))


@pytest.mark.parametrize(
    "source", [s for _, s in SHORTCODE_CASES], ids=[i for i, _ in SHORTCODE_CASES]
)
def test_shortcode_payload_is_neutralised(source):
    """Payloads in shortcode arguments become inert text or are dropped, never live markup."""
    assert_safe(source)


@pytest.mark.parametrize("source", [s for _, s in ENGINE_CASES], ids=[i for i, _ in ENGINE_CASES])
def test_engine_construct_payload_is_neutralised(source):
    """Environments, diagrams, algorithms, LaTeX commands, headings and footnotes stay inert."""
    assert_safe(source)


@pytest.mark.parametrize(
    "source", [s for _, s in PLACEHOLDER_CASES], ids=[i for i, _ in PLACEHOLDER_CASES]
)
def test_placeholder_cannot_complete_a_url(source):
    """A placeholder (real or forged) inside a URL cannot turn it into javascript: after fill."""
    assert_safe(source)


def test_placeholder_in_safe_url_keeps_link():
    """A placeholder after an https scheme or a relative path leaves the link working."""
    rendered = render("[a](https://e.example/$x$) [b](/notes/$y$/)")
    assert 'href="https://e.example/x"' in rendered.html
    assert 'href="/notes/y/"' in rendered.html


def test_forged_placeholder_does_not_crash():
    """Private-use characters typed by an author never index the stash out of range."""
    rendered = render("Text \ue00099\ue001 and \ue000 7 \ue001.")
    assert not violations(rendered.html)


def test_stash_html_stays_out_of_attributes():
    """Code placed inside a shortcode argument never lands as raw HTML in an attribute value."""
    rendered = render('{{< glossary-term id="\n```\nq\n```\n" def="d" >}}t{{< /glossary-term >}}')
    problems = [p for p in violations(rendered.html) if "breakout" in p]
    assert not problems, rendered.html


def test_mermaid_source_is_escaped_text():
    """Mermaid source stays text in <pre class="mermaid">: its < is &lt;, no child elements."""
    rendered = render(
        '```mermaid\ngraph TD\nA["<img src=x onerror=alert(1)>"]\n'
        'click A href "javascript:alert(1)"\n```'
    )
    assert '<pre class="mermaid" tabindex="0">' in rendered.html
    assert "&lt;img src=x onerror=alert(1)&gt;" in rendered.html
    assert "<img" not in rendered.html
    assert not violations(rendered.html)
