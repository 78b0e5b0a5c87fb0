"""CSL style names: hostile names resolve to a shipped style (or the default) within the
path's bounds, and never reach a file outside the styles."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibliography import csl
from scidraft.bounds import INPUT_PATHS

from .harness import HOSTILE, assert_within, cases, measure, sizes, traced

INPUT_PATH = "csl-style-name"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 64 * 1024

CASES = {
    "long name": lambda n: "a" * n,
    "path traversal": lambda n: "../" * (n // 3) + "etc/passwd",
    "dependent traversal": lambda n: "dependent/" + "../" * (n // 3) + "apa",
    "absolute path": lambda n: "/" + "x/" * (n // 2) + "apa",
    "nul and controls": lambda n: "apa\x00" + "\x01\n" * (n // 2),
    "other scripts": lambda n: "стиль" * (n // 5),
    "suffixes": lambda n: "apa" + ".csl" * (n // 4),
}


@pytest.mark.slow
@HOSTILE
@given(case=cases(CASES), size=sizes(LARGEST, smallest=16))
def test_hostile_names_resolve_within_the_bounds(case, size):
    """Any name resolves to a shipped style or the default, within the bounds."""
    name = CASES[case](size)
    measured = measure(csl.style_info, name)
    assert measured.result.name in (csl.DEFAULT_STYLE, "apa")
    assert_within(PATH, measured, f"{case} at {len(name):,} characters")


@given(names=st.lists(st.text(min_size=1, max_size=40), min_size=600, max_size=600))
@settings(HOSTILE, max_examples=3)
def test_many_distinct_names_keep_a_bounded_cache(names):
    """600 distinct names (more than the cache keeps): Python's memory stays small and the
    cache holds at most its 512 descriptions."""
    assert traced(lambda: [csl.style_info(name) for name in names]) <= PATH.memory_mb
    assert csl.style_info.cache_info().currsize <= 512


@pytest.mark.slow
def test_many_distinct_styles_in_one_render_stay_within_the_render_bounds():
    """A body with a reference list in each of twelve styles (a citation context of
    50–75 MB each) renders within the body's bounds."""
    from bibliography.formatting import ParsedBibliography
    from bibliography.parsing import parse_bibtex
    from scidraft.markup import RenderContext, render

    parsed = parse_bibtex("@article{k, author={Lovelace, Ada}, title={Notes}, year=1843}")
    bibliography = ParsedBibliography("refs.bib", parsed.entries)
    styles = sorted(path.stem for path in csl.STYLE_DIR.glob("*.csl"))[:12]
    body = "\\cite{k}\n\n" + "".join(
        f'{{{{< references bib="refs.bib" style="{style}" >}}}}\n\n' for style in styles
    )
    context = RenderContext(resolve_bibliography=lambda name: bibliography)
    measured = measure(render, body, context)
    assert_within(INPUT_PATHS["markdown-body"], measured, "twelve styles in one render")
