"""bibliography.formatting: every style's HTML, byte for byte, and what "cold" empties.

golden/expected.json holds the HTML and labels the styles gave for golden/sample.bib (an entry
for every layout branch and the LaTeX the styles decode) and for the demo bibliographies, made
by the styles as they were before they were made faster (issue #4). Any change to a style's
output shows up here; if a change is meant, regenerate the file and review its diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bibliography.display import _decoded, latex_to_text
from bibliography.formatting import (
    EntryData,
    _format_cached,
    format_cache_clear,
    format_entries,
    labels_for,
)
from bibliography.parsing import parse_bibtex
from bibliography.styles import STYLES, get_style, parsed_person
from bibliography.styles.decoding import decode_latex

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))


def entry_data(name: str) -> list[EntryData]:
    entries = parse_bibtex((ROOT / name).read_text(encoding="utf-8")).entries
    return [EntryData(e.key, e.entry_type, e.fields, e.persons) for e in entries]


def test_golden_files_cover_the_sample_and_the_demo():
    """The golden file covers the sample and both demo bibliographies, in every style."""
    assert set(EXPECTED) == {
        "tests/bibliography/golden/sample.bib",
        "demo/assets/bib/computing.bib",
        "demo/assets/bib/foundations.bib",
    }
    for name, by_style in EXPECTED.items():
        assert set(by_style) == set(STYLES), name
        assert len(by_style["vancouver"]["html"]) == len(entry_data(name)), name


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("name", sorted(EXPECTED), ids=lambda name: Path(name).name)
def test_html_and_labels_as_before(name, style):
    """Every entry formats to exactly the HTML (and label) the styles gave before, cold."""
    data = entry_data(name)
    format_cache_clear()
    assert format_entries(data, style) == EXPECTED[name][style]["html"]
    assert labels_for(data, style) == EXPECTED[name][style]["labels"]


@pytest.mark.parametrize("style", list(STYLES))
def test_warm_output_equals_cold_output(style):
    """Remembered steps (names, decoded LaTeX) give the same HTML as formatting from nothing:
    entries formatted one at a time, with every other entry's steps remembered."""
    name = "tests/bibliography/golden/sample.bib"
    data = entry_data(name)
    format_cache_clear()
    format_entries(list(reversed(data)), style)  # warm every memory
    _format_cached.cache_clear()  # but not the finished entries
    for one in data:
        assert format_entries([one], style) == {one.key: EXPECTED[name][style]["html"][one.key]}


def test_format_cache_clear_empties_every_memory():
    """Cold means cold: formatted entries, decoded LaTeX, parsed persons, display decoding and
    the style objects (with their templates) are all forgotten."""
    data = entry_data("tests/bibliography/golden/sample.bib")
    format_entries(data, "plain")
    labels_for(data, "author-year")
    latex_to_text(r"Sch{\"o}lkopf")
    style = get_style("plain")
    assert _format_cached.cache_info().currsize > 0
    assert decode_latex.cache_info().currsize > 0
    assert parsed_person.cache_info().currsize > 0

    format_cache_clear()

    assert _format_cached.cache_info().currsize == 0
    assert decode_latex.cache_info().currsize == 0
    assert parsed_person.cache_info().currsize == 0
    assert _decoded.cache_info().currsize == 0
    assert get_style("plain") is not style


def test_numbered_styles_label_without_building_entries():
    """labels_for gives {} for numbered styles and parses no name to get there."""
    data = entry_data("tests/bibliography/golden/sample.bib")
    format_cache_clear()
    for style in ("vancouver", "plain", "unsrt", None):
        assert labels_for(data, style) == {}
    assert parsed_person.cache_info().currsize == 0
