"""Shortcodes and their arguments: growing hostile shortcodes are parsed in time linear in
the body, within the path's bounds."""

from __future__ import annotations

import pytest
from hypothesis import given

from scidraft.bounds import INPUT_PATHS, MB
from scidraft.markup import shortcodes

from .harness import HOSTILE, assert_within, cases, linear, measure, repeated, sizes

INPUT_PATH = "shortcode-arguments"
PATH = INPUT_PATHS[INPUT_PATH]
LARGEST = 2 * MB

CASES = {
    "argument flood": lambda n: repeated("a=b ", n, "{{< gallery ", " >}}"),
    "quoted arguments": lambda n: repeated('k="v\\" w" ', n, "{{< gallery ", " >}}"),
    "positional arguments": lambda n: repeated("`x` 'y' z ", n, "{{% entry-a-to-z ", " %}}"),
    "unclosed quote": lambda n: repeated('k="', n, "{{< gallery ", " >}}"),
    "many shortcodes": lambda n: repeated('{{< promotion-textual title="t" >}}\n', n),
    "paired": lambda n: repeated("{{< preview >}}x{{< /preview >}}", n),
    "closing only": lambda n: repeated("{{< /gallery >}}", n),
}


@pytest.mark.slow
@HOSTILE
@given(case=cases(CASES), size=sizes(LARGEST // 8, smallest=1024))
def test_growing_hostile_shortcodes_are_parsed_in_linear_time(case, size):
    """Each shape at sizes doubling to 256 KB: within its share of the bound at 2 MB."""
    text = CASES[case](size)
    measured = measure(shortcodes.parse, text)
    assert_within(PATH, measured, f"{case} at {len(text):,} characters",
                  cpu=linear(PATH, len(text), LARGEST))  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("case", ["argument flood", "quoted arguments", "many shortcodes"])
def test_the_largest_hostile_shortcodes_are_parsed_within_the_bounds(case):
    """At the body limit (2 MB), within the path's CPU and memory bounds."""
    text = CASES[case](LARGEST)
    assert_within(PATH, measure(shortcodes.parse, text), f"{case} at 2 MB")


def test_unclosed_openers_are_parsed_in_linear_time():
    """`{{< ` never closed: each opener is searched for its end to the end of the text
    (64 KB took 3 s, 256 KB 53 s; render() calls this before its budget can stop it)."""
    text = repeated("{{< ", 32 * 1024)
    measured = measure(shortcodes.parse, text)
    assert_within(PATH, measured, "unclosed openers at 32 KB", cpu=linear(PATH, len(text), LARGEST))
