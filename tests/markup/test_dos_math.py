"""Typeset math and algorithms stay bounded: KaTeX's macro expansion and every V8 call are
capped, so `\\def` bombs become math errors, masses of formulas fall back to source in time,
algorithms over the line limit are shown as source, and sizes and spacing in math and
algorithms are kept within KaTeX's maxSize both ways."""

from __future__ import annotations

import re

import pytest

from scidraft.markup import jsengine, render, v8pool

from .hostile_inputs import MB, SECONDS, _codes, _engine_keeps_serving, _timed  # noqa: F401

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


def test_pseudocode_within_the_line_limit_still_renders():
    """A 200-line algorithm is typeset by pseudocode.js as before."""
    lines = "\n".join(f"\\State $x \\gets {n}$" for n in range(200))
    source = (
        "```pseudo-algorithm\n\\begin{algorithm}\n\\caption{Long}\n\\begin{algorithmic}\n"
        f"{lines}\n\\end{{algorithmic}}\n\\end{{algorithm}}\n```\n"
    )
    rendered = _timed(source)
    assert rendered.warnings == [] and 'class="ps-root"' in rendered.html


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
