"""Large input and slow work stay within the size limit and the time budget: bodies over the
limit are refused at once, a body at the limit of ordinary constructs, of one construct or of
one huge code fence renders or degrades in time, a spent budget degrades every stage to text,
warnings and reference lists are capped, and a render cut short by time is marked incomplete
while input refused by a bound is final."""

from __future__ import annotations

import html

import pytest

from scidraft.markup import RenderContext, limits, render

from .hostile_inputs import MB, _codes, _engine_keeps_serving, _mixed_body, _timed  # noqa: F401

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


def test_body_exactly_at_the_limit_renders_in_time():
    """A 2 MB body of ordinary constructs (every byte ASCII) renders, within the time limit;
    if the budget runs out first the note says so and the rest is shown as text."""
    body = _mixed_body(2 * MB)
    assert len(body.encode("utf-8")) == 2 * MB
    rendered = _timed(body)
    assert "body-too-large" not in _codes(rendered)
    assert "Prose with" in rendered.html and len(rendered.text) > MB


def test_one_fence_of_two_megabytes_is_highlighted_until_the_budget_runs_out():
    """Pygments highlights a fence in one call (15 s on 2 MB of Python): it stops with the
    budget, and the fence is shown uncoloured, whole, with a render-limit warning."""
    code = ("x = [1, 'a', f(y)]  # c\n" * (2 * MB // 25))[: 2 * MB - 20].rstrip("\n")
    rendered = _timed(f"```python\n{code}\n```\n")
    assert "render-limit" in _codes(rendered)
    assert 'class="language-python"' in rendered.html and '<span class="n">' not in rendered.html
    assert html.escape(code) in rendered.html


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
