"""A .bib file's text: growing hostile files are read within their CPU budget (parse_seconds)
and the path's memory bound, sizes measured after @string expansion."""

from __future__ import annotations

import pytest
from hypothesis import given

from bibliography.parsing import parse_bibtex, parse_seconds
from scidraft.bounds import INPUT_PATHS, MB

from .harness import HOSTILE, assert_within, cases, measure, repeated, sizes, traced

INPUT_PATH = "bib-text"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 512 * 1024
# Past the budget, the clock is read a millisecond late and the result is put together.
GRACE = 0.5

CASES = {
    "unclosed entries": lambda n: repeated("@misc{k, title = {x\n", n),
    "unclosed parentheses": lambda n: repeated("@misc(k, title = {x\n", n),
    "nested braces": lambda n: "@misc{k, title = " + "{" * (n // 2) + "}" * (n // 2) + "}\n",
    "brace groups": lambda n: repeated("{\\'e}", n, "@misc{k, title = {", "}}\n"),
    "quoted braces": lambda n: repeated("{}", n, '@misc{k, title = "', 'x"}\n'),
    "authors": lambda n: repeated("Name, First and ", n, "@misc{k, author = {", "X}}\n"),
    "entries": lambda n: "".join(f"@misc{{k{i}, title={{T{i}}}}}\n" for i in range(n // 30)),
    "reopened inside groups": lambda n: repeated("{\n@misc(j, }", n, '@misc(k, t = "'),
    "concatenation": lambda n: repeated('"x" # ', n, "@misc{k, title = ", '"y"}\n'),
    "string definitions": lambda n: "".join(f'@string{{s{i} = "v{i}"}}\n' for i in range(n // 24)),
    "comment lines": lambda n: repeated("% {{{{ @misc{\n", n),
    "stray text": lambda n: repeated("} x = y {\n", n),
}


def _within_budget(text: str, what: str):
    measured = measure(parse_bibtex, text)
    assert_within(PATH, measured, what, cpu=parse_seconds(text) + GRACE)
    return measured.result


@pytest.mark.slow
@HOSTILE
@given(case=cases(CASES), size=sizes(LARGEST, smallest=1024))
def test_growing_hostile_files_are_read_within_their_budget(case, size):
    """Each shape at sizes doubling to 512 KB: read, refused entry by entry or stopped, in
    at most parse_seconds(text) of CPU."""
    result = _within_budget(CASES[case](size), f"{case} at {size:,} characters")
    assert result.entries or result.problems or result.stopped or case == "comment lines"


@pytest.mark.slow
@pytest.mark.parametrize("case", ["unclosed entries", "authors", "entries"])
def test_the_largest_hostile_files_are_read_within_their_budget(case):
    """At 2 MB (the upload limit is 10 MB), within the budget and the memory bound."""
    _within_budget(CASES[case](2 * MB), f"{case} at 2 MB")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["authors", "entries", "brace groups"])
def test_python_memory_of_hostile_files_stays_within_a_share_of_the_bound(case):
    """tracemalloc's peak for 256 KB of the shapes that allocate most per byte stays within a
    fortieth of the bound, the file limit's share (10 MB is forty times 256 KB)."""
    assert traced(parse_bibtex, CASES[case](256 * 1024)) <= PATH.memory_mb / 40


def _doubling(times: int) -> str:
    strings = '@string{s0 = "xx"}\n'
    strings += "".join(f"@string{{s{i + 1} = s{i} # s{i}}}\n" for i in range(times))
    return strings + f"@misc{{k, title = s{times}}}\n@misc{{good, title = {{Kept}}}}\n"


def test_string_macro_doubling_is_bounded_after_expansion():
    """A 600-byte file whose @string macros double 24 times (32 M characters): the file is
    refused at the first @string past the bound, with its line and nothing kept, within a
    small file's budget and memory."""
    text = _doubling(24)
    result = _within_budget(text, "@string doubling 24 times")
    assert result.stopped and result.entries == []
    assert result.problems[-1].line > 0 and "expands to more than" in result.problems[-1].reason
    assert measure(parse_bibtex, text).memory_mb <= 16
