"""TeX in formulas (KaTeX in V8): growing hostile formulas are typeset or refused within the
path's bounds, V8's threads counted."""

from __future__ import annotations

import pytest
from hypothesis import given

from scidraft.bounds import INPUT_PATHS, KB
from scidraft.markup import jsengine

from .harness import HOSTILE, assert_within, cases, fresh, measure, repeated, sizes

INPUT_PATH = "tex-math"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 32 * KB


def _doubling(n: int) -> str:
    names = [f"\\m{chr(97 + i)}" for i in range(min(24, max(2, n.bit_length())))]
    definitions = [f"\\def{names[0]}{{xx}}"]
    definitions += [f"\\def{b}{{{a}{a}}}" for a, b in zip(names, names[1:], strict=False)]
    return "".join(definitions) + names[-1]


CASES = {
    "macro doubling": _doubling,
    "braces": lambda n: "{" * (n // 2) + "x" + "}" * (n // 2),
    "fractions": lambda n: "\\frac{1}{" * (n // 9) + "x" + "}" * (n // 9),
    "roots": lambda n: "\\sqrt{" * (n // 7) + "x" + "}" * (n // 7),
    "matrix cells": lambda n: repeated("a&", n, "\\begin{matrix}", "\\end{matrix}"),
    "matrix rows": lambda n: repeated("a\\\\", n, "\\begin{matrix}", "\\end{matrix}"),
    "long sum": lambda n: repeated("x+", n),
    "scripts": lambda n: repeated("x^{y_{z}}", n),
    "colours": lambda n: repeated("\\color{red}{x}", n),
    "stretchy": lambda n: repeated("\\left(\\overbrace{x}\\right)", n),
    "recursive def": lambda n: "\\def\\r{\\r\\r}" + "\\r" * max(1, n // 100),
}


@pytest.mark.slow
@HOSTILE
@given(case=cases(CASES), size=sizes(LARGEST, smallest=64))
def test_growing_hostile_formulas_are_typeset_or_refused_within_the_bounds(case, size):
    """KaTeX answers (HTML or its error) within the CPU bound of one call, V8 included."""
    tex = CASES[case](size)
    measured = measure(jsengine.render_tex, tex, display=True, refusals=(jsengine.JSError,))
    assert measured.result or measured.refused
    assert_within(PATH, measured, f"{case} at {len(tex):,} characters")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["matrix cells", "long sum", "stretchy"])
def test_the_largest_formulas_grow_a_fresh_process_within_the_bound(case):
    """In a new process, V8's heap and threads included, formulas of 256 KB (V8 reaches its
    heap limit on the matrix) stay within the CPU and memory bounds."""
    measured = fresh(PATH, __name__, case, 8 * LARGEST, warm=64, display=True)
    assert_within(PATH, measured, f"{case} at {8 * LARGEST:,} characters, in a fresh process")
