"""The theme's real example site renders: every note, with only the expected warnings."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bibliography.formatting import ParsedBibliography
from bibliography.parsing import parse_bibtex
from hugosite.reading import split_front_matter
from scidraft.markup import RenderContext, render
from tests.conftest import EXAMPLE_SITE

# The reference site lives in ../shared beside the checkout (CI has it); elsewhere, skip.
pytestmark = pytest.mark.skipif(
    not EXAMPLE_SITE.is_dir(), reason="../shared/reference/scidraft-exampleSite is not beside"
)

NOTES = sorted((EXAMPLE_SITE / "content" / "notes").glob("*.md")) if EXAMPLE_SITE.is_dir() else []
# The theme names this file but does not ship it (docs/theme.md#bibliography-files).
ABSENT_BIB = "bib/survey-refs-01.bib"


@pytest.fixture(scope="module")
def context() -> RenderContext:
    bibliographies = {
        path.name: ParsedBibliography(f"bib/{path.name}", parse_bibtex(path.read_text()).entries)
        for path in (EXAMPLE_SITE / "assets" / "bib").glob("*.bib")
    }

    def resolve_data(name: str):
        path = EXAMPLE_SITE / "data" / f"{name}.yaml"
        return yaml.safe_load(path.read_text()) if path.is_file() else None

    return RenderContext(
        resolve_bibliography=lambda name: bibliographies.get(name.rsplit("/", 1)[-1]),
        resolve_data=resolve_data,
    )


def body(path: Path) -> str:
    return split_front_matter(path.read_text(encoding="utf-8")).body


def test_the_example_site_has_seventy_notes():
    """The reference site is complete (70 notes), so the checks below cover all of it."""
    if not EXAMPLE_SITE.is_dir():
        pytest.skip("../shared is not beside the checkout")
    assert len(NOTES) == 70


@pytest.mark.parametrize("path", NOTES, ids=lambda path: path.stem)
def test_every_example_note_renders_without_unexpected_warnings(path, context):
    """No exception; the only warnings are for citations of the one missing bibliography."""
    rendered = render(body(path), context)
    assert rendered.html.strip()
    unexpected = [
        warning
        for warning in rendered.warnings
        if not (warning.code == "bib-missing" and ABSENT_BIB in warning.message)
    ]
    assert unexpected == []


def test_multiple_bibliography_note_numbers_each_list_from_one(context):
    """demo-note-paper-with-multiple-references: two lists, each numbered from 1."""
    rendered = render(
        body(EXAMPLE_SITE / "content/notes/demo-note-paper-with-multiple-references.md"), context
    )
    first, second = rendered.citations
    assert (first.bib, second.bib) == ([ABSENT_BIB], ["bib/refs.bib"])
    assert first.keys and second.keys and second.missing == []
    assert rendered.html.count('<span class="ref-num">[1]</span>') == 2
    assert first.title == "References for the first part"
    assert second.title == "References for the second part"


@pytest.mark.parametrize(
    ("stem", "flag"),
    [
        ("demo-note-mermaid-gantt-training", "has_mermaid"),
        ("demo-note-pseudocode-power-iteration", "has_algorithm"),
        ("demo-note-softmax-python", "has_code"),
        ("demo-note-lemma-softmax-shift", "has_math"),
        ("demo-note-with-references", "has_citations"),
    ],
)
def test_flags_match_the_content(stem, flag, context):
    """Each note's flags say what it contains (the page loads Mermaid only when needed)."""
    assert getattr(render(body(EXAMPLE_SITE / f"content/notes/{stem}.md"), context), flag)


def test_survey_note_keeps_tex_intact_and_numbers_its_algorithm(context):
    """The survey note mixes a cited table, a diagram, an algorithm and \\gt/\\leq math."""
    rendered = render(
        body(EXAMPLE_SITE / "content/notes/demo-note-survey-chain-of-thought.md"), context
    )
    assert "Algorithm 1" in rendered.html
    assert '<pre class="mermaid" tabindex="0">' in rendered.html
    assert rendered.html.count('class="katex"') > 5
    assert "\\cite{" not in rendered.html.split('class="references"')[0]
