"""Our reference lists against the theme's: citation-js 0.6.9 in Node (the oracle) on the
example site's .bib files and the demo's, Vancouver, plain text entry by entry.

The goal is 99% identical; every remaining difference is listed below with its reason. The
example site is read from ../shared (skipped when absent); the demo files always run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bibliography.entries import EntryData, plain_text
from bibliography.formatting import format_references
from bibliography.parsing import parse_bibtex
from tests.conftest import EXAMPLE_SITE

from .oracle import oracle, require_node, text_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_BIB = EXAMPLE_SITE / "assets" / "bib"
DEMO_BIB = ROOT / "demo" / "assets" / "bib"

MATH = "math typeset by KaTeX on purpose (citation-js prints its own reading of the TeX)"
COMMAND = "a LaTeX command decoded on purpose (citation-js leaves it raw)"
DELIBERATE = (MATH, COMMAND)
DIFFERENCES = {
    # refs.bib
    "Tian2023-bk": MATH + ": R$^3$ (citation-js: R3)",
    "Wu2023-qb": MATH + r": $\pi$-tuning (citation-js: π-tuning)",
    "Zhang2021-xa": MATH + ": $1/n$ (citation-js: 1/n)",
    "Khot2020-xe": "`number = 05` unquoted: citation-js's grammar reads a bare number as the "
    "integer 5, pybtex keeps the text 05 (a braced {05} reads 05 in both)",
    # survey-refs-02.bib
    "tau3banking": MATH + r": $\tau^3$-Banking (citation-js: τ3-Banking)",
    # demo/assets/bib/foundations.bib
    "Donoho2006-ms": MATH + r": $\ell_1$-Norm (citation-js: \ell₁-Norm, the command left raw)",
    "Nesterov1983-mc": MATH + ": $O(1/k^2)$ (citation-js: O(1/k2))",
    # demo/assets/bib/computing.bib
    "Knuth1984-tb": COMMAND + r": The {\TeX}book (citation-js: The \TeXbook)",
    "Lamport1994-ld": COMMAND + r": {\LaTeX} (citation-js: \LaTeX)",
    "Mittelbach2004-lc": COMMAND + r": The {\LaTeX} Companion (citation-js: The \LaTeX Companion)",
}


def _files() -> list[Path]:
    files = [EXAMPLE_BIB / "refs.bib", EXAMPLE_BIB / "survey-refs-02.bib"]
    return [*files, *sorted(DEMO_BIB.glob("*.bib"))]


def compare(path: Path, style: str = "vancouver") -> tuple[int, dict[str, tuple[str, str]]]:
    """(entries compared, {key: (theirs, ours)} for those that differ)."""
    theirs = oracle(str(path), style)
    assert theirs["broken"] is None, theirs["broken"]
    parsed = parse_bibtex(path.read_text(encoding="utf-8"))
    entries = [EntryData(e.key, e.entry_type, e.fields, e.persons) for e in parsed.entries]
    ours = format_references(entries, style)
    differences = {}
    for entry in entries:
        expected = text_of(theirs["entries"][entry.key])
        got = plain_text(ours.entries[entry.key], ours.math.get(entry.key, ()))
        if expected != got:
            differences[entry.key] = (expected, got)
    return len(entries), differences


@pytest.mark.parametrize("path", _files(), ids=lambda path: path.name)
def test_vancouver_matches_citation_js_entry_by_entry(path):
    """At least 99% of the entries read exactly as the theme prints them; each one that does
    not is a listed, deliberate difference."""
    require_node()
    if not path.is_file():
        pytest.skip(f"{path} is not here (the example site lives in ../shared)")
    compared, differences = compare(path)
    unexplained = {key: pair for key, pair in differences.items() if key not in DIFFERENCES}
    assert not unexplained, "\n".join(
        f"{key}\n  citation-js: {theirs}\n  ours:        {ours}"
        for key, (theirs, ours) in unexplained.items()
    )
    # Only math and raw commands differ on purpose: the rest reads as the theme prints it.
    deliberate = sum(DIFFERENCES[key].startswith(DELIBERATE) for key in differences)
    identical = compared - len(differences)
    assert (identical + deliberate) == compared or identical / compared >= 0.99


def test_ninety_nine_percent_of_the_theme_s_entries_are_identical():
    """The issue's figure: refs.bib and survey-refs-02.bib together, ≥ 99% identical."""
    require_node()
    files = [EXAMPLE_BIB / "refs.bib", EXAMPLE_BIB / "survey-refs-02.bib"]
    if not all(path.is_file() for path in files):
        pytest.skip("the example site's files are not here (../shared)")
    compared = different = 0
    for path in files:
        count, differences = compare(path)
        compared, different = compared + count, different + len(differences)
    assert (compared - different) / compared >= 0.99, f"{compared - different}/{compared}"


def test_every_listed_difference_still_happens():
    """A listed difference that no longer occurs is removed from the list."""
    require_node()
    if not (EXAMPLE_BIB / "refs.bib").is_file():
        pytest.skip("the example site's files are not here (../shared)")
    seen = set()
    for path in _files():
        seen |= set(compare(path)[1])
    assert seen == set(DIFFERENCES)
