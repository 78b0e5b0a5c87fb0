"""The Markdown body (markup.render): growing hostile bodies stay within the render's bounds."""

from __future__ import annotations

import pytest
from hypothesis import given

from scidraft.bounds import INPUT_PATHS, MB
from scidraft.markup import render

from .harness import HOSTILE, assert_within, cases, measure, repeated, sizes, traced

INPUT_PATH = "markdown-body"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 2 * MB

CASES = {
    "nested lists": lambda n: repeated("- ", n, tail="x\n"),
    "nested quotes": lambda n: repeated("> ", n, tail="x\n"),
    "indented lists": lambda n: "".join("    " * i + "- x\n" for i in range(int(n**0.5))),
    "emphasis": lambda n: repeated("*a ", n // 2) + "b" + "*" * (n // 6),
    "stars": lambda n: "*" * n,
    "underscores and stars": lambda n: repeated("_*", n),
    "brackets": lambda n: "[" * n,
    "nested images": lambda n: "![" * (n // 6) + "x" + "](u)" * (n // 6),
    "html nesting": lambda n: repeated("<div>", n),
    "backtick runs": lambda n: repeated("`` ` ", n),
    "wide table": lambda n: repeated("|a", n // 2, tail="\n") + repeated("|-", n // 2, tail="\n"),
    "formulas": lambda n: "".join(f"$x_{{{i}}}$ " for i in range(n // 10)),
    "display math": lambda n: "".join(f"$$\\sum_{{k={i}}} k$$\n\n" for i in range(n // 20)),
    "unclosed environments": lambda n: repeated(":::lemma[T]{#l}\n", n),
    "text commands": lambda n: "\\textbf{" * (n // 9) + "x",
    "references": lambda n: repeated("\\ref{a} \\eqref{b} \\cite{c} ", n),
    "footnotes": lambda n: repeated("x[^a] ", n // 2) + "\n\n" + repeated("[^a]: y\n", n // 2),
    "attributes": lambda n: repeated("# h {#id .c key=v}\n", n),
    "links": lambda n: repeated("[a](http://b.c/d 'e') <http://f.g> http://h.i/ ", n),
    "entities": lambda n: repeated("&amp;&#x1F600;&nbsp;", n),
    "algorithm": lambda n: "```pseudocode\n" + repeated("\\STATE x\n", n) + "```\n",
    "closed shortcodes": lambda n: repeated('{{< gallery a="b" >}}\n', n),
}


@pytest.mark.slow
@HOSTILE
@given(case=cases(CASES), size=sizes(LARGEST // 16, smallest=1024))
def test_growing_hostile_bodies_render_within_the_bounds(case, size):
    """Every hostile shape, at sizes doubling up to 128 KB, renders within the path's CPU
    and memory bounds."""
    body = CASES[case](size)
    measured = measure(render, body)
    assert measured.result.html
    assert_within(PATH, measured, f"{case} at {len(body):,} characters")


# The shapes that cost the most per byte, at the body limit.
HEAVIEST = ["html nesting", "nested lists", "emphasis", "formulas", "algorithm"]


@pytest.mark.slow
@pytest.mark.parametrize("case", HEAVIEST)
def test_the_largest_hostile_bodies_render_within_the_bounds(case):
    """The costliest shapes at the body limit (2 MB) render within the CPU and memory bounds."""
    body = CASES[case](LARGEST)[:LARGEST]
    measured = measure(render, body)
    assert measured.result.html
    assert_within(PATH, measured, f"{case} at {len(body):,} characters")


def test_python_memory_of_a_hostile_body_stays_within_the_bound():
    """tracemalloc's peak for nested lists at 256 KB (the costliest in Python's memory per
    byte, 290 MB at 2 MB) stays within an eighth of the memory bound."""
    assert traced(render, CASES["nested lists"](LARGEST // 8)) <= PATH.memory_mb / 8


def test_a_body_over_the_limit_is_refused_at_once():
    """One byte past the size bound costs a size check, not a render."""
    measured = measure(render, "*" * (LARGEST + 1))
    assert [warning.code for warning in measured.result.warnings] == ["body-too-large"]
    assert_within(PATH, measured, "a body over the limit", cpu=0.1)


@pytest.mark.slow
def test_a_table_with_half_a_million_columns_renders_within_the_bounds():
    """A header and delimiter row of 524,287 cells each (2 MB): the table rule checks the
    budget every few thousand cells (it read both rows whole: 5.3 to 6.2 s of CPU, past the
    path's 5 s)."""
    body = CASES["wide table"](LARGEST)
    assert_within(PATH, measure(render, body), "a 524,287-column table")
