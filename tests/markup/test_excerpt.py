"""Excerpts (scidraft.markup.excerpt): what every feed, list and search result quotes of a
note, read from its rendered HTML."""

from __future__ import annotations

import re

import pytest

from scidraft.markup import RenderContext, render
from scidraft.markup import excerpt as ex

from .test_citations import FakeBibliography
from .xss import BODY_PAYLOADS, MATH_CONTEXTS, MATH_PAYLOADS, violations

NOTE = """By \\Cref{lem-shift} and \\cite{vaswani}, the sum $\\sum_i x_i$ is unchanged.

:::lemma[Shift invariance]{#lem-shift}
Adding $c$ to every logit changes nothing:
$$
\\mathrm{softmax}(x + c) = \\mathrm{softmax}(x) \\label{eq:shift}
$$
:::

See \\eqref{eq:shift} for the identity.

```mermaid
graph LR; Mermaidnode-->Othernode
```

```python
def codeword(): return 1
```

```pseudo-algorithm
\\begin{algorithm}
\\caption{Algoword}
\\begin{algorithmic}
\\STATE $y \\gets 1$
\\end{algorithmic}
\\end{algorithm}
```

Closing words after the blocks.

{{< references bib="bib/r.bib" >}}
"""


@pytest.fixture(scope="module")
def rendered():
    bib = FakeBibliography("/bib/r.bib", ["vaswani"])
    return render(NOTE, RenderContext(resolve_bibliography={"bib/r.bib": bib}.get))


def _whole(rendered) -> ex.Excerpt:
    return ex.excerpt(ex.segments_from_html(rendered.card_html), words=1_000)


def test_text_keeps_labels_and_tex_and_leaves_out_blocks(rendered):
    """The plain excerpt reads references and citations as their labels, formulas as TeX
    between delimiters, and has no diagram, code, algorithm or reference list in it."""
    text = _whole(rendered).text()
    assert text.startswith("By Lemma 1 and [1], the sum \\(\\sum_i x_i\\) is unchanged.")
    assert "Lemma 1 (Shift invariance)." in text
    assert "\\[\\mathrm{softmax}(x + c) = \\mathrm{softmax}(x)" in text
    assert "See (1) for the identity." in text
    assert text.endswith("Closing words after the blocks.")
    for left_out in ("Mermaidnode", "codeword", "Algoword", "\\cite", "\\ref", "Entry vaswani"):
        assert left_out not in text


def test_html_carries_katex_and_no_blocks_or_links(rendered):
    """The HTML excerpt has each formula as KaTeX typeset it, and only text besides: no links,
    no blocks, no diagram or code."""
    found = _whole(rendered)
    markup = found.html()
    formulas = [segment for segment in found.segments if segment.math]
    assert len(formulas) == 3 and found.has_math
    assert markup.count('<span class="katex">') == len(formulas)
    assert "<a " not in markup and "<div" not in markup and "<pre" not in markup
    assert "Lemma 1" in markup and "[1]" in markup
    assert "Mermaidnode" not in markup and "codeword" not in markup and "Algoword" not in markup
    assert 'id="' not in markup  # no anchor of the note repeated


def test_a_cut_never_falls_inside_a_formula(rendered):
    """At every length, each formula in the excerpt is whole (its KaTeX span balanced, its TeX
    between both delimiters) and words are never split."""
    segments = ex.segments_from_html(rendered.card_html)
    every_word = set(_whole(rendered).text().split())
    for words in range(1, 40):
        found = ex.excerpt(segments, words=words)
        markup = found.html(ellipsis="")
        assert markup.count("<span") == markup.count("</span>"), words
        assert markup.count('<span class="katex">') == markup.count("<annotation"), words
        text = found.text(ellipsis="")
        assert text.count("\\(") == text.count("\\)") and text.count("\\[") == text.count("\\]")
        assert set(text.split()) <= every_word, words


def test_words_limit_and_cut_marks():
    """The first N words, with `…` where text was left out; a short text is not marked."""
    body = " ".join(f"w{index}" for index in range(100))
    segments = ex.segments_from_html(render(body).card_html)
    found = ex.excerpt(segments, words=70)
    assert found.cut_after and not found.cut_before
    assert found.text() == " ".join(f"w{index}" for index in range(70)) + " …"
    short = ex.excerpt(ex.segments_from_html(render("Just this.").card_html), words=70)
    assert short.text() == "Just this." and not short.cut_after


def test_reading_stops_after_the_words_it_needs():
    """With `max_words`, a long note is read only as far as its opening words."""
    body = "\n\n".join(f"Paragraph {index} with five words." for index in range(5_000))
    segments = ex.segments_from_html(render(body).card_html, 20)
    assert sum(len(segment.text.split()) for segment in segments) <= 30


def test_around_centres_on_a_match_and_never_marks_inside_math():
    """A search excerpt starts before the first match outside formulas and marks matches in
    text only: a formula containing the query word is shown unmarked."""
    filler = " ".join(f"f{index}" for index in range(80))
    source = f"{filler} the $\\sum x$ then a sum appears {filler}"
    segments = ex.segments_from_html(render(source).card_html)
    pattern = re.compile("sum", re.I)
    found = ex.excerpt(segments, chars=300, around=pattern)
    assert found.matched and found.cut_before and found.cut_after
    markup = found.html(highlight=pattern)
    assert markup.count('<mark class="search-highlight">') == 1
    katex = re.search(r'<span class="katex">.*?</annotation>', markup, re.S).group()
    assert "search-highlight" not in katex


def test_written_text_is_typeset_and_escaped():
    """A summary as written: its `$…$` and `\\(…\\)` formulas typeset, its text escaped, an
    unreadable formula kept as escaped source."""
    found = ex.Excerpt(ex.segments_from_text(r"Rate \(|\lambda_2|\) for A&B <b>x</b> \(\frac{\)"))
    markup = found.html()
    assert markup.count('<span class="katex">') == 1
    assert "A&amp;B &lt;b&gt;x&lt;/b&gt;" in markup
    assert '<code class="math-source">' in markup
    assert found.text() == r"Rate \(|\lambda_2|\) for A&B <b>x</b> \(\frac{\)"


def test_a_span_named_katex_by_an_author_is_text():
    """Raw HTML with KaTeX's class name but no formula in it is read as text, not copied."""
    rendered = render('<span class="katex">plain <em>words</em></span> after')
    found = ex.excerpt(ex.segments_from_html(rendered.card_html), words=70)
    assert not found.has_math
    assert found.text() == "plain words after"


def _excerpts(source: str) -> list[str]:
    rendered = render(source)
    out = []
    for markup in (rendered.card_html, rendered.html):
        segments = ex.segments_from_html(markup)
        out.append(ex.excerpt(segments, words=10_000).html())
        out.append(ex.excerpt(segments, chars=300, around=re.compile("x|alert")).html())
    return out


@pytest.mark.parametrize(
    "payload", [p for _, p in BODY_PAYLOADS], ids=[i for i, _ in BODY_PAYLOADS]
)
def test_body_payload_stays_inert_in_every_excerpt(payload):
    """An author's XSS payload leaves nothing that runs in any excerpt, and no link, image or
    author element at all: an excerpt is text and formulas."""
    for markup in _excerpts(f"Intro x.\n\n{payload}\n\nOutro x."):
        assert not violations(markup), markup
        assert not re.search(
            r"<(?!/?(?:span|mark|code|math|semantics|annotation|m\w+|svg|path|line)\b)", markup
        ), markup


@pytest.mark.parametrize("context_name", list(MATH_CONTEXTS))
@pytest.mark.parametrize("tex", [t for _, t in MATH_PAYLOADS], ids=[i for i, _ in MATH_PAYLOADS])
def test_math_payload_stays_inert_in_every_excerpt(context_name, tex):
    """TeX with links or HTML commands, in every math context, is inert in every excerpt."""
    for markup in _excerpts(MATH_CONTEXTS[context_name](tex)):
        assert not violations(markup), markup
        assert "<a " not in markup and "<img" not in markup, markup


def test_summary_divider_ends_the_summary_but_not_search():
    """Hugo's `<!--more-->` line ends the summary (marked as cut) and nothing of it is seen;
    search previews read past it; one inside a code example is literal code."""
    rendered = render("Opening $x$.\n\n<!--more-->\n\nLater words.\n\n```\n<!--more-->\n```\n")
    assert rendered.html.count("<!--more-->") == 1 and "&lt;!--more--&gt;" in rendered.html
    segments = ex.segments_from_html(rendered.card_html)
    summary = ex.excerpt(segments, words=70)
    assert summary.text() == "Opening \\(x\\). …" and summary.cut_after
    found = ex.excerpt(segments, chars=300, around=re.compile("Later"))
    assert found.matched and "Later words." in found.text()


def test_a_prefix_cut_inside_a_formula_leaves_it_out():
    """HTML that ends inside a formula (a list reads only the start of a long card) gives the
    words before it, never KaTeX's inner text."""
    markup = render("Words before $\\frac{a}{b} + \\sqrt{c}$ after.").card_html
    cut = markup[: markup.index("<annotation") - 40]
    found = ex.excerpt(ex.segments_from_html(cut), words=70)
    assert found.text() == "Words before" and not found.has_math
