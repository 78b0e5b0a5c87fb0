"""Denial-of-service inputs: each renders or is refused in under 5 s, with a
warning that says what happened, and the engine keeps rendering normal notes afterwards."""

from __future__ import annotations

import html
import re
import sys
import time
import traceback

import nh3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scidraft.markup import (
    RenderContext,
    deep_blocks,
    jsengine,
    limits,
    nesting,
    render,
    sanitise,
    v8pool,
)

SECONDS = 5.0
MB = 1024 * 1024

NORMAL = "# Heat\n\nSee $e^{i\\pi} + 1 = 0$ and **bold**.\n\n- one\n    - two\n"


def _timed(source: str, context: RenderContext | None = None):
    """Render, asserting the work took under SECONDS of CPU time. CPU time, not the wall
    clock: the limit is on the work an input can cause, and the test machine is shared (the
    wall-clock time is reported with any failure)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    rendered = render(source, context)
    cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start
    assert cpu < SECONDS, f"took {cpu:.1f} s of CPU time ({wall:.1f} s on the clock)"
    return rendered


def _codes(rendered) -> set[str]:
    return {warning.code for warning in rendered.warnings}


@pytest.fixture(autouse=True)
def _engine_keeps_serving():
    """Every hostile input is followed by a normal note rendering exactly as before it."""
    before = render(NORMAL).html
    yield
    assert render(NORMAL).html == before


# --- Size --------------------------------------------------------------------------------------


def test_body_over_the_limit_is_refused_at_once_with_an_error_and_a_warning():
    """One byte over max_source_bytes: an error paragraph naming both sizes, no rendering."""
    context = RenderContext(max_source_bytes=1000)
    rendered = _timed("é" * 501, context)  # 1,002 bytes in UTF-8, 501 characters
    assert _codes(rendered) == {"body-too-large"}
    assert rendered.html.startswith('<p class="render-error">')
    assert "1002 bytes" in rendered.html and "1000 bytes" in rendered.html
    assert rendered.card_html == rendered.html and rendered.text == ""


def test_default_limit_is_two_megabytes():
    """The engine's own default refuses 2 MB + 1 byte and accepts 2 MB exactly."""
    assert RenderContext().max_source_bytes == 2 * MB
    assert _codes(_timed("x" * (2 * MB + 1))) == {"body-too-large"}


def _mixed_body(size: int) -> str:
    unit = (
        "## Section\n\nProse with $x_{i}^{2}$, \\(a+b\\), **bold**, *em*, `code`, a [link]"
        "(https://example.org) and \\cite{knuth}.\n\n$$\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$$\n\n"
        "- item\n    - nested *item*\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "```python\nprint('hi')\n```\n\n:::lemma[Name]{#lem-x}\nText.\n:::\n\n"
    )
    body = unit * (size // len(unit) + 1)
    return body[:size]


def test_body_exactly_at_the_limit_renders_in_time():
    """A 2 MB body of ordinary constructs (every byte ASCII) renders, within the time limit;
    if the budget runs out first the note says so and the rest is shown as text."""
    body = _mixed_body(2 * MB)
    assert len(body.encode("utf-8")) == 2 * MB
    rendered = _timed(body)
    assert "body-too-large" not in _codes(rendered)
    assert "Prose with" in rendered.html and len(rendered.text) > MB


# --- Nesting and emphasis ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("- " * 10_000 + "x\n", id="10000 list markers on a line"),
        pytest.param("1. " * 10_000 + "x\n", id="10000 ordered markers on a line"),
        pytest.param("> " * 10_000 + "x\n", id="10000 block quotes"),
        pytest.param("".join("> " * i + "- x\n" for i in range(1, 600)), id="quotes and lists"),
        # Indentation: as many four-space levels as fit in the size limit.
        pytest.param("".join("    " * i + "- x\n" for i in range(1000)), id="1000 indented"),
    ],
)
def test_deeply_nested_lists_are_shown_as_text_with_a_warning(source):
    """Nesting past MAX_NESTING is escaped text and a nesting-limit warning, not a
    RecursionError or minutes of Python-Markdown."""
    rendered = _timed(source)
    assert _codes(rendered) == {"nesting-limit"}
    assert '<pre class="render-limit">' in rendered.html


def test_nesting_within_the_limit_renders_as_before():
    """A list nested MAX_NESTING levels deep is still a nested list, without a warning."""
    source = "".join("    " * level + "- x\n" for level in range(limits.MAX_NESTING))
    rendered = _timed(source)
    assert rendered.warnings == []
    assert rendered.html.count("<ul>") == limits.MAX_NESTING


def test_nesting_depth_counts_indentation_quotes_and_markers():
    """Four columns, a `>` and a list marker are one level each."""
    assert deep_blocks.nesting("x") == 0
    assert deep_blocks.nesting("        - x") == 3
    assert deep_blocks.nesting("> > - 1. x") == 4
    assert deep_blocks.nesting("\t\t> x") == 3
    assert deep_blocks.nesting("----------") == 0  # a rule, not markers


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("*" * 100_000, id="100000 stars"),
        pytest.param("*a " * 33_334, id="unclosed emphasis"),
        pytest.param("**a*" * 25_000, id="mixed strong and em"),
        pytest.param("*a " * 10_000 + "b" + "*" * 10_000, id="10000 nested emphasis"),
        pytest.param("_" * 100_000, id="100000 underscores"),
    ],
)
def test_star_runs_render_in_time(source):
    """100,000 emphasis characters: rendered, or shown as text with a render-limit warning.
    Emphasis nested past nesting.MAX_DEPTH elements loses its tags past that depth, with an
    html-nesting warning (CommonMark nests `*a *a … b**…` as deep as it goes)."""
    rendered = _timed(source)
    assert rendered.html
    # render-incomplete: on a slow or loaded machine the render's time ran out first (shown as
    # text, rendered again with more time): bounded all the same.
    assert _codes(rendered) <= {"render-limit", "render-incomplete", "html-nesting"}


def _with_little_stack(function):
    """`function()` with the recursion limit 250 frames above the current depth."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(traceback.extract_stack()) + 250)
    try:
        return function()
    finally:
        sys.setrecursionlimit(limit)


def test_nested_emphasis_renders_with_little_stack():
    """600 levels of emphasis render even with 250 frames of stack left: CommonMark's delimiter
    balancing is a loop (Python-Markdown recursed per level and ran out here). The levels past
    nesting.MAX_DEPTH open elements (the paragraph is one) lose their tags, with a warning;
    every word is kept."""
    source = "*a " * 600 + "b" + "*" * 600
    rendered = _with_little_stack(lambda: render(source))
    assert [(w.line, w.code) for w in rendered.warnings] == [(1, "html-nesting")]
    assert rendered.warnings[0].message.startswith("501 HTML tags nested more than 100")
    assert rendered.html.startswith("<p><em>a <em>a ")
    assert rendered.html.count("<em>") == nesting.MAX_DEPTH - 1
    assert rendered.html.count("a ") == 600 and "b</em>" in rendered.html


def test_nesting_that_exhausts_the_stack_falls_back_with_a_warning():
    """Images nested in images' text are parsed one level inside the other: reaching the
    recursion limit is a warning and escaped text, never a RecursionError (the limit is
    lowered so that 100 levels reach it)."""
    source = "![" * 100 + "x" + "](u)" * 100
    assert render(source).html.startswith('<p><img src="u" alt="x">')  # fine at the usual limit
    rendered = _with_little_stack(lambda: render(source))
    assert _codes(rendered) == {"render-limit"}
    assert "nested too deeply" in rendered.warnings[0].message
    assert rendered.html.startswith("<p>![![")


def test_nested_text_styles_stop_at_the_nesting_limit():
    """\\textbf nested 10,000 deep: the outer levels become HTML, the rest stays as written."""
    source = "\\textbf{" * 10_000 + "x" + "}" * 10_000
    rendered = _timed(source)
    assert rendered.html.count("<strong>") == limits.MAX_NESTING
    assert "\\textbf{" in rendered.html


# --- Math ------------------------------------------------------------------------------------


def test_katex_bounds_macro_expansion_and_calls():
    """maxExpand caps \\def expansion; every V8 call has a timeout and a memory limit."""
    assert 0 < jsengine.KATEX_OPTIONS["maxExpand"] <= 10_000
    assert 0 < v8pool.CALL_TIMEOUT_SECONDS <= SECONDS
    assert v8pool.MEMORY_LIMIT_BYTES > 0


DEF_BOMB = (
    "\\def\\a{xx}\\def\\b{\\a\\a}\\def\\c{\\b\\b}\\def\\d{\\c\\c}\\def\\e{\\d\\d}"
    "\\def\\f{\\e\\e}\\def\\g{\\f\\f}\\def\\h{\\g\\g}\\def\\i{\\h\\h}\\def\\j{\\i\\i}"
    "\\def\\k{\\j\\j}\\def\\l{\\k\\k}\\def\\m{\\l\\l}\\k\\m"
)


@pytest.mark.parametrize("delimiters", [("$", "$"), ("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]")])
def test_def_bomb_is_a_math_error_not_an_exponential_expansion(delimiters):
    """A formula whose macros double 13 times stops at maxExpand: a visible error box and a
    math-error warning naming the cause."""
    opening, closing = delimiters
    rendered = _timed(f"Bomb: {opening}{DEF_BOMB}{closing}\n")
    assert _codes(rendered) == {"math-error"}
    assert "expansion" in rendered.warnings[0].message.lower()
    assert 'class="math-error' in rendered.html


def test_many_distinct_def_bombs_stay_within_the_time_limit():
    """200 different bombs in one note: each is refused by maxExpand, the note stays bounded."""
    source = "\n\n".join(f"${DEF_BOMB}\\def\\z{{{n}}}$" for n in range(200))
    rendered = _timed(source)
    # render-incomplete: the render's time ran out first on a slow or loaded machine.
    assert _codes(rendered) <= {"math-error", "render-limit", "render-incomplete"}
    assert rendered.warnings


def test_two_megabytes_of_dollars_and_formulas_fall_back_in_time():
    """Hundreds of thousands of formulas: typeset until the budget or the placeholder cap runs
    out, the rest shown as source, with a render-limit warning."""
    rendered = _timed("\\(x\\) " * (2 * MB // 6))
    assert "render-limit" in _codes(rendered)
    rendered = _timed("$" * (2 * MB - 1))
    assert rendered.html


# --- Pseudocode ------------------------------------------------------------------------------


def test_pseudocode_block_of_50000_lines_is_refused_as_source():
    """An algorithm over MAX_ALGORITHM_LINES is shown as its source with a warning saying
    why; pseudocode.js never sees it."""
    lines = "\n".join(f"\\State $x_{{{n}}} \\gets {n}$" for n in range(50_000))
    source = (
        "```pseudo-algorithm\n\\begin{algorithm}\n\\caption{Long}\n\\begin{algorithmic}\n"
        f"{lines}\n\\end{{algorithmic}}\n\\end{{algorithm}}\n```\n"
    )
    rendered = _timed(source)
    assert _codes(rendered) == {"algorithm-error"}
    assert "over the limit" in rendered.warnings[0].message
    assert 'class="algorithm-src algorithm-error"' in rendered.html


def test_one_fence_of_two_megabytes_is_highlighted_until_the_budget_runs_out():
    """Pygments highlights a fence in one call (15 s on 2 MB of Python): it stops with the
    budget, and the fence is shown uncoloured, whole, with a render-limit warning."""
    code = ("x = [1, 'a', f(y)]  # c\n" * (2 * MB // 25))[: 2 * MB - 20].rstrip("\n")
    rendered = _timed(f"```python\n{code}\n```\n")
    assert "render-limit" in _codes(rendered)
    assert 'class="language-python"' in rendered.html and '<span class="n">' not in rendered.html
    assert html.escape(code) in rendered.html


def test_pseudocode_within_the_line_limit_still_renders():
    """A 200-line algorithm is typeset by pseudocode.js as before."""
    lines = "\n".join(f"\\State $x \\gets {n}$" for n in range(200))
    source = (
        "```pseudo-algorithm\n\\begin{algorithm}\n\\caption{Long}\n\\begin{algorithmic}\n"
        f"{lines}\n\\end{{algorithmic}}\n\\end{{algorithm}}\n```\n"
    )
    rendered = _timed(source)
    assert rendered.warnings == [] and 'class="ps-root"' in rendered.html


# --- Other quadratic constructs ----------------------------------------------------------------


@pytest.mark.parametrize(
    "unit",
    [
        pytest.param("[", id="open brackets"),
        pytest.param("<", id="angle brackets"),
        pytest.param("[a](b) ", id="links"),
        pytest.param("&amp; ", id="entities"),
        pytest.param("- a\n", id="list items"),
        pytest.param("```\n", id="fences"),
        pytest.param(":::lemma\n", id="environments"),
        pytest.param("\\textbf{", id="unclosed text styles"),
        pytest.param("| a | b |\n|---|---|\n", id="tables"),
        # What the Goldmark-compatible stage added: each linear, each bounded.
        pytest.param("## a\n", id="headings with one id"),
        pytest.param("a\n---\n", id="setext headings"),
        pytest.param("a\n: b\n", id="definitions"),
        pytest.param("- [ ] a\n", id="task items"),
        pytest.param("a\n{.x}\n", id="attribute lines"),
        pytest.param("\"a' ", id="quotes"),
        pytest.param("www.a.org a@b.co ", id="bare links"),
    ],
)
def test_two_megabytes_of_one_construct_render_in_time(unit):
    """A body at the size limit made of one construct (quadratic in Python-Markdown or a
    placeholder each): rendered or degraded within the time limit, any fallback announced."""
    source = (unit * (2 * MB // len(unit) + 1))[: 2 * MB]
    rendered = _timed(source)
    assert rendered.html
    assert len(rendered.warnings) <= limits.MAX_WARNINGS + 1


def test_spent_budget_degrades_every_stage_to_text_with_a_warning():
    """With no time left, math, Markdown and code take their plain paths, escaped; later
    renders with time to spare typeset as usual (nothing half-done is cached)."""
    source = "**bold** $x_1^{2}$ `code` <b>raw</b>\n"
    with limits.budget(0):
        spent = render(source)
    assert "render-limit" in _codes(spent)
    assert "<strong>" not in spent.html and "&lt;b&gt;raw&lt;/b&gt;" in spent.html
    assert "katex" not in spent.html and "$x_1^{2}$" in spent.html
    fresh = render(source)
    assert fresh.warnings == [] and "<strong>bold</strong>" in fresh.html and "katex" in fresh.html


def test_warnings_are_capped():
    """Thousands of identical problems are kept as MAX_WARNINGS and one summary."""
    rendered = _timed("\\ref{nowhere} " * 5_000)
    assert len(rendered.warnings) == limits.MAX_WARNINGS + 1
    assert rendered.warnings[-1].code == "too-many-warnings"
    assert rendered.warnings[-1].message == f"{5_000 - limits.MAX_WARNINGS} more warnings"


def test_time_waiting_on_the_javascript_engine_counts_against_the_budget():
    """KaTeX runs in V8's threads, where the rendering thread's CPU clock stands still: many
    distinct slow formulas still end the budget, and the rest are shown as source."""
    formulas = "\n\n".join(
        f"$$\\begin{{matrix}}{' & '.join(['x'] * 40)} \\\\ {n}\\end{{matrix}}$$"
        for n in range(3000)
    )
    rendered = _timed(formulas)
    assert "render-limit" in _codes(rendered)


# --- Reference lists ---------------------------------------------------------------------------


def test_five_thousand_reference_lists_render_in_time():
    """5,000 `{{< references >}}` lists (each after its own \\cite) took 10 s. The
    file is looked up once per render, lists past citations.MAX_LISTS show their keys
    unformatted with one warning, and the first lists are formatted by citation-js as usual."""
    from bibliography.formatting import ParsedBibliography
    from bibliography.parsing import parse_bibtex
    from scidraft.markup import citations

    parsed = parse_bibtex("@article{a, title = {Heat}, author = {Fourier, Joseph}, year = 1822}")
    bibliography = ParsedBibliography("bib/refs.bib", parsed.entries)
    looked_up = []

    def resolve(name):
        looked_up.append(name)
        return bibliography

    source = '\\cite{a}\n\n{{< references bib="bib/refs.bib" >}}\n\n' * 5_000
    rendered = _timed(source, RenderContext(resolve_bibliography=resolve))
    assert looked_up == ["bib/refs.bib"]
    assert len(rendered.citations) == 5_000
    assert "references-limit" in _codes(rendered)
    assert rendered.html.count("Fourier J. Heat. 1822;") >= citations.MAX_LISTS
    assert rendered.html.count("not formatted: too many reference lists") == 5_000 - 1_000
    assert _codes(rendered) == {"references-limit"}
    # Lists not formatted still record where each key is (references.bib, Scholar tags).
    assert all(found.sources == {"a": "bib/refs.bib"} for found in rendered.citations)


def test_five_thousand_lists_of_distinct_entries_stop_at_the_budget():
    """Each list citing an entry not formatted before costs a citation-js call: once the
    render's budget is spent the remaining lists show their keys, with one warning."""
    from bibliography.formatting import ParsedBibliography, format_cache_clear
    from bibliography.parsing import parse_bibtex

    text = "\n".join(
        f"@article{{k{n}, title = {{Heat {n}}}, author = {{Fourier, Joseph}}, year = 1822}}"
        for n in range(5_000)
    )
    bibliography = ParsedBibliography("bib/refs.bib", parse_bibtex(text).entries)
    format_cache_clear()
    source = "".join(
        f'\\cite{{k{n}}}\n\n{{{{< references bib="bib/refs.bib" >}}}}\n\n' for n in range(5_000)
    )
    rendered = _timed(source, RenderContext(resolve_bibliography=lambda name: bibliography))
    assert "references-limit" in _codes(rendered)
    assert 0 < rendered.html.count("Fourier J. Heat") < 5_000


# --- HTML nesting before the sanitiser -----------------------------------------------------------

_HTML_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*>")
_VOID_TAGS = {"br", "hr", "img", "col", "wbr", "input"}


def _deepest(markup: str) -> int:
    """How deep the elements of well-formed `markup` (nh3's output) nest."""
    depth = deepest = 0
    for closing, name in _HTML_TAG.findall(markup):
        if name in _VOID_TAGS:
            continue
        depth += -1 if closing else 1
        deepest = max(deepest, depth)
    return deepest


def _cleaned(markup: str) -> str:
    """The sanitiser alone, asserting under SECONDS of CPU time."""
    start = time.process_time()
    cleaned = sanitise.clean_author_html(markup)
    cpu = time.process_time() - start
    assert cpu < SECONDS, f"took {cpu:.1f} s of CPU time"
    return cleaned


def test_a_hundred_thousand_nested_divs_render_in_time_with_a_warning():
    """`<div>` × 100,000 (0.5 MB) took 29 s in nh3 (quadratic in depth): the tags past
    MAX_DEPTH are left out with a warning on their line; the text around them renders. The
    divs stay open, so the paragraph of "After." is the 100,001st element (left out too)."""
    rendered = _timed("Intro.\n\n" + "<div>" * 100_000 + "\n\nAfter.")
    (warning,) = rendered.warnings
    assert (warning.line, warning.code) == (3, "html-nesting")
    assert warning.message.startswith(f"99,901 HTML tags nested more than {nesting.MAX_DEPTH}")
    assert "<p>Intro.</p>" in rendered.html and "After." in rendered.html
    assert _deepest(rendered.html) == nesting.MAX_DEPTH


# Each takes time (or memory) growing with the square of its length in nh3 alone.
HOSTILE_HTML = [
    # Open elements, each looked through by the next block-level tag.
    pytest.param("<div>" * 100_000, id="divs"),
    pytest.param("<ul><li>" * 50_000, id="list items"),
    pytest.param("<a><div>" * 50_000, id="links around blocks"),
    # Formatting elements left open across block ends are re-opened in every later block:
    # 2,000 of these came out as 40 MB.
    pytest.param("".join(f'<b class="c{i}">x<p>' for i in range(4_000)), id="reopened bold"),
    pytest.param("".join(f'<div><i class="c{i}">x</div>' for i in range(4_000)), id="reopened"),
    # Text outside a table's cells is moved in front of the table, one piece at a time.
    pytest.param("<table>" + "x<br>" * 200_000, id="fostered text"),
    pytest.param(("<table>" + "x<br>" * 100) * 2_000, id="fostered text before many tables"),
    pytest.param("<table><td></tr>" + "x<br>" * 200_000, id="fostered after a row ends a cell"),
    pytest.param("<table>" + "</p>" * 200_000, id="end tags that insert elements"),
    pytest.param("<table><template></table></template>" + "x<br>" * 200_000, id="template"),
    pytest.param("<table><svg><td><br>" + "x<br>" * 200_000, id="cell read as SVG"),
    # Where a tag starts and ends as HTML's tokenizer reads it: `<!-->` is a whole comment,
    # a quoted attribute value may hold `>`, CDATA is text only in SVG and MathML.
    pytest.param("<!--><div>-->" * 100_000, id="empty comments"),
    pytest.param('<div title="></div>">x' * 80_000, id="end tag in an attribute"),
    pytest.param("<svg><![CDATA[>]]><!--]]>" + "<div></div>-->" * 50_000, id="CDATA"),
    # Implied ends and misnesting, which the parser resolves in ways counted as still open.
    pytest.param("<p>x" * 100_000, id="paragraphs left open"),
    pytest.param("<b><i>x</b></i>" * 50_000, id="misnested formatting"),
    pytest.param("<table><tr><td>x" * 20_000, id="tables in cells"),
]


@pytest.mark.parametrize("markup", HOSTILE_HTML)
def test_hostile_html_is_sanitised_in_linear_time_and_size(markup):
    """Each is cleaned in bounded time into output no larger than a few times its input,
    nested no deeper than MAX_DEPTH (a table's last rows may add two)."""
    cleaned = _cleaned(markup)
    assert len(cleaned) < 3 * len(markup)
    assert _deepest(cleaned) <= nesting.MAX_DEPTH + 2


def test_formatting_reopened_past_the_bound_is_closed_where_the_next_block_starts():
    """4,000 distinct `<b>` left open across paragraphs would be re-opened in every later one:
    past MAX_REOPENED they are closed before the next block, every "x" is kept."""
    markup = "".join(f'<b class="c{i}">x<p>' for i in range(4_000))
    limited, limit = nesting.limit_nesting(markup)
    assert limit is not None and limit.closed > 0
    assert "formatting tags" in limit.message()
    cleaned = _cleaned(markup)
    assert cleaned.count("x") == 4_000
    assert cleaned.count("<b") <= nesting.MAX_REOPENED + 2 * nesting.MAX_DEPTH


_SOUP_NAMES = (
    "div p b i a em span ul ol li dl dt dd table tbody thead tr td th caption h1 h2 blockquote "
    "pre code br hr img select option svg math textarea title template font nobr section col "
    "colgroup figure path mi foreignObject desc noscript plaintext xmp button form object"
)
_SOUP_TAGS = _SOUP_NAMES.split()
_SOUP = st.sampled_from(
    [f"<{name}>" for name in _SOUP_TAGS]
    + [f"</{name}>" for name in _SOUP_TAGS]
    + ['<b class="x">', "x", " ", "<!-->", "<!--", "-->", '<i title="></i>">', "<![CDATA[",
       "]]>", "<p/>", "<", "</", "<!", ">", "div>", '<p a="', "'"]
)  # fmt: skip
# What nh3 keeps of the soup's elements: the tree html5ever built, as deep as it is (less the
# elements of raw text, whose text nh3 writes back as it was).
_SOUP_KEPT = set(_SOUP_TAGS) - {"textarea", "title", "noscript", "plaintext", "xmp"}


@settings(max_examples=300, deadline=None)
@given(st.lists(_SOUP, min_size=1, max_size=30))
def test_no_repeated_tag_soup_nests_past_the_bound(pieces):
    """Any short mix of tags, comments and stray markup, repeated 150 times, is nested no
    deeper than MAX_DEPTH (and a table's two) in the tree the parser builds: the count never
    falls behind the parser's depth, however each repetition opens, closes or ignores."""
    limited, _ = nesting.limit_nesting("".join(pieces) * 150)
    tree = nh3.clean(limited, tags=_SOUP_KEPT, attributes={}, clean_content_tags=set())
    assert _deepest(tree) <= nesting.MAX_DEPTH + 2


def test_text_outside_the_cells_of_a_huge_table_is_all_kept():
    """Closing the table after MAX_FOSTERED pieces loses none of the author's text."""
    cleaned = _cleaned("<table>" + "x<br>" * 200_000)
    assert cleaned.count("x") == 200_000


@pytest.mark.parametrize(
    "markup",
    [
        "<p>one<p>two<ul><li>a<li>b</ul><dl><dt>t<dd>d</dl>",
        "<p><b>bold<p>still bold, as the parser re-opens it</p>",
        "<div><em>x</div><span>y</span>",
        "<table><tr><td>a<td>b<tr><td>c</table>",
        "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>",
        "<svg><circle r='1'/><path d='M0'/></svg><select><option>a<option>b</select>",
        "<a href='/x'>one</a><a href='/y'>two<a href='/z'>three</a>",
        "<textarea><div><div></textarea><script><b><b></script><!-- <div> -->",
        "<p>one" * 300,
        "<ul>" + "<li>item" * 300 + "</ul>",
        "<dl>" + "<dt>term<dd>definition" * 150 + "</dl>",
        "<table>" + "<tr><td>a<td>b" * 150 + "</table>",
        "<div><p>unclosed</div>" * 300,
        '<p title="a > b">quoted</p><!----><!-- a -- b -->' * 100,
    ],
)
def test_ordinary_and_sloppy_html_is_passed_on_unchanged(markup):
    """Real HTML, tidy or not, is far from every bound: the sanitiser gets it as written
    (the implied ends sloppy HTML relies on close what the parser closes)."""
    padded = markup + "<span>pad</span>" * nesting.MAX_DEPTH  # past the few-tags shortcut
    assert nesting.limit_nesting(padded) == (padded, None)


def test_markdowns_own_output_is_never_limited():
    """The body this file renders at the size limit (every construct, 2 MB) gets no
    html-nesting warning: Markdown's own output is never limited."""
    rendered = render(_mixed_body(200_000))
    assert "html-nesting" not in _codes(rendered)


# --- Sizes in typeset math ----------------------------------------------------------

_SIZES = re.compile(r'(?:width|height|margin-right|margin-left)[:=]"?(-?[\d.]+)em')


def _largest_size(markup: str) -> float:
    """The largest size, either way, that KaTeX's HTML or MathML sets in `markup`."""
    return max((abs(float(value)) for value in _SIZES.findall(markup)), default=0.0)


def test_a_rule_in_an_algorithm_is_capped_like_one_in_math():
    """pseudocode.js typeset its math with KaTeX's defaults: `\\rule{3000em}{3000em}` was
    drawn 3,000 em square. Now the math stage's maxSize applies inside algorithms too."""
    source = (
        "```pseudo-algorithm\n\\begin{algorithm}\n\\caption{Huge}\n\\begin{algorithmic}\n"
        "\\STATE $\\rule{3000em}{3000em}$ and $x_1$\n\\end{algorithmic}\n\\end{algorithm}\n```\n"
    )
    rendered = _timed(source)
    assert 'class="ps-root"' in rendered.html and rendered.warnings == []
    assert _largest_size(rendered.html) == jsengine.KATEX_OPTIONS["maxSize"]


@pytest.mark.parametrize(
    "tex",
    [r"\hspace{-3000em}x", r"\kern-3000em x", r"\mkern-30000mu x", r"\hspace{3000em}x"],
)
def test_spacing_is_capped_both_ways(tex):
    """KaTeX caps sizes from above only: a negative space of 3,000 em moved the text after it
    far out of the note. Every horizontal space is now within ±maxSize em."""
    rendered = _timed(f"Before ${tex}$ after.")
    assert rendered.warnings == []
    assert _largest_size(rendered.html) == jsengine.KATEX_OPTIONS["maxSize"]


def test_ordinary_spacing_is_unchanged():
    """Thin, negative thin and quad spaces come out as KaTeX writes them."""
    html_out = render(r"$a\!b\,c\quad d$").html
    assert "margin-right:-0.1667em" in html_out and "margin-right:1em" in html_out


# --- Cut short by time, or refused by the input --------------------------------------------------


def test_a_render_that_runs_out_of_time_is_marked_incomplete():
    """Time running out (a tiny budget) leaves a render that is not final: flagged, with a
    warning that says it is rendered again; the same source with time is complete."""
    source = "**bold** $x_1^{2}$ `code`\n\n$$\\int_0^1 f$$\n"
    short = render(source, RenderContext(time_scale=1e-9))
    assert short.complete is False
    assert short.warnings[0].code == "render-incomplete"
    full = render(source)
    assert full.complete is True and "render-incomplete" not in _codes(full)


def test_input_refused_by_a_bound_is_a_final_render():
    """Input refused by its size, its nesting or its number of constructs is final: the
    warning says what was refused, and nothing is marked incomplete."""
    deep = "".join("    " * level + "- x\n" for level in range(limits.MAX_NESTING + 4))
    many = "`c` " * (limits.MAX_ITEMS + 10)
    for source in (deep, many):
        rendered = _timed(source)
        assert rendered.complete is True, _codes(rendered)
    refused = render("x" * 200, RenderContext(max_source_bytes=100))
    assert refused.complete is True and _codes(refused) == {"body-too-large"}
