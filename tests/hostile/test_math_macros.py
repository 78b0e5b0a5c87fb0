"""Math macros (the site's and a note's preamble): growing hostile preambles are read, and
refused past their bounds, within the path's bounds."""

from __future__ import annotations

import pytest
from hypothesis import given

from scidraft.bounds import INPUT_PATHS
from scidraft.markup import mathmacros
from scidraft.markup.preambles import preamble_macros

from .harness import HOSTILE, assert_within, cases, measure, sizes

INPUT_PATH = "math-macros"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 4 * mathmacros.MAX_PREAMBLE_CHARS

CASES = {
    "many definitions": lambda n: "".join(
        f"\\newcommand{{\\m{i}}}{{x_{i}}}\n" for i in range(n // 24)
    ),
    "definitions KaTeX refuses": lambda n: "".join(
        f"\\newcommand{{\\b{i}}}{{\\frac{{x}}\n" for i in range(n // 24)
    ),
    "doubling": lambda n: (
        "\\def\\a{xx}"
        + "".join(
            f"\\def\\a{'b' * (i + 1)}{{\\a{'b' * i}\\a{'b' * i}}}" for i in range(min(200, n // 40))
        )
    ),
    "arguments": lambda n: "".join(
        f"\\newcommand{{\\c{i}}}[9][x]{{#1#9}}\n" for i in range(n // 34)
    ),
    "operators": lambda n: "".join(
        f"\\DeclareMathOperator*{{\\o{i}}}{{op}}\n" for i in range(n // 36)
    ),
    "not definitions": lambda n: "x" * n,
}


@pytest.mark.slow
@HOSTILE
@given(case=cases(CASES), size=sizes(LARGEST, smallest=128))
def test_growing_hostile_preambles_are_read_within_the_bounds(case, size):
    """A site and a note preamble of the same hostile shape: read (what fits), refused with
    warnings (what does not), within the CPU and memory bounds."""
    tex = CASES[case](size)
    preambles = (mathmacros.Preamble("the site's math macros", tex),
                 mathmacros.Preamble("the note's math macros", tex))  # fmt: skip
    warnings = []
    measured = measure(preamble_macros, preambles, warnings)
    assert len(measured.result.names()) <= mathmacros.MAX_DEFINITIONS
    assert measured.result.size <= mathmacros.MAX_DEFINITIONS_CHARS
    assert_within(PATH, measured, f"{case} at {len(tex):,} characters")
